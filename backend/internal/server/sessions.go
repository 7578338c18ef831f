package server

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/export"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/wire"
)

// sessionService serves SessionService.
type sessionService struct {
	s *Server
}

var _ agentsv1connect.SessionServiceHandler = (*sessionService)(nil)

const (
	defaultWait = 30 * time.Second
	maxWait     = 5 * time.Minute
)

func (h *sessionService) CreateSession(ctx context.Context, req *connect.Request[agentsv1.CreateSessionRequest]) (*connect.Response[agentsv1.CreateSessionResponse], error) {
	m := req.Msg
	if m.GetAgent() == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "agent is required")
	}
	budget, err := budgetArg(m.GetBudget())
	if err != nil {
		return nil, err
	}
	cr := runner.CreateRequest{
		Budget:   budget,
		Agent:    m.GetAgent(),
		Run:      runOptions(m.GetRun()),
		Params:   m.GetParams(),
		ParentID: m.GetParentId(),
		Title:    m.GetTitle(),

		IdempotencyKey: m.GetIdempotencyKey(),
		AgentVersion:   m.GetAgentVersion(),
	}
	if m.Message != nil {
		msg := message(m.GetMessage())
		cr.Message = &msg
	}
	timeout, err := waitTimeout(m.GetTimeout())
	if err != nil {
		return nil, err
	}
	view, err := h.s.runner.CreateSession(ctx, owner(ctx), cr)
	if err != nil {
		return nil, err
	}
	if m.GetWait() {
		// The session is new: every turn is what the run added.
		if view, err = h.s.runner.ReadSession(ctx, owner(ctx), view.Meta.ID, runner.ViewRequest{Wait: true, Timeout: timeout}); err != nil {
			return nil, err
		}
	}
	return connect.NewResponse(&agentsv1.CreateSessionResponse{Session: sessionFor(ctx, view)}), nil
}

func (h *sessionService) PostMessage(ctx context.Context, req *connect.Request[agentsv1.PostMessageRequest]) (*connect.Response[agentsv1.PostMessageResponse], error) {
	m := req.Msg
	if err := requireID(m.GetSessionId()); err != nil {
		return nil, err
	}
	if m.Message == nil {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "message is required")
	}
	opts := runOptions(m.GetRun())
	opts.IdempotencyKey = m.GetIdempotencyKey()
	timeout, err := waitTimeout(m.GetTimeout())
	if err != nil {
		return nil, err
	}
	if m.GetWait() {
		p, err := h.s.runner.PostMessageWait(ctx, owner(ctx), m.GetSessionId(), message(m.GetMessage()), opts, m.GetParams(), timeout)
		if err != nil {
			return nil, err
		}
		return connect.NewResponse(&agentsv1.PostMessageResponse{Meta: wire.Meta(p.Meta), MailId: p.MailID, Session: sessionFor(ctx, p.View)}), nil
	}
	meta, mailID, err := h.s.runner.PostMessage(ctx, owner(ctx), m.GetSessionId(), message(m.GetMessage()), opts, m.GetParams())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.PostMessageResponse{Meta: wire.Meta(meta), MailId: mailID}), nil
}

func (h *sessionService) GetSession(ctx context.Context, req *connect.Request[agentsv1.GetSessionRequest]) (*connect.Response[agentsv1.GetSessionResponse], error) {
	m := req.Msg
	if err := requireID(m.GetSessionId()); err != nil {
		return nil, err
	}
	timeout, err := waitTimeout(m.GetTimeout())
	if err != nil {
		return nil, err
	}
	sel := runner.Turns{None: m.GetMetaOnly(), Limit: int(m.GetTurnLimit()), Last: int(m.GetLastTurns())}
	if m.AfterTurn != nil {
		sel.After = ptr(int(m.GetAfterTurn()))
	}
	if m.BeforeTurn != nil {
		sel.Before = ptr(int(m.GetBeforeTurn()))
	}
	view, err := h.s.readSession(ctx, rpcGetSession, m.GetSessionId(), runner.ViewRequest{Wait: m.GetWait(), Timeout: timeout, Turns: sel})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.GetSessionResponse{Session: sessionFor(ctx, view), ReadOnly: view.Meta.Owner != owner(ctx)}), nil
}

// waitTimeout is a request's longest wait: defaultWait when unset, at
// most maxWait.
func waitTimeout(d *durationpb.Duration) (time.Duration, error) {
	if d == nil {
		return defaultWait, nil
	}
	if err := d.CheckValid(); err != nil {
		return 0, errs.Invalid(errs.CodeInvalidArgument, "timeout: %v", err)
	}
	return min(d.AsDuration(), maxWait), nil
}

