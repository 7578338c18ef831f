package runner

import (
	"context"

	"github.com/google/uuid"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Reasons stored with a round's call rows.
const (
	// reasonClientTool marks a call a client answers with CompleteCall.
	reasonClientTool = "client_tool"
	// reasonAttached marks a call the server runs, recorded only because
	// its round also has deferred calls.
	reasonAttached = "attached"
)

// roundRows returns the store rows of a round that has deferred calls: one
// per call, in call order, so the whole round survives a restart. A round
// without deferred calls needs none.
func (a *actor) roundRows(st *step, calls []session.ToolCall) []session.DeferredCall {
	deferred := false
	for _, c := range calls {
		if c.Mode == session.CallDeferred {
			deferred = true
		}
	}
	if !deferred {
		return nil
	}
	now := a.r.now()
	rows := make([]session.DeferredCall, len(calls))
	for i, c := range calls {
		reason := reasonAttached
		if c.Mode == session.CallDeferred {
			reason = reasonClientTool
		}
		rows[i] = session.DeferredCall{Token: uuid.NewString(), SessionID: a.id, Call: c, Reason: reason, Created: now, Round: st.turnIndex}
	}
	return rows
}

// attachedDone runs when the last attached call of a round finished. The
// round goes on at once when nothing else is outstanding; otherwise the run
// stops and waits for clients.
func (a *actor) attachedDone(st *step) {
	st.toolsEnded = a.r.now()
	if a.run != nil && a.run.stop != "" {
		// The run is being cancelled: deferred calls will not be answered.
		a.settlePending(st, session.ResultCancelled, "the run was cancelled")
	}
	if unanswered(st) == 0 && (!st.recorded || st.resume) {
		a.callsDone(st)
		return
	}
	a.endRun(session.StatusWaiting, StopWaiting, "")
}

// storeRound appends the results of a round whose calls all have one, in
// call order and with the pending mail, as the next user turn; the round no
// longer waits.
func (a *actor) storeRound(st *step) error {
	results := make([]session.ToolResult, len(st.calls))
	for i, c := range st.calls {
		results[i] = *c.result
	}
	if err := a.appendUserTurn(session.UserTurn{ToolResults: results}); err != nil {
		return err
	}
	a.waiting = nil
	return nil
}

// unanswered counts the calls of a round without a result.
func unanswered(st *step) int {
	n := 0
	for _, c := range st.calls {
		if c.result == nil {
			n++
		}
	}
	return n
}

// settlePending gives every unanswered call of a round the same result.
func (a *actor) settlePending(st *step, status session.ResultStatus, text string) {
	for _, cs := range st.calls {
		if cs.result != nil {
			continue
		}
		res := session.ToolResult{CallID: cs.call.ID, Name: cs.call.Name, Text: text, Status: status}
		cs.result = &res
		if cs.token != "" {
			if _, err := a.r.store.CompleteDeferred(a.r.ctx, cs.token, res, a.r.now()); err != nil && errs.KindOf(err) != errs.KindFailedPrecondition {
				a.r.log.Error("settle call", "session", a.id, "call", cs.call.ID, "err", err)
			}
		}
	}
	a.dropDeferred(st)
}

// dropDeferred removes a round's answered calls from the pending list.
func (a *actor) dropDeferred(st *step) {
	answered := map[string]bool{}
	for _, cs := range st.calls {
		if cs.result != nil && cs.token != "" {
			answered[cs.token] = true
		}
	}
	kept := a.st.deferred[:0]
	for _, d := range a.st.deferred {
		if !answered[d.Token] {
			kept = append(kept, d)
		}
	}
	a.st.deferred = kept
	a.st.meta.PendingCalls = len(kept)
}

// waitingRound returns the round that waits for clients, rebuilding it
// from the store after a restart or an eviction; nil when there is none.
func (a *actor) waitingRound(ctx context.Context) (*step, error) {
	if a.waiting != nil {
		return a.waiting, nil
	}
	n := len(a.st.turns)
	if n == 0 || a.st.turns[n-1].LLM == nil || len(a.st.turns[n-1].LLM.ToolCalls) == 0 {
		return nil, nil
	}
	rows, err := a.r.store.DeferredRound(ctx, a.id, n-1)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	byCall := map[string]session.DeferredCall{}
	for _, r := range rows {
		byCall[r.Call.ID] = r
	}
	st := &step{ctx: context.Background(), cancel: func() {}, turnIndex: n - 1, recorded: true}
	for _, call := range a.st.turns[n-1].LLM.ToolCalls {
		row := byCall[call.ID]
		cs := &callState{call: call, token: row.Token, result: row.Result}
		if a.agent != nil {
			cs.tool, _ = a.agent.Tool(call.Name)
		}
		st.calls = append(st.calls, cs)
	}
	a.waiting = st
	return st, nil
}

// CallAnswer is a client's answer to a deferred call.
type CallAnswer struct {
	Text string
	// Failed makes the answer an error result.
	Failed bool
}

// CompleteCall answers a deferred call by its token. When it was the last
// unanswered call of its round and resume is set (now or by an earlier
// completion), the run continues. It returns the session and how many calls
// of the round remain unanswered.
func (r *Runner) CompleteCall(ctx context.Context, owner, token string, answer CallAnswer, resume bool, params map[string]string) (session.Meta, int, error) {
	row, err := r.store.GetDeferred(ctx, token)
	if err != nil {
		return session.Meta{}, 0, err
	}
	var meta session.Meta
	remaining := 0
	err = r.withSession(ctx, row.SessionID, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return errs.NotFound("unknown_token", "unknown continuation token")
		}
		if row.Reason != reasonClientTool {
			return errs.FailedPrecondition("call_not_deferred", "call %s is run by the server, not by a client", row.Call.ID)
		}
		a.setParams(params)
		st, err := a.waitingRound(ctx)
		if err != nil {
			return err
		}
		res := session.ToolResult{CallID: row.Call.ID, Name: row.Call.Name, Text: answer.Text, Status: session.ResultOK}
		if answer.Failed {
			res.Status = session.ResultError
		}
		if _, err := r.store.CompleteDeferred(ctx, token, res, r.now()); err != nil {
			return err
		}
		if st == nil {
			meta = a.st.meta
			return nil // a round already settled (cancelled) in memory
		}
		for _, cs := range st.calls {
			if cs.token == token {
				cs.result = &res
			}
		}
		a.dropDeferred(st)
		if resume {
			st.resume = true
		}
		remaining = unanswered(st)
		a.emitUpdated(nil)
		if remaining == 0 && st.running == 0 && st.resume && a.run == nil {
			if err := a.continueRound(st, agentsv1.RunTrigger_RUN_TRIGGER_RESUME); err != nil {
				return err
			}
		}
		meta = a.st.meta
		return nil
	})
	return meta, remaining, err
}

// continueRound opens a run that starts from a completed round's results.
func (a *actor) continueRound(st *step, trigger agentsv1.RunTrigger) error {
	if err := a.openRun(trigger, 0); err != nil {
		return err
	}
	a.callsDone(st)
	return nil
}
