package tracing

import (
	"context"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"go.opentelemetry.io/otel/trace"
)

// A server with no trace exporter pays nothing for its spans: starting
// and ending one allocates nothing (issue 34: what is off costs nothing).
func TestSpansCostNothingWhenTracingIsOff(t *testing.T) {
	tr := NewTracer(nil, false)
	ctx := context.Background()
	req := llm.Request{Model: "m"}
	call := session.ToolCall{ID: "c1", Name: "tool"}
	for name, start := range map[string]func() trace.Span{
		"run": func() trace.Span {
			_, span := tr.StartRun(ctx, trace.SpanContext{}, "agent", "s1", "prompt")
			return span
		},
		"chat": func() trace.Span {
			_, span := tr.StartChat(ctx, agentfile.FlavorOpenAIv1, "http://127.0.0.1:1/v1", "s1", req)
			return span
		},
		"tool": func() trace.Span {
			_, span := tr.StartTool(ctx, call, "s1")
			return span
		},
		"compaction": func() trace.Span {
			_, span := tr.StartCompaction(ctx, "s1", "threshold", 100)
			return span
		},
	} {
		if n := testing.AllocsPerRun(100, func() { start().End() }); n != 0 {
			t.Errorf("%s span with tracing off: %.0f allocations, want none", name, n)
		}
	}
}
