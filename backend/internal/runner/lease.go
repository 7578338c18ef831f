package runner

import (
	"context"
	"errors"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// A session's hold, as its actor keeps it (see placement.Placement).
//
//   - An actor loads its session only once it holds it (takeHold), and a
//     session it creates takes its hold as soon as it is stored. What it
//     then reads is the truth for as long as it holds the session.
//   - Every change the actor writes carries the hold's fence (see
//     write): the store refuses it, alone in its group, once another
//     server took the session over.
//   - A hold found lost, by the placement or by a refused write, stops
//     the session here at once (loseLease): its run is cancelled, nothing
//     more is written (neither again nor to settle it from the store:
//     that is the new holder's business), and the actor goes.
//   - An eviction gives the hold up (placement.Release); as the server
//     drains, a placement that hands sessions over has each given up as
//     soon as it has no run (handOverIdle), or let go (letGo).

// errLeaseLost is the cause a run is cancelled with when another server
// took its session over: its calls end without a result to write, and a
// helper call leaves its child to the new holder.
var errLeaseLost = errors.New("another server took the session over")

// takeHold takes the actor's session for this server, before the
// session is read: errs.Conflict (lease_held) when another server
// holds it.
func (a *actor) takeHold(ctx context.Context) error {
	h, err := a.r.place.Hold(ctx, a.id)
	if err != nil {
		return err
	}
	a.hold = h
	return nil
}

// fence is the fence the actor's writes are made under; nil without one.
func (a *actor) fence() *store.Fence {
	if a.hold == nil {
		return nil
	}
	return a.hold.Fence
}

// write commits a change of the actor's session, under its hold. A
// session another server took over is written no more: the write is
// refused before it reaches the store, and the session stops here (see
// loseLease); the caller gets lease_held, naming the new holder.
func (a *actor) write(ctx context.Context, ch *store.Change, evs []*agentsv1.Event) error {
	if err := a.ws.writeRefusal(); err != nil {
		return err
	}
	ch.Fence = a.fence()
	err := a.r.write(ctx, ch, evs)
	if committer.Classify(err) == committer.Lost {
		a.loseLease(err)
		return a.ws.writeRefusal()
	}
	return err
}

// loseLease stops what the actor does for a session another server took
// over: its run is cancelled at once, the actor writes nothing more, and
// once the command in hand is done it goes (see abandon).
func (a *actor) loseLease(cause error) {
	if !a.ws.holds() {
		return
	}
	a.log().Warn("another server took the session over; it stops here", "session", a.id, "cause", cause)
	if a.run != nil {
		a.run.lose(errLeaseLost)
	}
	a.ws.lose(a.r.place.Moved(a.r.ctx, a.id))
}

// abandon unloads a session whose lease was lost, writing nothing: what
// it kept in memory is no longer the truth. Whoever holds it or asks for
// it next is told where it runs now.
func (a *actor) abandon() {
	a.closeRun()
	a.ws.abandon()
	a.waiting = nil
	a.r.place.Lost(a.id, a.hold)
	a.hold = nil
	wake(&a.idleWaiters)
	a.releaseReads()
}

// handOverIdle gives the session up to the other servers when the server
// drains, its placement hands sessions over, and the session has no run
// (none of its own, or the one the drain stopped at a step boundary) and
// nothing left to write: another server takes it up now, not once every
// run here stopped. The actor then goes, as after letGo; the serve loop
// calls it after every command while the server drains, so a session
// loaded meanwhile goes too.
func (a *actor) handOverIdle() {
	if !a.r.handsOver.Load() || a.hold == nil || !a.ws.holds() || a.run != nil || !a.ws.quiet() {
		return
	}
	h := a.hold
	needs := a.needsServer()
	a.letGo()
	ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
	defer cancel()
	a.r.place.HandOver(ctx, h, needs)
}

// handOverTimeout bounds a hand-over of one session.
const handOverTimeout = 5 * time.Second

// handedOver reports whether err is the answer of a session this server
// gave up as it drains (see handOverIdle), or can no longer load: it is
// read from the store, as a session another server holds is.
func (r *Runner) handedOver(err error) bool {
	return r.handsOver.Load() && errs.CodeOf(err) == errClosing.Code
}

// letGo unloads a session whose lease is being given up, and reports
// whether it needs a server (see needsServer).
func (r *Runner) letGo(ctx context.Context, id string) bool {
	a, release, ok := r.loaded(id)
	if !ok {
		return true
	}
	defer release()
	needs := true
	_ = a.call(ctx, func(a *actor) error {
		needs = a.needsServer()
		a.letGo()
		return nil
	})
	return needs
}

// needsServer says a session let go needs another server to take it up
// now: a run the store says is going, or mail that would wake it.
func (a *actor) needsServer() bool {
	st := a.st.meta.Status
	return st == session.StatusRunning || (st == session.StatusReady && len(a.st.mail) > 0)
}

// letGo stops what the actor does for a session whose lease it gives up:
// its run is closed where it stands, and the actor goes once the command
// in hand is done.
func (a *actor) letGo() {
	a.closeRun()
	// As for a lost lease, nothing more is written, a late report of a
	// call included; but nothing was lost.
	a.ws.end(errClosing)
	a.hold = nil
}
