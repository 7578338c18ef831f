package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/convfile"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// ImportSessions decodes each file and hands the conversation to the
// runner. What is wrong with a file (it is no conversation, or its
// session id is taken by another history) fails that file alone; what
// is wrong with the server (the database is down) fails the request,
// after the files before it were imported: a retry finds those
// unchanged.
func (h *sessionService) ImportSessions(ctx context.Context, req *connect.Request[agentsv1.ImportSessionsRequest]) (*connect.Response[agentsv1.ImportSessionsResponse], error) {
	m := req.Msg
	if m.GetAgent() == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "agent is required: the agent the imported sessions continue with (agents-exe files do not name theirs)")
	}
	if err := agentfile.CheckSlug(m.GetAgent()); err != nil {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "agent: %v: the sessions would be bound to an agent that cannot exist", err)
	}
	if len(m.GetFiles()) == 0 {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "files: at least one file is required")
	}
	res := &agentsv1.ImportSessionsResponse{}
	for i, f := range m.GetFiles() {
		name := f.GetName()
		if name == "" {
			name = fmt.Sprintf("files[%d]", i)
		}
		r, err := h.importFile(ctx, m.GetAgent(), f.GetContent())
		if err != nil {
			return nil, err
		}
		r.Name = name
		res.Results = append(res.Results, r)
	}
	return connect.NewResponse(res), nil
}

// importFile imports one file; an error is the server's, not the file's.
func (h *sessionService) importFile(ctx context.Context, agent string, content []byte) (*agentsv1.ImportResult, error) {
	c, err := convfile.Decode(content)
	if format := (*convfile.Error)(nil); errors.As(err, &format) {
		return &agentsv1.ImportResult{Status: agentsv1.ImportStatus_IMPORT_STATUS_FAILED, Reason: format.Error()}, nil
	} else if err != nil {
		return nil, err
	}
	r := &agentsv1.ImportResult{SessionId: c.SessionID, ForkedFrom: c.ForkedFrom, TurnCount: int32(len(c.Turns))}
	got, err := h.s.runner.ImportSession(ctx, owner(ctx), session.Meta{ID: c.SessionID, Agent: agent, ForkedFrom: c.ForkedFrom}, c.Turns)
	if err != nil {
		e, ok := errs.As(err)
		if !ok || (e.Kind != errs.KindConflict && e.Kind != errs.KindInvalid) {
			return nil, err
		}
		r.Status, r.Reason = agentsv1.ImportStatus_IMPORT_STATUS_FAILED, e.Message
		return r, nil
	}
	r.SessionId = got.Meta.ID
	r.Status = agentsv1.ImportStatus_IMPORT_STATUS_IMPORTED
	if got.Unchanged {
		r.Status = agentsv1.ImportStatus_IMPORT_STATUS_UNCHANGED
	}
	// Whose the file's id is stays unsaid: only that it was not free.
	var notes []string
	if got.Minted {
		notes = append(notes, "imported as a new session: the file's session id is not available here")
	}
	if got.Added > 0 {
		notes = append(notes, fmt.Sprintf("added %d turns the file gained since it was imported", got.Added))
	}
	r.Reason = strings.Join(notes, "; ")
	return r, nil
}
