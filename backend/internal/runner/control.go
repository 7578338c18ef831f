package runner

import (
	"context"
	"sort"
	"strings"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// CancelRun stops the active run now; the session becomes ready. Calls in
// flight are cancelled, deferred calls of a waiting round get a cancelled
// result. Without a run it does nothing. It returns once the run has
// stopped, with the session as the run left it.
func (r *Runner) CancelRun(ctx context.Context, owner, id string) (session.Meta, error) {
	meta, _, err := onHolder(ctx, r, owner, id, cancelCommand{})
	return meta, err
}

// cancelCommand is CancelRun on the session's holder.
type cancelCommand struct{}

func (cancelCommand) name() string { return "cancel_run" }

func (cancelCommand) apply(ctx context.Context, r *Runner, at target) (session.Meta, error) {
	return r.cancelLocal(ctx, at.owner, at.session)
}

// cancelLocal is CancelRun on this server.
func (r *Runner) cancelLocal(ctx context.Context, owner, id string) (session.Meta, error) {
	var idle <-chan struct{}
	meta, err := r.control(ctx, owner, id, func(a *actor) error {
		if err := a.cancelRun(""); err != nil {
			return err
		}
		idle = a.waitIdle()
		return nil
	})
	if err != nil {
		return meta, err
	}
	select {
	case <-idle:
	case <-ctx.Done():
		return meta, ctx.Err()
	}
	return r.control(ctx, owner, id, func(*actor) error { return nil })
}

// CancelAttached cancels the attached tool calls in flight, and the calls
// that wait for approval, which the server would run; they return a
// cancelled result and the run goes on. It returns how many it cancelled.
func (r *Runner) CancelAttached(ctx context.Context, owner, id string) (session.Meta, int, error) {
	ans, _, err := onHolder(ctx, r, owner, id, cancelAttachedCommand{})
	return ans.Meta, ans.Cancelled, err
}

// cancelAttachedCommand is CancelAttached on the session's holder.
type cancelAttachedCommand struct{}

func (cancelAttachedCommand) name() string { return "cancel_attached" }

func (cancelAttachedCommand) apply(ctx context.Context, r *Runner, at target) (cancelledAnswer, error) {
	return r.cancelAttachedLocal(ctx, at.owner, at.session)
}

// cancelledAnswer is what CancelAttached returns.
type cancelledAnswer struct {
	Meta      session.Meta `json:"meta"`
	Cancelled int          `json:"cancelled"`
}

func (r *Runner) cancelAttachedLocal(ctx context.Context, owner, id string) (cancelledAnswer, error) {
	n := 0
	meta, err := r.control(ctx, owner, id, func(a *actor) error {
		settled, err := a.settleApprovals(cancelledApproval, agentsv1.RunTrigger_RUN_TRIGGER_RESUME)
		if err != nil {
			return err
		}
		n = a.cancelAttached() + settled
		return nil
	})
	if err != nil {
		return cancelledAnswer{}, err // n is the actor's to write until fn ran (see actor.call)
	}
	return cancelledAnswer{Meta: meta, Cancelled: n}, nil
}

// Pause stops the run at the next step boundary (status paused). Without a
// run it does nothing.
func (r *Runner) Pause(ctx context.Context, owner, id string) (session.Meta, error) {
	meta, _, err := onHolder(ctx, r, owner, id, pauseCommand{})
	return meta, err
}

// pauseCommand is Pause on the session's holder.
type pauseCommand struct{}

func (pauseCommand) name() string { return "pause" }

func (pauseCommand) apply(ctx context.Context, r *Runner, at target) (session.Meta, error) {
	return r.pauseLocal(ctx, at.owner, at.session)
}

func (r *Runner) pauseLocal(ctx context.Context, owner, id string) (session.Meta, error) {
	return r.control(ctx, owner, id, func(a *actor) error {
		if a.run != nil {
			a.run.pause = true
		}
		return nil
	})
}

// Resume continues a session: a paused run, a waiting round whose deferred
// calls are all answered, a round whose helper calls wait for their
// children (they wait again, and the session with them while a child
// still waits), a run the server stopped, or a failed run (after a model
// error, or params that a restart lost and the client now resupplies).
// The params reach another server holding the session in the command,
// whose body the store clears once it is applied.
//
// A budget stops a tree wherever its model calls are, so Resume first
// resumes the session's descendants that a budget paused (without the
// params, which a helper's session goes on without): resuming the root
// resumes the tree.
func (r *Runner) Resume(ctx context.Context, owner, id string, params map[string]string) (session.Meta, error) {
	if err := r.resumeBelow(ctx, owner, id); err != nil {
		return session.Meta{}, err
	}
	return r.resumeOne(ctx, owner, id, params)
}

// resumeOne resumes one session, on the server that holds it.
func (r *Runner) resumeOne(ctx context.Context, owner, id string, params map[string]string) (session.Meta, error) {
	meta, _, err := onHolder(ctx, r, owner, id, resumeCommand{Params: params})
	return meta, err
}

// resumeCommand is the resume of one session on its holder.
type resumeCommand struct {
	Params map[string]string `json:"params,omitempty"`
}

func (resumeCommand) name() string { return "resume" }

func (b resumeCommand) apply(ctx context.Context, r *Runner, at target) (session.Meta, error) {
	return r.resumeLocal(ctx, at.owner, at.session, b.Params)
}

func (r *Runner) resumeLocal(ctx context.Context, owner, id string, params map[string]string) (session.Meta, error) {
	meta, err := r.control(ctx, owner, id, func(a *actor) error {
		a.setParams(params)
		return a.resumeRun()
	})
	if err == nil && meta.ParentID != "" {
		// A parent whose helper call rests on this session runs again
		// before Resume returns, as the session does.
		r.childMoved(ctx, meta.ParentID, meta.ID)
	}
	return meta, err
}

// control runs an operation on a session of the owner and returns the
// session's metadata afterwards.
func (r *Runner) control(ctx context.Context, owner, id string, fn func(a *actor) error) (session.Meta, error) {
	var meta session.Meta
	err := r.withSession(ctx, id, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return err
		}
		if err := fn(a); err != nil {
			return err
		}
		meta = a.st.meta
		return nil
	})
	if err != nil {
		// A caller that gave up leaves fn queued (see actor.call): meta
		// is the actor's to write until it ran.
		return session.Meta{}, err
	}
	return meta, nil
}

