package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
)

// A helper call waits for its child session. While the child runs, the
// call runs too (on its goroutine, see runHelper), and so does the
// parent. When the child stops to wait for a client (an approval, a
// client tool's answer, a pause), the call rests: it has no goroutine
// and no result, and once the round's other calls are done the parent
// stops too, `waiting`, its status reason naming the child and what it
// waits for. Its round is stored like a round with deferred calls, the
// resting call's row without an answer, so an eviction or a restart
// keeps it.
//
// The parent is taken up again, the resting call rejoining its child
// (see launch), whenever the child goes on: the child tells its parent
// when it leaves its wait and when it comes to rest (notePhase), an
// answer to the child's call does so before it returns (CompleteCall),
// and so does a Resume of the child or of the parent. The parent runs
// again while the child runs, and the call's result is the child's
// answer. Recover checks the waiting parents once at start, for a child
// that went on while nobody could tell them.

// helperWaitPrefix starts the status reason of a session that waits for
// its helper's child.
const helperWaitPrefix = "waits for the helper session "

// helperWaits is the status reason of a parent whose helper agent's child
// waits: what is how the child says what it waits for (see waitsFor).
func helperWaits(child, agent, what string) string {
	return fmt.Sprintf("%s%s (%s), which %s", helperWaitPrefix, child, agent, what)
}

// waitsFor says what a session that has no run waits for: the calls a
// client answers, its own helper's child, or a Resume; "" when it is at
// rest or was stopped by the server (it resumes by itself).
func (a *actor) waitsFor() string {
	if a.run != nil {
		return ""
	}
	switch a.st.meta.Status {
	case session.StatusPaused:
		return "is paused"
	case session.StatusWaiting:
	default:
		return ""
	}
	var what []string
	for _, d := range a.st.deferred {
		if d.Reason == reasonApproval {
			what = append(what, "approval of "+d.Call.Name)
		} else {
			what = append(what, "an answer to "+d.Call.Name)
		}
	}
	if reason := a.st.meta.StatusReason; strings.HasPrefix(reason, helperWaitPrefix) {
		what = append(what, reason[len("waits for "):])
	}
	if len(what) == 0 {
		return "waits"
	}
	return "waits for " + strings.Join(what, " and ")
}

// resting reports whether a call of a round waits for its helper's child
// with no goroutine: it has no result, does not run, and is not a
// client's to answer. A round rebuilt from the store after an eviction
// or a restart has its resting calls as rows without an answer.
func resting(cs *callState) bool {
	return cs.result == nil && !cs.running && (cs.call.Mode != session.CallDeferred || cs.approved)
}

// hasResting reports whether a call of the round rests.
func hasResting(st *step) bool {
	for _, cs := range st.calls {
		if resting(cs) {
			return true
		}
	}
	return false
}

// restingWaits is the status reason of a round whose calls all ended but
// some rest: what the first of them waits for; "" when none rests.
func restingWaits(st *step) string {
	for _, cs := range st.calls {
		if resting(cs) && cs.waits != "" {
			return cs.waits
		}
	}
	return ""
}

// waitForHelpers ends the run of a round whose calls ended while some of
// them rest: the session waits, its round stored so it outlives the
// process, and its status says for which child and what. It then checks
// the children once more: one that went on while the parent stopped told
// a parent that was not yet waiting.
func (a *actor) waitForHelpers(st *step, reason string) {
	e := a.edit()
	if !st.recorded {
		a.recordRound(e, st)
	}
	a.markStopped(e, session.StatusWaiting, StopWaiting, "")
	e.meta.StatusReason = reason
	a.waiting = st
	a.closeRun()
	a.settle(e, session.StatusWaiting, reason, "")
	a.recheckHelpers()
}

// recordRound adds to e rows for every call of a round that had none,
// with the results the calls have: the round waits for helpers' children,
// and must survive an eviction or a restart as a round with deferred
// calls does. It goes on by itself once every call has its result, as no
// client is asked.
func (a *actor) recordRound(e *edit, st *step) {
	now := a.r.now()
	for _, cs := range st.calls {
		cs.token = uuid.NewString()
		e.deferred = append(e.deferred, session.DeferredCall{Token: cs.token, SessionID: a.id, Call: cs.call, Reason: reasonAttached, Created: now, Round: st.turnIndex})
		if cs.result != nil {
			e.completed = append(e.completed, storeCompletion(cs, now))
			cs.stored = true
		}
	}
	st.recorded, st.resume = true, true
}

// childOf returns the child session a helper call runs, from the store
// when the call does not know it yet (a round rebuilt from the store).
func (a *actor) childOf(cs *callState) string {
	if cs.child == "" {
		child, err := a.r.store.HelperChild(a.r.ctx, a.id, cs.call.ID)
		if err != nil {
			a.log().Error("find a helper call's child", "session", a.id, "call", cs.call.ID, "err", err)
		}
		cs.child = child
	}
	return cs.child
}

