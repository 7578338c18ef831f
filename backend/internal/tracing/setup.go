// Package tracing records the kernel's runs as OpenTelemetry traces that
// follow the GenAI semantic conventions: one invoke_agent span per run,
// a chat span per model call and an execute_tool span per tool call under
// it. Tracing is off, with a no-op tracer and no exporter, unless an OTLP
// endpoint is configured in the standard OTEL_* variables; the SDK and
// the OTLP/HTTP exporter read the other variables themselves.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ServiceName is the service.name of the traces unless OTEL_SERVICE_NAME
// or OTEL_RESOURCE_ATTRIBUTES says otherwise.
const ServiceName = "agents"

// The variables that decide whether traces are recorded at all.
const (
	envEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envDisabled       = "OTEL_SDK_DISABLED"
	envExporter       = "OTEL_TRACES_EXPORTER"
	envProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	// envCapture opts in to recording message contents.
	envCapture = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)

// Setup is the tracing of one process: the tracer the runner records
// with, the propagator that reads a request's traceparent, and the
// provider that exports the spans, to be shut down at exit.
type Setup struct {
	// Tracer records runs; it is a no-op when tracing is off.
	Tracer *Tracer
	// Propagator reads W3C trace context (and baggage) from requests;
	// nil when tracing is off, so requests are not even looked at.
	Propagator propagation.TextMapPropagator
	provider   *sdktrace.TracerProvider
}

// Off is the setup of a process that records no traces.
func Off() *Setup { return &Setup{Tracer: NewTracer(nil, false)} }

// Enabled reports whether spans are recorded and exported.
func (s *Setup) Enabled() bool { return s.provider != nil }

// FromEnv sets tracing up as the OTEL_* variables say. lookupEnv decides
// whether it is on (an OTLP endpoint is set, and neither OTEL_SDK_DISABLED
// nor OTEL_TRACES_EXPORTER=none turns it off) and whether message contents
// are recorded; the exporter and the SDK read the rest of the variables
// (headers, timeouts, sampler, batching, resource) from the process
// environment. Export failures are logged to log.
func FromEnv(ctx context.Context, lookupEnv func(string) (string, bool), version string, log *slog.Logger) (*Setup, error) {
	get := func(k string) string {
		v, _ := lookupEnv(k)
		return strings.TrimSpace(v)
	}
	if get(envEndpoint) == "" && get(envTracesEndpoint) == "" {
		return Off(), nil
	}
	if strings.EqualFold(get(envDisabled), "true") {
		return Off(), nil
	}
	switch exp := get(envExporter); exp {
	case "", "otlp":
	case "none":
		return Off(), nil
	default:
		return nil, fmt.Errorf("%s=%q: traces are exported with otlp (or not at all, none)", envExporter, exp)
	}
	protocol := get(envTracesProtocol)
	if protocol == "" {
		protocol = get(envProtocol)
	}
	if protocol == "grpc" {
		return nil, fmt.Errorf("OTLP protocol grpc: traces are exported over OTLP/HTTP (http/protobuf or http/json); point %s at the collector's HTTP port (4318)", envEndpoint)
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	// Later sources win: the default name, then what the environment
	// says (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(ServiceName), semconv.ServiceVersion(version)),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		_ = exporter.Shutdown(ctx)
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	if log != nil {
		// The SDK reports what it cannot export through the global
		// handler; without this it goes to the standard logger.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			log.Warn("traces", "err", err)
		}))
	}
	// The sampler (OTEL_TRACES_SAMPLER), the span limits and the batch
	// processor's settings (OTEL_BSP_*) come from the environment.
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return &Setup{
		Tracer:     NewTracer(provider, strings.EqualFold(get(envCapture), "true")),
		Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		provider:   provider,
	}, nil
}

// Shutdown exports the spans still buffered and stops the exporter;
// ctx bounds how long it may take. Call it once, at exit.
func (s *Setup) Shutdown(ctx context.Context) error {
	if s.provider == nil {
		return nil
	}
	return s.provider.Shutdown(ctx)
}

// NewTracer records with provider (nil: records nothing); capture says
// message contents and tool arguments and results are recorded too.
func NewTracer(provider trace.TracerProvider, capture bool) *Tracer {
	if provider == nil {
		return &Tracer{tracer: noop.NewTracerProvider().Tracer(scope), off: true}
	}
	return &Tracer{tracer: provider.Tracer(scope), capture: capture}
}

// scope names the instrumentation in the spans.
const scope = "github.com/agents-os/agents/backend/internal/tracing"
