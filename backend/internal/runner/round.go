package runner

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// Reasons stored with a round's call rows.
const (
	// reasonClientTool marks a call to a client tool, which a client
	// answers with CompleteCall.
	reasonClientTool = "client_tool"
	// reasonAttached marks a call the server runs, recorded only because
	// its round also has deferred calls, or helper calls that wait for
	// their children (see helperwait.go).
	reasonAttached = store.ReasonAttached
)

// roundRows returns the store rows of a round that has deferred calls: one
// per call, in call order, so the whole round survives a restart. A round
// without deferred calls needs none.
func (a *actor) roundRows(st *step, calls []session.ToolCall, reasons []string) []session.DeferredCall {
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
			reason = reasons[i]
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
	if st.shutdown {
		// A call was cut by the server stopping (a helper whose child
		// goes on at the next start): nothing is stored, the store says
		// running, and the next start picks the round up again.
		a.closeRun()
		return
	}
	if a.run != nil && a.run.stop != "" {
		// The run is being cancelled: deferred calls will not be answered.
		// Their results join those of the round's calls, in memory until
		// the round is stored as it goes on (see callsDone).
		for _, an := range a.settlePending(st, session.ResultCancelled, "the run was cancelled") {
			an.cs.result = &an.res
		}
		a.dropDeferred(st)
	}
	if unanswered(st) == 0 && (!st.recorded || st.resume) {
		a.callsDone(st)
		return
	}
	if reason := restingWaits(st); reason != "" {
		a.waitForHelpers(st, reason)
		return
	}
	a.endRun(session.StatusWaiting, StopWaiting, "")
}

// storeRound adds to e the results of a round whose calls all have one,
// or get one with e (answers), in call order and with the pending mail,
// as the next user turn, with the answers of its recorded calls that
// the store does not hold yet (unless e completes their rows already).
// Once e is applied the round no longer waits.
func (a *actor) storeRound(e *edit, st *step, answers ...callResult) {
	results := make([]session.ToolResult, len(st.calls))
	for i, c := range st.calls {
		res := c.result
		for _, an := range answers {
			if an.cs == c {
				res = &an.res
			}
		}
		results[i] = *res
		completes := slices.ContainsFunc(e.completed, func(done store.Completion) bool { return done.Token == c.token })
		if c.token != "" && !c.stored && !completes {
			e.completed = append(e.completed, store.Completion{Token: c.token, Result: *res, At: a.r.now()})
		}
	}
	a.addUserTurn(e, session.UserTurn{ToolResults: results})
}

// callResult is a result a call of a round gets with a write: it becomes
// the call's once the write is stored (see answered), so a write the
// store refuses leaves the round as it was.
type callResult struct {
	cs  *callState
	res session.ToolResult
}

