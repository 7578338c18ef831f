// Package server is the thin network layer over the runner: it decodes
// requests, calls the domain, converts the answers to the wire format and
// maps errors. One mux serves the Connect handlers of every service, the
// JSON routes, the event streams, health and metrics; the layers around it
// log, apply CORS, guard against foreign pages, authenticate and limit.
package server

import (
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/propagation"

	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/storedagents"
	"github.com/agents-os/agents/backend/internal/webhooks"
)

// Deps are what the server serves.
type Deps struct {
	Log     *slog.Logger
	Catalog *catalog.Catalog
	Runner  *runner.Runner
	Hub     *events.Hub
	// Store answers readiness probes, the run limits and the sessions
	// metric.
	Store store.Store
	// Metrics, when set, are served at /metrics and count requests.
	Metrics *Metrics
	// Leases and Feed, set on a database shared with other servers, tell
	// /readyz and /metrics how the run leases and the events of the
	// other servers fare.
	Leases   Leases
	Feed     EventFeed
	Security Security
	Limits   Limits
	// Web, when set, serves the web app for the GET requests no API route
	// claims (see withWeb).
	Web http.Handler
	// Version is the binary's, announced to MCP clients.
	Version string
	// Sandbox confines the tool processes; /readyz says what it can do.
	Sandbox *sandbox.Sandbox
	// Webhooks, when set, serves WebhookService; without it the server
	// serves the webhooks of Store with the default Policy (public
	// endpoints only).
	Webhooks *webhooks.Service
	// Propagator, when set, reads the trace context of requests, which
	// the runs they start take as their parent.
	Propagator propagation.TextMapPropagator
}

// Security says who may use the server over TCP.
type Security struct {
	// Tokens, when set, turn authentication on: every request needs a
	// bearer token and acts as its owner. Nil serves everyone as the local
	// owner, which is only safe on loopback (see guardBrowsers).
	Tokens *Tokens
	// CORSOrigins are the web origins whose pages may call the API ("*":
	// any, only without tokens).
	CORSOrigins []string
	// AllowedHosts are Host names accepted besides loopback ones when
	// there are no tokens (the name a trusted proxy forwards, say).
	AllowedHosts []string
	// PublicMetrics serves /metrics without a token.
	PublicMetrics bool
}

// Validate reports a configuration the server refuses.
func (c Security) Validate() error {
	return checkCORSOrigins(c.CORSOrigins, c.Tokens != nil)
}

// Server holds the handlers of every service.
type Server struct {
	log      *slog.Logger
	catalog  *catalog.Catalog
	runner   *runner.Runner
	hub      *events.Hub
	store    store.Store
	agents   *storedagents.Service
	webhooks *webhooks.Service
	metrics  *Metrics
	leases   Leases
	security Security
	limits   Limits
	web      http.Handler
	version  string
	sandbox  *sandbox.Sandbox

	mux      http.Handler
	mcp      *mcpEndpoint
	draining atomic.Bool
	// served counts the requests begun and the requests ended, probed
	// the probes and scrapes; open is the requests under way (see
	// Activity).
	served, probed atomic.Uint64
	open           atomic.Int64
}

// New returns a server over its dependencies. An invalid Security (see
// Validate) is an error of the caller; New drops a "*" origin it would
// otherwise refuse rather than serve it.
func New(d Deps) *Server {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		log: log, catalog: d.Catalog, runner: d.Runner, hub: d.Hub, store: d.Store,
		metrics: d.Metrics, leases: d.Leases, security: d.Security, limits: d.Limits.withDefaults(),
		web:     d.Web,
		version: d.Version, sandbox: d.Sandbox,
	}
	s.mcp = &mcpEndpoint{s: s}
	s.agents = storedagents.New(d.Catalog, d.Store, d.Runner, log)
	s.webhooks = d.Webhooks
	if s.webhooks == nil && d.Store != nil {
		s.webhooks = webhooks.NewService(d.Store, webhooks.Policy{})
	}
	if d.Metrics != nil && d.Runner != nil {
		d.Metrics.runner.Store(d.Runner)
	}
	if d.Metrics != nil {
		d.Metrics.watchCluster(d.Leases, d.Feed)
	}
	if err := s.security.Validate(); err != nil {
		log.Error("refusing the CORS wildcard", "error", err.Error())
		s.security.CORSOrigins = withoutWildcard(s.security.CORSOrigins)
	}
	api := s.newMux()
	s.mux = withTraceContext(d.Propagator, s.withWeb(api, jsonErrors(recordPattern(api))))
	return s
}