func ptr[T any](v T) *T { return &v }

func (h *sessionService) ListSessions(ctx context.Context, req *connect.Request[agentsv1.ListSessionsRequest]) (*connect.Response[agentsv1.ListSessionsResponse], error) {
	m := req.Msg
	if m.GetPageSize() < 0 || m.GetPageSize() > store.MaxPageSize {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "page_size must be between 0 and %d", store.MaxPageSize)
	}
	who := owner(ctx)
	if m.GetAllOwners() {
		if !isAdmin(ctx) {
			return nil, errs.PermissionDenied(errs.CodePermissionDenied, "listing every owner's sessions needs an admin token")
		}
		who = runner.AnyOwner
	}
	list, next, err := h.s.runner.ListSessions(ctx, who, store.ListFilter{
		Agent:     m.GetAgent(),
		Status:    wire.StatusFromWire(m.GetStatus()),
		ParentID:  m.GetParentId(),
		RootsOnly: m.GetRootsOnly(),
		Query:     m.GetQuery(),
		PageSize:  int(m.GetPageSize()),
		PageToken: m.GetPageToken(),
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.ListSessionsResponse{Sessions: wire.Metas(list), NextPageToken: next, HasMore: next != ""}), nil
}

func (h *sessionService) DeleteSession(ctx context.Context, req *connect.Request[agentsv1.DeleteSessionRequest]) (*connect.Response[agentsv1.DeleteSessionResponse], error) {
	m := req.Msg
	if err := requireID(m.GetSessionId()); err != nil {
		return nil, err
	}
	mode := runner.DeleteSingle
	if m.GetMode() == agentsv1.DeleteMode_DELETE_MODE_CASCADE {
		mode = runner.DeleteCascade
	}
	ids, err := h.s.runner.DeleteSession(ctx, owner(ctx), m.GetSessionId(), mode)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.DeleteSessionResponse{DeletedIds: ids}), nil
}

func (h *sessionService) ExportSession(ctx context.Context, req *connect.Request[agentsv1.ExportSessionRequest]) (*connect.Response[agentsv1.ExportSessionResponse], error) {
	m := req.Msg
	if err := requireID(m.GetSessionId()); err != nil {
		return nil, err
	}
	view, err := h.s.readSession(ctx, rpcExportSession, m.GetSessionId(), runner.ViewRequest{})
	if err != nil {
		return nil, err
	}
	res := &agentsv1.ExportSessionResponse{}
	switch m.GetFormat() {
	case agentsv1.ExportFormat_EXPORT_FORMAT_JSON:
		res.ContentType = "application/json"
		// The session object of the JSON routes.
		b, err := apijson.Marshal(wire.Session(view.Meta, view.Turns, view.Deferred))
		if err != nil {
			return nil, err
		}
		res.Content = string(b)
	default:
		res.ContentType = "text/markdown; charset=utf-8"
		res.Content = export.Markdown(view.Meta, view.Turns)
	}
	return connect.NewResponse(res), nil
}

func requireID(id string) error {
	if id == "" {
		return errs.Invalid(errs.CodeInvalidArgument, "session_id is required")
	}
	return nil
}

func message(m *agentsv1.Message) runner.Message {
	msg := runner.Message{Text: m.GetText(), Interrupt: m.GetInterrupt()}
	for _, a := range m.GetAttachments() {
		msg.Attachments = append(msg.Attachments, session.Attachment{Name: a.GetName(), MediaType: a.GetMediaType(), Data: a.GetData()})
	}
	return msg
}

func runOptions(r *agentsv1.RunOptions) runner.RunOptions {
	return runner.RunOptions{Hold: r.GetHold(), MaxSteps: int(r.GetMaxSteps())}
}

// sessionOf is a view on the wire: the session, the event position it
// reflects and the step in flight.
func sessionOf(view runner.View) *agentsv1.Session {
	out := wire.Session(view.Meta, view.Turns, view.Deferred)
	out.FirstTurnIndex = int32(view.FirstTurn)
	out.Seq, out.DeltaSeq = view.Position.Seq, view.Position.Delta
	if p := view.InProgress; p != nil {
		ip := &agentsv1.TurnInProgress{TurnIndex: int32(p.TurnIndex), Text: p.Text, Thinking: p.Thinking}
		for _, c := range p.ToolCalls {
			ip.ToolCalls = append(ip.ToolCalls, wire.ToolCall(c))
		}
		for _, r := range p.Results {
			ip.ToolResults = append(ip.ToolResults, wire.ToolResult(r))
		}
		out.InProgress = ip
	}
	return out
}
