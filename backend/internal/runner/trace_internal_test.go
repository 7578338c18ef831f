package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tracing"
)

// The lines a session logs during a traced run carry the run's trace and
// span ids; outside a run, and when tracing is off, they carry none.
func TestLogLinesOfATracedRunCarryItsTraceID(t *testing.T) {
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	defer func() { _ = provider.Shutdown(context.Background()) }()
	for _, tc := range []struct {
		name   string
		tracer *tracing.Tracer
		run    bool
		want   bool
	}{
		{"traced run", tracing.NewTracer(provider, false), true, true},
		{"no run", tracing.NewTracer(provider, false), false, false},
		{"tracing off", tracing.NewTracer(nil, false), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			a := &actor{r: &Runner{log: slog.New(slog.NewJSONHandler(&buf, nil)), tracer: tc.tracer}, id: "s1",
				st: &state{meta: session.Meta{ID: "s1", Agent: "boss"}}}
			if tc.run {
				_, s := a.startRunSpan(context.Background(), agentsv1.RunTrigger_RUN_TRIGGER_MESSAGE)
				defer s.End()
				a.run = &run{span: s}
			}
			a.log().Warn("something", "session", a.id)
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("log line %q: %v", buf.String(), err)
			}
			traceID, hasTrace := line["trace_id"]
			_, hasSpan := line["span_id"]
			if hasTrace != tc.want || hasSpan != tc.want {
				t.Fatalf("log line %s: trace and span ids present %v, %v; want %v", buf.String(), hasTrace, hasSpan, tc.want)
			}
			if tc.want && traceID != a.run.span.SpanContext().TraceID().String() {
				t.Errorf("trace_id = %v, want the run's %s", traceID, a.run.span.SpanContext().TraceID())
			}
		})
	}
}
