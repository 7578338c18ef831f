// Package server is the thin network layer over the runner: it decodes
// requests, calls the domain, converts the answers to the wire format and
// maps errors. One mux serves the Connect handlers of every service.
package server

import (
	"log/slog"
	"net/http"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/runner"
)

// Deps are what the server serves.
type Deps struct {
	Log     *slog.Logger
	Catalog *catalog.Catalog
	Runner  *runner.Runner
	Hub     *events.Hub
}

// Server holds the handlers of every service.
type Server struct {
	log     *slog.Logger
	catalog *catalog.Catalog
	runner  *runner.Runner
	hub     *events.Hub
}

// New returns a server over its dependencies.
func New(d Deps) *Server {
	log := d.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{log: log, catalog: d.Catalog, runner: d.Runner, hub: d.Hub}
}

// Handler returns the mux with every route.
func (s *Server) Handler() http.Handler {
	opts := []connect.HandlerOption{
		connect.WithInterceptors(errorInterceptor{log: s.log}),
		recoverHandler(s.log),
	}
	mux := http.NewServeMux()
	mux.Handle(agentsv1connect.NewAgentServiceHandler(&agentService{s: s}, opts...))
	mux.Handle(agentsv1connect.NewSessionServiceHandler(&sessionService{s: s}, opts...))
	mux.Handle(agentsv1connect.NewEventServiceHandler(&eventService{s: s}, opts...))
	s.routes(mux)
	return mux
}