// cancelRun stops the run, or settles a waiting round as cancelled.
func (a *actor) cancelRun(reason string) error {
	if reason == "" {
		reason = StopCancelled
	}
	if a.run != nil {
		a.run.stop = reason
		a.cutStep()
		return nil
	}
	if a.st.meta.Status == session.StatusPaused {
		// The paused run is over: say so, as for a run stopped in flight.
		return a.setStatus(session.StatusReady, reason, stoppedEvent(session.StatusReady, reason))
	}
	st := a.waiting
	if st == nil {
		return nil
	}
	answers := a.settlePending(st, session.ResultCancelled, "the run was cancelled")
	e := a.edit()
	a.storeRound(e, st, answers...)
	e.meta.Status, e.meta.StatusReason = session.StatusReady, reason
	e.meta.PendingCalls = 0
	e.emit(a, stoppedEvent(session.StatusReady, reason))
	if err := a.apply(e); err != nil {
		return err
	}
	answered(answers...)
	a.dropDeferred(st)
	a.waiting = nil
	return nil
}

// cancelAttached cancels the attached calls in flight.
func (a *actor) cancelAttached() int {
	if a.run == nil || a.run.step == nil {
		return 0
	}
	n := 0
	for _, cs := range a.run.step.calls {
		if cs.result == nil && cs.cancel != nil {
			cs.cancel()
			n++
		}
	}
	return n
}

// resumeRun continues whatever the session was doing when it stopped.
func (a *actor) resumeRun() error {
	if a.run != nil {
		a.run.pause = false
		return nil
	}
	if a.st.meta.Status == session.StatusRunning {
		// Its run was stopped with the server: it goes on as a restart
		// takes it up, its helper calls waiting for their children again.
		return a.recoverRun()
	}
	if st := a.waiting; st != nil && hasResting(st) {
		return a.takeUpHelpers("")
	}
	if missing := a.missingParams(); len(missing) > 0 {
		return paramsRequired(missing)
	}
	switch a.st.meta.Status {
	case session.StatusReady:
		// A ready session runs again only for mail, or for a question
		// nobody answered: a fork cut at a user turn holds one.
		if len(a.st.mail) == 0 && !a.questioned() {
			return nil
		}
	case session.StatusWaiting:
		if st := a.waiting; st != nil {
			if n := unanswered(st); n > 0 {
				return errs.FailedPrecondition(errs.CodeCallsPending, "%d deferred calls are not answered yet", n)
			}
			return a.continueRound(a.edit(), st, agentsv1.RunTrigger_RUN_TRIGGER_RESUME)
		}
	}
	if a.answered() {
		return a.setStatus(session.StatusReady, "") // nothing to continue
	}
	return a.startRun(a.edit(), agentsv1.RunTrigger_RUN_TRIGGER_RESUME, 0)
}

// missingParams lists the required params of the agent without a value.
func (a *actor) missingParams() []string {
	if a.agent == nil {
		return nil
	}
	return missingIn(a.agent.Params, a.params)
}

// missingIn lists the required params without a value in values.
func missingIn(declared []agentfile.Param, values map[string]string) []string {
	var missing []string
	for _, p := range declared {
		if _, ok := values[p.Name]; p.Required && !ok {
			missing = append(missing, p.Name)
		}
	}
	sort.Strings(missing)
	return missing
}

func paramsRequired(missing []string) error {
	return errs.FailedPrecondition(errs.CodeParamsRequired, "missing required params: %s", strings.Join(missing, ", ")).
		With("missing", strings.Join(missing, ","))
}