// answered makes the answers of a stored write their calls' results.
func answered(answers ...callResult) {
	for _, an := range answers {
		res := an.res
		an.cs.result, an.cs.stored = &res, an.cs.token != ""
	}
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

// settlePending returns the same result for every unanswered call of a
// round, for storeRound to write with the round.
func (a *actor) settlePending(st *step, status session.ResultStatus, text string) []callResult {
	a.cancelResting(st)
	var answers []callResult
	for _, cs := range st.calls {
		if cs.result == nil {
			answers = append(answers, callResult{cs: cs, res: session.ToolResult{CallID: cs.call.ID, Name: cs.call.Name, Text: text, Status: status}})
		}
	}
	return answers
}

// dropDeferred removes a round's answered calls from the pending list:
// those with a result, and approved ones, which the server runs.
func (a *actor) dropDeferred(st *step) {
	answered := map[string]bool{}
	for _, cs := range st.calls {
		if (cs.result != nil || cs.approved) && cs.token != "" {
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

// CallAnswer is a client's answer to a deferred call.
type CallAnswer struct {
	// IdempotencyKey makes a retry return the session instead of failing
	// with call_completed.
	IdempotencyKey string
	Text           string
	// Failed makes the answer an error result.
	Failed bool
	// Approval answers a call that waits for approval instead of Text.
	Approval *ApprovalAnswer
}

// CompleteCall answers a deferred call by its token. When it was the last
// unanswered call of its round and resume is set (now or by an earlier
// completion), the run continues. A call that waits for approval takes an
// approval: approved, it runs on the server; refused, the model reads
// why; either way the run continues once the round is complete. It
// returns the session and how many calls of the round remain unanswered.
//
// The call's session may be held by another server, which gets the
// answer (and the params) as a command.
func (r *Runner) CompleteCall(ctx context.Context, owner, token string, answer CallAnswer, resume bool, params map[string]string) (session.Meta, int, error) {
	row, err := r.store.GetDeferred(ctx, token)
	if err != nil {
		return session.Meta{}, 0, r.gone.explain(token, err)
	}
	body := completeCommand{Token: token, Answer: answer, Resume: resume, Params: params, row: row}
	ans, _, err := onHolder(ctx, r, owner, row.SessionID, body)
	return ans.Meta, ans.Remaining, err
}

// completeCommand is CompleteCall on the holder of the call's session.
type completeCommand struct {
	Token  string            `json:"token"`
	Answer CallAnswer        `json:"answer"`
	Resume bool              `json:"resume,omitempty"`
	Params map[string]string `json:"params,omitempty"`
	// row is the call as the accepting server read it; the holder
	// reads it again.
	row session.DeferredCall
}

func (completeCommand) name() string { return "complete_call" }

func (b completeCommand) apply(ctx context.Context, r *Runner, at target) (completeAnswer, error) {
	row := b.row
	if at.forwarded() {
		if b.Answer.IdempotencyKey == "" {
			b.Answer.IdempotencyKey = at.commandKey()
		}
		var err error
		if row, err = r.store.GetDeferred(ctx, b.Token); err != nil {
			return completeAnswer{}, r.gone.explain(b.Token, err)
		}
	}
	return r.completeLocal(ctx, at.owner, row, b.Answer, b.Resume, b.Params)
}

type completeAnswer struct {
	Meta      session.Meta `json:"meta"`
	Remaining int          `json:"remaining"`
}

// completeLocal answers row's call on this server (see CompleteCall).
func (r *Runner) completeLocal(ctx context.Context, owner string, row session.DeferredCall, answer CallAnswer, resume bool, params map[string]string) (completeAnswer, error) {
	token := row.Token
	var meta session.Meta
	remaining := 0
	idem := keyFor(answer.IdempotencyKey, opComplete, struct {
		Token, Text string
		Failed      bool
		Approval    *ApprovalAnswer
		Resume      bool
	}{token, answer.Text, answer.Failed, answer.Approval, resume})
	err := r.withSession(ctx, row.SessionID, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return errs.NotFound(errs.CodeUnknownToken, "unknown continuation token")
		}
		// A retry is answered before the answer is judged: the call it
		// answered has its answer now, or runs, which is no reason to
		// refuse the retry.
		if done, err := r.replayed(ctx, a.owner, idem); err != nil || done != nil {
			if err == nil && done.Token != token {
				return errKeyReused
			}
			meta, remaining = a.st.meta, a.st.meta.PendingCalls
			return err
		}
		if err := checkAnswer(row, answer); err != nil {
			return err
		}
		approval := answer.Approval
		if approval != nil {
			resume = true
			if !approval.Approve {
				answer.Text, answer.Failed = notApprovedText, true
				if approval.Reason != "" {
					answer.Text += ": " + approval.Reason
				}
			}
		}
		st := a.waiting
		var cs *callState
		if st != nil {
			for _, c := range st.calls {
				if c.token == token {
					cs = c
				}
			}
		}
		if cs == nil || cs.result != nil || cs.approved {
			var res *session.ToolResult
			if cs != nil {
				res = cs.result
			}
			return answeredError(row, res)
		}
		remaining = unanswered(st) - 1
		if approval != nil && approval.Approve {
			a.setParams(params)
			e := a.edit()
			e.idem = r.idempotency(a.owner, idem, keyed{SessionID: a.id, Token: token})
			if err := a.approve(e, st, cs, approval.Always); err != nil {
				return err
			}
			meta = a.st.meta
			return nil
		}
		continues := remaining == 0 && st.running == 0 && (resume || st.resume) && a.run == nil
		if continues {
			// Check before anything is stored: an answer that cannot
			// continue must not be half taken.
			if missing := missingIn(a.agentParams(), a.withParams(params)); len(missing) > 0 {
				return paramsRequired(missing)
			}
			if err := a.r.slots.check(a.owner); err != nil {
				return err
			}
		}
		a.setParams(params)
		res := session.ToolResult{CallID: row.Call.ID, Name: row.Call.Name, Text: answer.Text, Status: session.ResultOK}
		if answer.Failed {
			res.Status = session.ResultError
		}
		e := a.edit()
		// The resume asked for is stored with the answer: the round
		// rebuilt after an eviction or a restart goes on as it would
		// have (see roundFromRows).
		e.completed = []store.Completion{{Token: token, Result: res, At: r.now(), Resume: resume}}
		e.idem = r.idempotency(a.owner, idem, keyed{SessionID: a.id, Token: token})
		e.meta.PendingCalls--
		if continues {
			if err := a.continueRound(e, st, agentsv1.RunTrigger_RUN_TRIGGER_RESUME, callResult{cs: cs, res: res}); err != nil {
				return err
			}
		} else if err := a.apply(e); err != nil {
			return err
		} else {
			answered(callResult{cs: cs, res: res})
		}
		a.dropDeferred(st)
		if resume {
			st.resume = true
		}
		meta = a.st.meta
		return nil
	})
	if err != nil {
		return completeAnswer{}, err // what fn writes is the actor's until it ran (see actor.call)
	}
	if meta.ParentID != "" {
		// A parent whose helper call rests on this session runs again
		// before the answer returns, as the session does.
		r.childMoved(ctx, meta.ParentID, meta.ID)
	}
	return completeAnswer{Meta: meta, Remaining: remaining}, nil
}

// continueRound writes e with the round's results (those its calls have,
// and answers) as the next user turn and the run's start, then goes on
// with the next step.
func (a *actor) continueRound(e *edit, st *step, trigger agentsv1.RunTrigger, answers ...callResult) error {
	a.storeRound(e, st, answers...)
	if err := a.openRun(e, trigger, 0); err != nil {
		return err
	}
	answered(answers...)
	a.waiting = nil
	a.beginStep()
	return nil
}

func storeCompletion(cs *callState, at time.Time) store.Completion {
	return store.Completion{Token: cs.token, Result: *cs.result, At: at}
}
