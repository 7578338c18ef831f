package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// readyTimeout bounds the database check of a readiness probe.
const readyTimeout = 2 * time.Second

// healthBody is what /healthz and /readyz answer.
type healthBody struct {
	Status   string   `json:"status"`
	Problems []string `json:"problems,omitempty"`
	// Database is "ok", "unreachable" or "cannot write" (readyz only).
	Database string `json:"database,omitempty"`
	// Leases is set on a database shared with other servers.
	Leases *leaseHealth `json:"leases,omitempty"`
	// Sandbox says whether tool processes are confined (readyz only):
	// a server that cannot confine still serves, its tools unconfined.
	Sandbox string `json:"sandbox,omitempty"`
}

// leaseHealth is the state of a server's run leases in /readyz.
type leaseHealth struct {
	Held int `json:"held"`
	// RenewedAt is when the database last confirmed them, absent before
	// the first time.
	RenewedAt  *time.Time `json:"renewed_at,omitempty"`
	TTLSeconds float64    `json:"ttl_seconds"`
}

// healthz answers 200 while the process serves HTTP at all: a liveness
// probe restarts the server only when this fails.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeHealth(w, http.StatusOK, healthBody{Status: "ok"})
}

// writeChecker is a store shared with other servers, where what is
// written can be held up while the database still answers reads (the
// lock that numbering events takes, held by what does not let go): it
// tells, within a bound, whether a write would reach readers now.
type writeChecker interface {
	CheckWrites(ctx context.Context) error
}

// readyz answers 200 when the server can do its work: the database
// answers and, when shared, takes writes, at least one agent is loaded,
// it is not shutting down and, on a database shared with other servers,
// its leases were renewed in time.
// Otherwise 503 with the problems, so a load balancer sends no traffic.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	body := healthBody{Status: "ready", Database: "ok"}
	if s.draining.Load() {
		body.Problems = append(body.Problems, "shutting down")
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if _, err := s.store.CountByStatus(ctx); err != nil {
		s.log.WarnContext(ctx, "readiness: store unreachable", "error", err.Error())
		body.Database = "unreachable"
		body.Problems = append(body.Problems, "store unreachable")
	} else if w, ok := s.store.(writeChecker); ok {
		if err := w.CheckWrites(ctx); err != nil {
			s.log.WarnContext(ctx, "readiness: store cannot write", "error", err.Error())
			body.Database = "cannot write"
			body.Problems = append(body.Problems, "store cannot write")
		}
	}
	if s.sandbox != nil {
		body.Sandbox = s.sandbox.Status().String()
	}
	if len(s.catalog.Snapshot().Agents()) == 0 {
		body.Problems = append(body.Problems, "no agents loaded")
	}
	if s.leases != nil {
		var problem string
		body.Leases, problem = leaseHealthOf(s.leases.LeaseStats(), time.Now())
		if problem != "" {
			body.Problems = append(body.Problems, problem)
		}
	}
	if len(body.Problems) > 0 {
		body.Status = "unavailable"
		writeHealth(w, http.StatusServiceUnavailable, body)
		return
	}
	writeHealth(w, http.StatusOK, body)
}

// leaseHealthOf describes st at now, with a problem when leases are held
// that the database has not confirmed for longer than they last: other
// servers may have taken them, and the runs under them cannot write.
func leaseHealthOf(st LeaseStats, now time.Time) (*leaseHealth, string) {
	h := &leaseHealth{Held: st.Held, TTLSeconds: st.TTL.Seconds()}
	if !st.RenewedAt.IsZero() {
		at := st.RenewedAt.UTC()
		h.RenewedAt = &at
	}
	if st.Held == 0 || st.RenewedAt.IsZero() {
		return h, ""
	}
	if age := now.Sub(st.RenewedAt); age > st.TTL {
		return h, fmt.Sprintf("leases not renewed for %s (they last %s)", age.Round(time.Second), st.TTL)
	}
	return h, ""
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
