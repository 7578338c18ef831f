package server

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// withTraceContext reads the caller's trace context (a W3C traceparent
// header) into the request's context, on the Connect and JSON routes
// alike: a run the request starts is a child of the caller's span (see
// the runner's trace.go). Without a propagator (tracing is off) requests
// go through untouched.
func withTraceContext(p propagation.TextMapPropagator, h http.Handler) http.Handler {
	if p == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := p.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
