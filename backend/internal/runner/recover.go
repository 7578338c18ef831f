package runner

import (
	"context"
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// abortedText is the result of a call that was in flight when the server
// stopped: the model learns the call may or may not have had its effect.
const abortedText = "the server restarted while this call was running; it may or may not have completed"

// Recover restores what was live when the server last stopped: the watch
// index, the runs that were active, and sessions whose mail arrived but
// did not wake them. Calls that were in flight get an aborted result,
// except helper calls, which wait for their child again; the interrupted
// model call is simply made again. Sessions that wait for a helper's
// child are taken up if the child went on while nobody could tell them.
//
// The placement decides what this server recovers: a server alone on
// its database recovers every session (recoverAll); one of several only
// the sessions that need a server and have none (see
// placement/leased).
func (r *Runner) Recover(ctx context.Context) error {
	return r.place.Recover(ctx)
}

// recoverAll is the recovery of a server that holds every session.
func (r *Runner) recoverAll(ctx context.Context) error {
	if err := r.loadWatches(ctx); err != nil {
		return err
	}
	metas, err := r.store.ListByStatus(ctx, session.StatusRunning)
	if err != nil {
		return err
	}
	for _, m := range metas {
		err := r.withSession(ctx, m.ID, func(a *actor) error { return a.recoverRun() })
		if err != nil {
			r.log.Error("recover session", "session", m.ID, "err", err)
			continue
		}
		r.log.Info("recovered session", "session", m.ID)
	}
	if err := r.recheckHelperWaits(ctx); err != nil {
		return err
	}
	waiting, err := r.store.SessionsWithPendingMail(ctx)
	if err != nil {
		return err
	}
	for _, id := range waiting {
		err := r.withSession(ctx, id, func(a *actor) error {
			// Only ready sessions: a failed one waits for a client, as it
			// did before the restart.
			return a.recoverSession()
		})
		if err != nil {
			r.log.Error("wake session with mail", "session", id, "err", err)
		}
	}
	return nil
}

// recoverRun restarts the run of a session found running with no run: at
// start, or when a helper call waits for a child that was not recovered
// yet. It does nothing for a session that has a run.
func (a *actor) recoverRun() error {
	if a.run != nil || a.st.meta.Status != session.StatusRunning {
		return nil
	}
	err := a.resumeInterrupted()
	if err != nil && a.run == nil && a.st.meta.Status == session.StatusRunning && errs.CodeOf(err) != errClosing.Code {
		// The run could not go on (the store refused its start, no run
		// was free): the session must not say running without a run.
		// It fails, and a client resumes it.
		a.fail(errs.CodeRecoveryFailed, "the run could not resume after the restart: "+publicText(err)+"; resume to try again")
	}
	return err
}

// resumeInterrupted takes up a run that was interrupted.
func (a *actor) resumeInterrupted() error {
	if a.answered() {
		// The answer was stored but not the end of the run: it ended.
		return a.setStatus(session.StatusReady, "")
	}
	if a.dangling() {
		return a.recoverRound()
	}
	if missing := a.missingParams(); len(missing) > 0 {
		a.needParams(missing)
		return nil
	}
	return a.startRun(a.edit(), agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY, 0)
}

// needParams fails a session whose run needs params a restart lost: a
// client must resupply them (Resume).
func (a *actor) needParams(missing []string) {
	a.fail(errs.CodeParamsRequired, "the server restarted; resupply the params "+strings.Join(missing, ", ")+" with Resume")
}

// recoverRound settles the round that was in flight. Every attached call
// without a result is taken up again (see launch): a helper call whose
// child is known waits for it again, any other call gets an aborted
// result (approved calls among them); deferred calls keep waiting for
// their clients. The round is settled before anything else, so no call
// is left without a result.
func (a *actor) recoverRound() error {
	st := a.waiting
	if st == nil {
		st = a.roundOf(len(a.st.turns) - 1)
	}
	var again []*callState
	for _, cs := range st.calls {
		if cs.result == nil && (cs.call.Mode != session.CallDeferred || cs.approved) {
			again = append(again, cs)
		}
	}
	missing := a.missingParams()
	switch {
	case len(again) > 0:
		// A helper's child goes on without its parent's params: the call
		// waits for it even when they are missing, and the run stops for
		// them at its next step (see beginStep), its round settled.
		if err := a.openRunWith(a.edit(), agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY, 0, false); err != nil {
			return err
		}
		st.ctx, st.cancel = context.WithCancel(a.run.ctx)
		st.started = a.r.now()
		st.progress.stored = true
		a.run.step = st
		a.run.steps++
		for _, cs := range again {
			a.launch(st, cs, true)
		}
		return nil
	case unanswered(st) > 0:
		// Deferred calls wait for their clients.
		a.waiting = st
		return a.setStatus(session.StatusWaiting, StopWaiting, stoppedEvent(session.StatusWaiting, StopWaiting))
	case len(missing) > 0:
		e := a.edit()
		a.storeRound(e, st)
		if err := a.apply(e); err != nil {
			return err
		}
		a.waiting = nil
		a.needParams(missing)
		return nil
	}
	return a.continueRound(a.edit(), st, agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY)
}

// roundOf rebuilds, from the history, the round of the model turn at
// index i, whose calls have no rows in the store. Its calls find their
// tools when they run (see launch).
func (a *actor) roundOf(i int) *step {
	st := &step{ctx: context.Background(), cancel: func() {}, turnIndex: i}
	for _, call := range a.st.turns[i].LLM.ToolCalls {
		st.calls = append(st.calls, &callState{call: call})
	}
	return st
}

// abortedResult is the result of a call that was in flight when the
// server stopped and cannot be taken up.
func abortedResult(call session.ToolCall) session.ToolResult {
	return session.ToolResult{CallID: call.ID, Name: call.Name, Text: abortedText, Status: session.ResultAborted}
}

// recheckHelperWaits checks the sessions that wait for a helper's child:
// a child that went on, or came to rest, as the server stopped could not
// tell its parent (see notePhase).
func (r *Runner) recheckHelperWaits(ctx context.Context) error {
	metas, err := r.store.ListByStatus(ctx, session.StatusWaiting)
	if err != nil {
		return err
	}
	for _, m := range metas {
		if !strings.HasPrefix(m.StatusReason, helperWaitPrefix) {
			continue
		}
		// Each child is asked here, not off the actors as at run time,
		// so the server answers its first request only once the parents
		// whose children went on are taken up.
		var children []string
		err := r.withSession(ctx, m.ID, func(a *actor) error {
			children = a.restingChildren()
			return nil
		})
		if err != nil {
			r.log.Error("check a session that waits for a helper", "session", m.ID, "err", err)
			continue
		}
		for _, child := range children {
			r.recheckChild(m.ID, child)
		}
	}
	return nil
}

// recoverSession takes up what a session was doing when its server
// stopped (see Recover): its run, or, for a ready session, a run for its
// mail. A failed or paused session waits for a client, as it did.
func (a *actor) recoverSession() error {
	if err := a.recoverRun(); err != nil {
		return err
	}
	if a.run == nil && a.st.meta.Status == session.StatusReady && len(a.st.mail) > 0 {
		return a.wake(agentsv1.RunTrigger_RUN_TRIGGER_MAIL)
	}
	return nil
}
