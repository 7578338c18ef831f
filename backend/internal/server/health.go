package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// readyTimeout bounds the database check of a readiness probe.
const readyTimeout = 2 * time.Second

// healthBody is what /healthz and /readyz answer.
type healthBody struct {
	Status   string   `json:"status"`
	Problems []string `json:"problems,omitempty"`
}

// healthz answers 200 while the process serves HTTP at all: a liveness
// probe restarts the server only when this fails.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeHealth(w, http.StatusOK, healthBody{Status: "ok"})
}

// readyz answers 200 when the server can do its work: the database
// answers, at least one agent is loaded, and it is not shutting down.
// Otherwise 503 with the problems, so a load balancer sends no traffic.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	var problems []string
	if s.draining.Load() {
		problems = append(problems, "shutting down")
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if _, err := s.store.CountByStatus(ctx); err != nil {
		s.log.WarnContext(ctx, "readiness: store unreachable", "error", err.Error())
		problems = append(problems, "store unreachable")
	}
	if len(s.catalog.Snapshot().Agents()) == 0 {
		problems = append(problems, "no agents loaded")
	}
	if len(problems) > 0 {
		writeHealth(w, http.StatusServiceUnavailable, healthBody{Status: "unavailable", Problems: problems})
		return
	}
	writeHealth(w, http.StatusOK, healthBody{Status: "ready"})
}

func writeHealth(w http.ResponseWriter, status int, body healthBody) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// Drain marks the server as shutting down: /readyz fails from now on, so
// load balancers stop sending new work while running requests finish, and
// the MCP sessions end, so their streams do not hold the shutdown up.
func (s *Server) Drain() {
	s.draining.Store(true)
	s.mcp.close()
}
