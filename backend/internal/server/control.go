package server

import (
	"context"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/wire"
)

// The steering operations of SessionService: resume, deferred calls,
// cancel, pause, mail, fork and watches.

func (h *sessionService) Resume(ctx context.Context, req *connect.Request[agentsv1.ResumeRequest]) (*connect.Response[agentsv1.ResumeResponse], error) {
	if err := requireID(req.Msg.GetSessionId()); err != nil {
		return nil, err
	}
	meta, err := h.s.runner.Resume(ctx, owner(ctx), req.Msg.GetSessionId(), req.Msg.GetParams())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.ResumeResponse{Meta: wire.Meta(meta)}), nil
}

func (h *sessionService) CompleteCall(ctx context.Context, req *connect.Request[agentsv1.CompleteCallRequest]) (*connect.Response[agentsv1.CompleteCallResponse], error) {
	m := req.Msg
	if m.GetToken() == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "token is required")
	}
	answer := runner.CallAnswer{IdempotencyKey: m.GetIdempotencyKey()}
	switch r := m.GetResult().(type) {
	case *agentsv1.CompleteCallRequest_Text:
		answer.Text = r.Text
	case *agentsv1.CompleteCallRequest_Error:
		answer.Text, answer.Failed = r.Error, true
	case *agentsv1.CompleteCallRequest_Approval:
		ap := r.Approval
		if ap.GetAlways() && !ap.GetApprove() {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "approval.always allows the tool for the session: it needs approve: true")
		}
		answer.Approval = &runner.ApprovalAnswer{Approve: ap.GetApprove(), Reason: ap.GetReason(), Always: ap.GetAlways()}
	default:
		return nil, errs.Invalid(errs.CodeInvalidArgument, "set text or error, or approval for a call that waits for approval")
	}
	meta, remaining, err := h.s.runner.CompleteCall(ctx, owner(ctx), m.GetToken(), answer, m.GetResume(), m.GetParams())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.CompleteCallResponse{Meta: wire.Meta(meta), Remaining: int32(remaining)}), nil
}

func (h *sessionService) CancelRun(ctx context.Context, req *connect.Request[agentsv1.CancelRunRequest]) (*connect.Response[agentsv1.CancelRunResponse], error) {
	if err := requireID(req.Msg.GetSessionId()); err != nil {
		return nil, err
	}
	meta, err := h.s.runner.CancelRun(ctx, owner(ctx), req.Msg.GetSessionId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.CancelRunResponse{Meta: wire.Meta(meta)}), nil
}

func (h *sessionService) CancelAttached(ctx context.Context, req *connect.Request[agentsv1.CancelAttachedRequest]) (*connect.Response[agentsv1.CancelAttachedResponse], error) {
	if err := requireID(req.Msg.GetSessionId()); err != nil {
		return nil, err
	}
	meta, n, err := h.s.runner.CancelAttached(ctx, owner(ctx), req.Msg.GetSessionId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.CancelAttachedResponse{Meta: wire.Meta(meta), Cancelled: int32(n)}), nil
}

func (h *sessionService) Pause(ctx context.Context, req *connect.Request[agentsv1.PauseRequest]) (*connect.Response[agentsv1.PauseResponse], error) {
	if err := requireID(req.Msg.GetSessionId()); err != nil {
		return nil, err
	}
	meta, err := h.s.runner.Pause(ctx, owner(ctx), req.Msg.GetSessionId())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.PauseResponse{Meta: wire.Meta(meta)}), nil
}

func (h *sessionService) Compact(ctx context.Context, req *connect.Request[agentsv1.CompactRequest]) (*connect.Response[agentsv1.CompactResponse], error) {
	if err := requireID(req.Msg.GetSessionId()); err != nil {
		return nil, err
	}
	done, err := h.s.runner.Compact(ctx, owner(ctx), req.Msg.GetSessionId(), req.Msg.GetInstruction())
	if err != nil {
		return nil, err
	}
	res := &agentsv1.CompactResponse{Meta: wire.Meta(done.Meta), Pending: done.Pending}
	if done.Turn != nil {
		res.Compaction = wire.TurnForEvent(*done.Turn)
	}
	return connect.NewResponse(res), nil
}

