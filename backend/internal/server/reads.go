package server

import (
	"context"

	"github.com/agents-os/agents/backend/internal/runner"
)

// An admin's listing holds every owner's sessions, so an admin may also
// read them: GetSession, ExportSession, ListMail and a session's events
// answer for another owner's session, and the owner scope of Subscribe
// may name another owner. Each such read is logged. Writes are not
// widened: they act as the caller's own owner, to whom another owner's
// session is not found.

// The RPCs that read sessions, as the audit log names them.
const (
	rpcGetSession    = "agents.v1.SessionService.GetSession"
	rpcExportSession = "agents.v1.SessionService.ExportSession"
	rpcListMail      = "agents.v1.SessionService.ListMail"
	rpcSubscribe     = "agents.v1.EventService.Subscribe"
)

// readOwner is the owner a read acts as: every owner for an admin, the
// caller's own for anyone else.
func readOwner(ctx context.Context) string {
	if isAdmin(ctx) {
		return runner.AnyOwner
	}
	return owner(ctx)
}

// readSession reads a session as readOwner and logs the read when the
// session is another owner's.
func (s *Server) readSession(ctx context.Context, rpc, id string, req runner.ViewRequest) (runner.View, error) {
	view, err := s.runner.ReadSession(ctx, readOwner(ctx), id, req)
	if err != nil {
		return runner.View{}, err
	}
	s.auditRead(ctx, rpc, view.Meta.Owner, id)
	return view, nil
}

// auditRead logs, at INFO, a read of another owner's sessions: one
// session, or with no session id that owner's event stream. A read of
// one's own is not logged.
func (s *Server) auditRead(ctx context.Context, rpc, of, sessionID string) {
	if of == owner(ctx) {
		return
	}
	attrs := []any{"admin", owner(ctx), "owner", of, "rpc", rpc}
	if sessionID != "" {
		attrs = append(attrs, "session", sessionID)
	}
	s.log.InfoContext(ctx, "admin read of another owner's sessions", attrs...)
}