// takeUpHelpers rejoins the resting calls of the waiting round that wait
// for child ("" for every one), and those of a round rebuilt from the
// store, which do not know yet what their children wait for: the session
// runs again while they wait for their children, and waits again if a
// child still waits. It does nothing when no call rests.
func (a *actor) takeUpHelpers(child string) error {
	st := a.waiting
	if st == nil || (a.run != nil && a.run.step != st) {
		return nil
	}
	var again []*callState
	for _, cs := range st.calls {
		if resting(cs) && (child == "" || cs.waits == "" || a.childOf(cs) == child) {
			again = append(again, cs)
		}
	}
	if len(again) == 0 {
		return nil
	}
	if a.run == nil {
		// A helper's child goes on without its parent's params, so the
		// call waits for it without them too (see recoverRound).
		if err := a.openRunWith(a.edit(), agentsv1.RunTrigger_RUN_TRIGGER_RESUME, 0, false); err != nil {
			return err
		}
		st.ctx, st.cancel = context.WithCancel(a.run.ctx)
		st.started = a.r.now()
		st.progress.stored = true
		a.run.step = st
	}
	for _, cs := range again {
		a.launch(st, cs, true)
	}
	return nil
}

// childMoved takes up the parent's calls that rest waiting for child,
// which went on or came to rest.
func (r *Runner) childMoved(ctx context.Context, parent, child string) {
	err := r.withSession(ctx, parent, func(a *actor) error { return a.takeUpHelpers(child) })
	if err != nil && errs.KindOf(err) != errs.KindNotFound && !errors.Is(err, errClosing) {
		r.log.Error("take up a helper call whose child went on", "session", parent, "child", child, "err", err)
	}
}

// recheckHelpers asks, off the actor, each child a resting call of the
// waiting round waits for whether it still waits, and takes up the calls
// of those that do not.
func (a *actor) recheckHelpers() {
	parent := a.id
	for _, child := range a.restingChildren() {
		a.r.goroutines.Go(func() { a.r.recheckChild(parent, child) })
	}
}

// restingChildren returns the children the resting calls of the waiting
// round wait for.
func (a *actor) restingChildren() []string {
	st := a.waiting
	if st == nil {
		return nil
	}
	var children []string
	for _, cs := range st.calls {
		if resting(cs) {
			if child := a.childOf(cs); child != "" {
				children = append(children, child)
			}
		}
	}
	return children
}

// recheckChild takes up parent's calls that wait for child unless child
// still waits. It must run off both actors.
func (r *Runner) recheckChild(parent, child string) {
	var held bool
	err := r.withSession(r.ctx, child, func(c *actor) error {
		held = c.phaseNow() == phaseHeld
		return nil
	})
	if err == nil && held {
		return
	}
	r.childMoved(r.ctx, parent, child)
}

// phase is where a session stands, as its parent's resting calls see it.
type phase uint8

const (
	phaseUnknown phase = iota
	// phaseHeld: no run, and none starts without a client (waiting,
	// paused), or the run was stopped by the server and is not resumed
	// yet.
	phaseHeld
	phaseRunning
	// phaseRest: no run, and it takes input.
	phaseRest
	phaseGone
)

func (a *actor) phaseNow() phase {
	switch {
	case a.ws.gone():
		return phaseGone
	case a.run != nil:
		return phaseRunning
	case a.st.meta.Status.AcceptsInput():
		return phaseRest
	}
	return phaseHeld
}

// notePhase tells the parent of a child session that went on (it left
// its wait) or came to rest or went away, so that a helper call resting
// on it is taken up again. It runs after every command of the actor; the
// parent is told off the actor, as it may be waiting for this one.
func (a *actor) notePhase() {
	if a.st == nil || a.st.meta.ParentID == "" {
		return
	}
	prev, now := a.phase, a.phaseNow()
	a.phase = now
	if prev == phaseUnknown || prev == now || now == phaseHeld {
		return
	}
	parent, child := a.st.meta.ParentID, a.id
	a.r.goroutines.Go(func() { a.r.childMoved(a.r.ctx, parent, child) })
}

// cancelResting settles the resting calls of a round that is cancelled
// without them: their children stop too, as a helper's child stops with
// a call cancelled while it runs (see runHelper).
func (a *actor) cancelResting(st *step) {
	for _, cs := range st.calls {
		if !resting(cs) {
			continue
		}
		child := a.childOf(cs)
		if child == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(a.r.ctx, 5*time.Second)
		if _, err := a.r.CancelRun(ctx, "", child); err != nil && errs.KindOf(err) != errs.KindNotFound {
			a.log().Error("cancel a helper's child", "session", a.id, "child", child, "err", err)
		}
		cancel()
		a.r.subcall(a.callEnv(), events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_SubcallFailed{SubcallFailed: &agentsv1.SubcallFailed{
			ChildSessionId: child, CallId: cs.call.ID, Reason: "cancelled",
		}}}))
	}
}
