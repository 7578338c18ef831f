package runner

import (
	"context"
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
)

// abortedText is the result of a call that was in flight when the server
// stopped: the model learns the call may or may not have had its effect.
const abortedText = "the server restarted while this call was running; it may or may not have completed"

// Recover restores what was live when the server last stopped: the watch
// index, and the runs that were active. Calls that were in flight get an
// aborted result; the interrupted model call is simply made again.
func (r *Runner) Recover(ctx context.Context) error {
	if err := r.loadWatches(ctx); err != nil {
		return err
	}
	metas, err := r.store.ListByStatus(ctx, session.StatusRunning)
	if err != nil {
		return err
	}
	for _, m := range metas {
		err := r.withSession(ctx, m.ID, func(a *actor) error { return a.recoverRun(ctx) })
		if err != nil {
			r.log.Error("recover session", "session", m.ID, "err", err)
			continue
		}
		r.log.Info("recovered session", "session", m.ID)
	}
	return nil
}

// recoverRun restarts the run of a session found running at start.
func (a *actor) recoverRun(ctx context.Context) error {
	if a.run != nil {
		return nil
	}
	if missing := a.missingParams(); len(missing) > 0 {
		// Params live in memory only: a client must resupply them (Resume).
		return a.fail("params_required", "the server restarted; resupply the params "+strings.Join(missing, ", ")+" with Resume")
	}
	if a.answered() {
		// The answer was stored but not the end of the run: it ended.
		return a.setStatus(session.StatusReady, "")
	}
	if n := len(a.st.turns); n > 0 && a.st.turns[n-1].LLM != nil && len(a.st.turns[n-1].LLM.ToolCalls) > 0 {
		return a.recoverRound(ctx, a.st.turns[n-1].LLM.ToolCalls)
	}
	return a.startRun(agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY, 0)
}

// recoverRound settles the round that was in flight: attached calls get an
// aborted result; deferred calls keep waiting for their clients.
func (a *actor) recoverRound(ctx context.Context, calls []session.ToolCall) error {
	st, err := a.waitingRound(ctx)
	if err != nil {
		return err
	}
	if st == nil {
		results := make([]session.ToolResult, len(calls))
		for i, c := range calls {
			results[i] = session.ToolResult{CallID: c.ID, Name: c.Name, Text: abortedText, Status: session.ResultAborted}
		}
		if err := a.appendUserTurn(session.UserTurn{ToolResults: results}); err != nil {
			return err
		}
		return a.startRun(agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY, 0)
	}
	for _, cs := range st.calls {
		if cs.result != nil || (cs.tool != nil && cs.tool.Mode() == session.CallDeferred) {
			continue
		}
		res := session.ToolResult{CallID: cs.call.ID, Name: cs.call.Name, Text: abortedText, Status: session.ResultAborted}
		if _, err := a.r.store.CompleteDeferred(ctx, cs.token, res, a.r.now()); err != nil {
			return err
		}
		cs.result = &res
	}
	if unanswered(st) > 0 {
		return a.setStatus(session.StatusWaiting, StopWaiting)
	}
	return a.continueRound(st, agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY)
}

// fail marks a session without an active run as failed.
func (a *actor) fail(code, reason string) error {
	if err := a.setStatus(session.StatusFailed, reason); err != nil {
		return err
	}
	a.emit(&agentsv1.Event{Kind: "session.failed", Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Reason: reason, Code: code}}})
	return nil
}