func (h *sessionService) SendMail(ctx context.Context, req *connect.Request[agentsv1.SendMailRequest]) (*connect.Response[agentsv1.SendMailResponse], error) {
	m := req.Msg
	if err := requireID(m.GetSessionId()); err != nil {
		return nil, err
	}
	body, err := wire.MailBodyFromWire(m.GetBody())
	if err != nil {
		return nil, err
	}
	mail, err := h.s.runner.SendMail(ctx, owner(ctx), m.GetSessionId(), runner.Mail{
		Body:        body,
		Priority:    wire.PriorityFromWire(m.GetPriority()),
		FromSession: m.GetFromSessionId(),

		IdempotencyKey: m.GetIdempotencyKey(),
	})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.SendMailResponse{Envelope: wire.Mail(mail)}), nil
}

func (h *sessionService) ListMail(ctx context.Context, req *connect.Request[agentsv1.ListMailRequest]) (*connect.Response[agentsv1.ListMailResponse], error) {
	if err := requireID(req.Msg.GetSessionId()); err != nil {
		return nil, err
	}
	// The runner's mail listing does not say whose the session is: an
	// admin's read learns it first, for the log.
	if isAdmin(ctx) {
		if _, err := h.s.readSession(ctx, rpcListMail, req.Msg.GetSessionId(), runner.ViewRequest{Turns: runner.Turns{None: true}}); err != nil {
			return nil, err
		}
	}
	list, err := h.s.runner.ListMail(ctx, readOwner(ctx), req.Msg.GetSessionId(), req.Msg.GetPendingOnly())
	if err != nil {
		return nil, err
	}
	out := make([]*agentsv1.MailEnvelope, len(list))
	for i, m := range list {
		out[i] = wire.Mail(m)
	}
	return connect.NewResponse(&agentsv1.ListMailResponse{Mail: out}), nil
}

func (h *sessionService) ForkSession(ctx context.Context, req *connect.Request[agentsv1.ForkSessionRequest]) (*connect.Response[agentsv1.ForkSessionResponse], error) {
	m := req.Msg
	if err := requireID(m.GetSessionId()); err != nil {
		return nil, err
	}
	var at *int
	if m.AtTurn != nil {
		v := int(m.GetAtTurn())
		at = &v
	}
	view, err := h.s.runner.ForkSession(ctx, owner(ctx), m.GetSessionId(), runner.ForkRequest{AtTurn: at, Agent: m.GetAgent(), AgentVersion: m.AgentVersion, Title: m.GetTitle()})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.ForkSessionResponse{Session: sessionFor(ctx, view)}), nil
}

func (h *sessionService) WatchSession(ctx context.Context, req *connect.Request[agentsv1.WatchSessionRequest]) (*connect.Response[agentsv1.WatchSessionResponse], error) {
	m := req.Msg
	if err := watchIDs(m.GetWatcherId(), m.GetTargetId()); err != nil {
		return nil, err
	}
	if m.Ttl != nil {
		if err := m.GetTtl().CheckValid(); err != nil {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "ttl: %v", err)
		}
	}
	w, err := h.s.runner.WatchSession(ctx, owner(ctx), m.GetWatcherId(), m.GetTargetId(), m.GetTtl().AsDuration())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.WatchSessionResponse{Watch: watch(w)}), nil
}

func (h *sessionService) UnwatchSession(ctx context.Context, req *connect.Request[agentsv1.UnwatchSessionRequest]) (*connect.Response[agentsv1.UnwatchSessionResponse], error) {
	m := req.Msg
	if err := watchIDs(m.GetWatcherId(), m.GetTargetId()); err != nil {
		return nil, err
	}
	if err := h.s.runner.UnwatchSession(ctx, owner(ctx), m.GetWatcherId(), m.GetTargetId()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.UnwatchSessionResponse{}), nil
}

// watchIDs names the id a watch request lacks (the JSON routes give the
// watcher in the path, so a body without a target lacks only that).
func watchIDs(watcher, target string) error {
	switch {
	case watcher == "":
		return errs.Invalid(errs.CodeInvalidArgument, "watcher_id is required: the session that watches")
	case target == "":
		return errs.Invalid(errs.CodeInvalidArgument, "target_id is required: the session to watch")
	}
	return nil
}

func watch(w session.Watch) *agentsv1.Watch {
	return &agentsv1.Watch{WatcherId: w.WatcherID, TargetId: w.TargetID, ExpireTime: wire.Timestamp(w.Expires)}
}

func (h *sessionService) RenameSession(ctx context.Context, req *connect.Request[agentsv1.RenameSessionRequest]) (*connect.Response[agentsv1.RenameSessionResponse], error) {
	if err := requireID(req.Msg.GetSessionId()); err != nil {
		return nil, err
	}
	meta, err := h.s.runner.RenameSession(ctx, owner(ctx), req.Msg.GetSessionId(), req.Msg.GetTitle())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.RenameSessionResponse{Meta: wire.Meta(meta)}), nil
}