func (s *Server) newMux() *http.ServeMux {
	opts := []connect.HandlerOption{
		connect.WithInterceptors(errorInterceptor{log: s.log}, admitInterceptor{s: s}),
		connect.WithReadMaxBytes(int(s.limits.MaxBodyBytes)),
		connect.WithCodec(apijson.ConnectCodec{}),
		recoverHandler(s.log),
	}
	mux := http.NewServeMux()
	// A service's Connect handlers (a protocol handler, codecs and
	// compressors for each procedure, and the descriptors they read) took
	// a millisecond to build, a sixth of a start past package
	// initialisation: each service's are built by the first request to
	// it instead.
	mount := func(service string, build func() (string, http.Handler)) {
		h := sync.OnceValue(func() http.Handler {
			_, h := build()
			return checkGetMessage(checkEnvelopes(h))
		})
		mux.Handle("/"+service+"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h().ServeHTTP(w, r) }))
	}
	mount(agentsv1connect.AgentServiceName, func() (string, http.Handler) {
		return agentsv1connect.NewAgentServiceHandler(&agentService{s: s}, opts...)
	})
	mount(agentsv1connect.SessionServiceName, func() (string, http.Handler) {
		return agentsv1connect.NewSessionServiceHandler(&sessionService{s: s}, opts...)
	})
	mount(agentsv1connect.OwnerServiceName, func() (string, http.Handler) {
		return agentsv1connect.NewOwnerServiceHandler(&ownerService{s: s}, opts...)
	})
	mount(agentsv1connect.WebhookServiceName, func() (string, http.Handler) {
		return agentsv1connect.NewWebhookServiceHandler(&webhookService{s: s}, opts...)
	})
	mount(agentsv1connect.ScheduleServiceName, func() (string, http.Handler) {
		return agentsv1connect.NewScheduleServiceHandler(&scheduleService{s: s}, opts...)
	})
	mount(agentsv1connect.EventServiceName, func() (string, http.Handler) {
		return agentsv1connect.NewEventServiceHandler(&eventService{s: s},
			append(opts, connect.WithCodec(eventProtoCodec{s.hub}), connect.WithCodec(eventJSONCodec{s.hub}))...)
	})
	mountReflection(mux, opts...)
	s.routes(mux)
	mux.HandleFunc("GET /openapi.json", serveOpenAPI)
	mux.Handle("/mcp", s.mcp)
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	if s.metrics != nil {
		mux.Handle("GET /metrics", s.metricsRoute())
	}
	if profilingOn() {
		mountProfiles(mux, func(h http.Handler) http.Handler { return s.adminOnly("the profiles", h) })
	}
	return mux
}

// Handler returns the handler for TCP listeners. Its layers, outermost
// first: the request log; CORS, which answers preflight requests before
// anything checks them; without tokens, the Host and Origin guard; the
// identity (token or local); body limits; the mux.
func (s *Server) Handler() http.Handler {
	h := s.limitBodies(s.mux)
	h = s.authenticate(h)
	if s.security.Tokens == nil {
		h = s.guardBrowsers(h)
	}
	h = withCORS(s.security.CORSOrigins, h)
	return s.logRequests(h)
}

// LocalHandler returns the handler for the Unix socket: the same mux and
// limits, every request acting as the local owner without a token. Only
// the socket's owner can connect (its mode is 0600), and no browser can
// reach it, so it needs neither tokens nor guards.
func (s *Server) LocalHandler() http.Handler {
	return s.logRequests(asLocal(s.limitBodies(s.mux)))
}

func withoutWildcard(origins []string) []string {
	var out []string
	for _, o := range origins {
		if o != "*" {
			out = append(out, o)
		}
	}
	return out
}

// ErrInsecureBind is returned by CheckBind for a non-loopback address
// without tokens.
var ErrInsecureBind = errors.New("refusing to serve without --auth-tokens on a non-loopback address: anyone who can reach it could run the agents' tools; give --auth-tokens FILE, bind 127.0.0.1, or pass --insecure-no-auth")

// CheckBind refuses to listen on a non-loopback address without tokens,
// unless insecure says the operator accepts it (behind a trusted proxy on
// a private network, say).
func CheckBind(bind string, auth, insecure bool) error {
	if auth || insecure || IsLoopbackAddr(bind) {
		return nil
	}
	return ErrInsecureBind
}
