package tracing_test

import (
	"context"
	"os"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tracing"
	"github.com/agents-os/agents/backend/internal/tracing/otlptest"
)

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// Without an OTLP endpoint, or when the standard variables turn the SDK
// or the exporter off, nothing is recorded, exported or read from
// requests.
func TestTracingIsOffUnlessAnEndpointIsSet(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]map[string]string{
		"no variables":   {},
		"empty endpoint": {"OTEL_EXPORTER_OTLP_ENDPOINT": " "},
		"sdk disabled":   {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "TRUE"},
		"exporter none":  {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces", "OTEL_TRACES_EXPORTER": "none"},
		"only a service": {"OTEL_SERVICE_NAME": "mine", "OTEL_TRACES_SAMPLER": "always_on"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := tracing.FromEnv(context.Background(), lookup(env), "test", nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Enabled() || s.Propagator != nil {
				t.Errorf("enabled %v, propagator %v: want off", s.Enabled(), s.Propagator)
			}
			_, span := s.Tracer.StartRun(context.Background(), trace.SpanContext{}, "boss", "s1", "message")
			if span.IsRecording() || span.SpanContext().IsValid() {
				t.Errorf("a run's span records (%v) or has a context (%v)", span.IsRecording(), span.SpanContext())
			}
			span.End()
			if err := s.Shutdown(context.Background()); err != nil {
				t.Errorf("shutdown: %v", err)
			}
		})
	}
}

// Either endpoint variable turns tracing on.
func TestEitherEndpointTurnsTracingOn(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		s, err := tracing.FromEnv(context.Background(), lookup(map[string]string{k: "http://127.0.0.1:1"}), "test", nil)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if !s.Enabled() || s.Propagator == nil {
			t.Errorf("%s set: enabled %v, propagator %v, want on", k, s.Enabled(), s.Propagator)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Errorf("%s: shutdown with nothing to export: %v", k, err)
		}
	}
}

// An exporter or protocol the server cannot speak is refused with the
// variable's name, not ignored.
func TestUnsupportedExporterOrProtocolIsRefused(t *testing.T) {
	t.Parallel()
	for _, env := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
	} {
		if s, err := tracing.FromEnv(context.Background(), lookup(env), "test", nil); err == nil {
			_ = s.Shutdown(context.Background())
			t.Errorf("%v: accepted", env)
		}
	}
}

// Configured by the environment alone, the spans reach an OTLP/HTTP
// receiver when the setup shuts down (long before the batch's delay),
// with the default service name and the environment's resource
// attributes.
func TestSpansReachTheOTLPReceiverAtShutdown(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL())
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
	s, err := tracing.FromEnv(context.Background(), os.LookupEnv, "1.2.3", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, run := s.Tracer.StartRun(context.Background(), trace.SpanContext{}, "boss", "s1", "message")
	_, chat := s.Tracer.StartChat(ctx, agentfile.FlavorMistralV1, "https://api.mistral.ai/v1", "s1", llm.Request{Model: "m1"})
	s.Tracer.EndChat(chat, llm.Response{Model: "m1-2025", FinishReason: "stop", Usage: llm.Usage{PromptTokens: 5, CompletionTokens: 3}}, nil, nil)
	_, tool := s.Tracer.StartTool(ctx, session.ToolCall{ID: "call_1", Name: "bash_echo"}, "s1")
	s.Tracer.EndTool(tool, session.ToolResult{CallID: "call_1", Status: session.ResultOK}, false)
	run.End()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	got := map[string]otlptest.Span{}
	for _, sp := range rcv.Spans() {
		got[sp.Name] = sp
	}
	if len(got) != 3 {
		t.Fatalf("received %v, want the run, the chat and the tool call", rcv.Spans())
	}
	r, c, tl := got["invoke_agent boss"], got["chat m1"], got["execute_tool bash_echo"]
	if c.ParentSpanID != r.SpanID || tl.ParentSpanID != r.SpanID || c.TraceID != r.TraceID || r.ParentSpanID != "" {
		t.Errorf("run %s/%s (parent %q), chat under %s, tool under %s: want both under the root run", r.TraceID, r.SpanID, r.ParentSpanID, c.ParentSpanID, tl.ParentSpanID)
	}
	for k, want := range map[string]string{
		"gen_ai.operation.name":      "chat",
		"gen_ai.provider.name":       "mistral_ai",
		"gen_ai.request.model":       "m1",
		"gen_ai.response.model":      "m1-2025",
		"gen_ai.usage.input_tokens":  "5",
		"gen_ai.usage.output_tokens": "3",
		"gen_ai.conversation.id":     "s1",
	} {
		if c.Attributes[k] != want {
			t.Errorf("chat %s = %q, want %q", k, c.Attributes[k], want)
		}
	}
	if tl.Attributes["gen_ai.tool.call.id"] != "call_1" || tl.Attributes["gen_ai.tool.name"] != "bash_echo" {
		t.Errorf("tool attributes = %v", tl.Attributes)
	}
	for k, want := range map[string]string{"service.name": "agents", "service.version": "1.2.3", "deployment.environment.name": "test"} {
		if r.Resource[k] != want {
			t.Errorf("resource %s = %q, want %q", k, r.Resource[k], want)
		}
	}
}

// OTEL_SERVICE_NAME names the service, and the traces endpoint is used as
// it is given.
func TestServiceNameAndTracesEndpointFromTheEnvironment(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL()+"/v1/traces")
	t.Setenv("OTEL_SERVICE_NAME", "agents-eu")
	s, err := tracing.FromEnv(context.Background(), os.LookupEnv, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, run := s.Tracer.StartRun(context.Background(), trace.SpanContext{}, "boss", "s1", "message")
	run.End()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	spans := rcv.Spans()
	if len(spans) != 1 || spans[0].Resource["service.name"] != "agents-eu" {
		t.Errorf("received %v, want one span of service agents-eu", spans)
	}
}

// Every flavor of model API names its provider as the conventions do.
func TestProviderOfEveryFlavor(t *testing.T) {
	t.Parallel()
	want := map[agentfile.Flavor]string{
		agentfile.FlavorOpenAIv1:  "openai",
		agentfile.FlavorMistralV1: "mistral_ai",
		agentfile.FlavorClaudeV1:  "anthropic",
		agentfile.FlavorKimiV1:    "moonshot_ai",
	}
	for _, f := range agentfile.Flavors() {
		if got := tracing.Provider(f); got != want[f] {
			t.Errorf("Provider(%s) = %q, want %q", f, got, want[f])
		}
	}
}
