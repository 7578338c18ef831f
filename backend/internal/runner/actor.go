package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/placement"
	"github.com/agents-os/agents/backend/internal/session"
)

// state is a loaded session: everything the actor owns.
type state struct {
	meta  session.Meta
	turns []session.Turn
	// mail is the pending (undelivered) mail, in delivery order.
	mail []session.Mail
	// deferred are the unanswered deferred calls.
	deferred []session.DeferredCall
	// round are the rows of the newest round as load read them, until
	// restore makes them the waiting round.
	round []session.DeferredCall
}

// actor is the single writer of one live session.
type actor struct {
	r    *Runner
	id   string
	cmds chan func(*actor)
	// refs counts holders (guarded by Runner.mu); an actor with holders is
	// never evicted.
	refs int
	// parked says the actor is idle with no goroutine: its state stays
	// loaded until evict fires, and the next holder or report starts a
	// goroutine again (see Runner.parkOrEvict). It is written under
	// Runner.mu and read without it by post; parkGen and evict are
	// guarded by Runner.mu.
	parked  atomic.Bool
	parkGen uint64
	evict   *time.Timer

	// The fields below belong to the actor goroutine.
	st *state
	// ws is where the session stands with the store (see writestate.go).
	ws    writeState
	agent *catalog.Agent
	// owner is the session's owner, which never changes; goroutines of
	// the session's calls read it.
	owner string
	// params are the session's params, shared with the runner so they
	// outlive an eviction (see Runner.paramsOf).
	params map[string]string
	// prompt is the history rendered for the model (see buildRequest).
	prompt prompt
	// compactAsk, when set, is the instruction of a Compact that waits
	// for the next model call of the run.
	compactAsk *string
	// turnCache keeps the wire encodings of the turns (see TurnCache).
	turnCache *TurnCache
	run       *run
	// waiting is the round whose deferred calls wait for clients.
	waiting *step
	// idleWaiters are closed when no run is active.
	idleWaiters []chan struct{}
	// idleReads are the waiting reads of the session (ReadSession with
	// Wait) while a run is active; dueReads those whose run ended, to be
	// answered once the command in hand is done (see answerReads).
	idleReads, dueReads []*sessionRead
	// phase is where the session was when last looked at, for its parent
	// (see notePhase).
	phase phase
	// hold is this server's hold on the session (see placement.Hold):
	// nil until it is taken, before the session is read, or once a
	// session being created is stored.
	hold *placement.Hold
	// origin is the span context of the caller of the command in hand
	// (see call): a run the command starts is its child (see trace.go).
	origin trace.SpanContext
}

func newActor(r *Runner, id string) *actor {
	return &actor{r: r, id: id, cmds: make(chan func(*actor), 64)}
}

// call runs fn on the actor goroutine and waits for its result. A caller
// that gives up (ctx done) leaves fn queued: it still runs, so what fn
// writes is not the caller's to read once call returned an error.
func (a *actor) call(ctx context.Context, fn func(*actor) error) error {
	done := doneChans.Get().(chan error)
	wrapped := func(a *actor) {
		if err := a.ws.refusal(); err != nil {
			done <- err
			return
		}
		a.origin = trace.SpanContextFromContext(ctx)
		err := fn(a)
		a.origin = trace.SpanContext{}
		done <- err
	}
	select {
	case a.cmds <- wrapped:
	case <-ctx.Done():
		doneChans.Put(done)
		return ctx.Err()
	}
	select {
	case err := <-done:
		doneChans.Put(done)
		return err
	case <-ctx.Done():
		// wrapped still sends on done: it is not given back.
		return ctx.Err()
	}
}

// doneChans are call's answer channels: one a command otherwise, a
// prompt's two requests take three.
var doneChans = sync.Pool{New: func() any { return make(chan error, 1) }}

// post queues fn from another goroutine (a model or tool call reporting
// back). It must never be called from the actor goroutine itself. Once the
// runner closes, reports are dropped: the actor is gone and the store
// still says running, so the next start redoes the work.
func (a *actor) post(fn func(*actor)) {
	select {
	case a.cmds <- fn:
	case <-a.r.ctx.Done():
		return
	}
	// A report of a call the actor no longer waits for may come after it
	// parked; parkOrEvict checks the queue after it marks the actor
	// parked, so one of the two sees the other.
	if a.parked.Load() {
		a.r.unpark(a)
	}
}

// loop is the actor's first goroutine. st is the initial state for a
// session that was just created; nil loads it from the store.
func (a *actor) loop(st *state) {
	var err error
	if st == nil {
		st, err = a.loadHeld(a.r.ctx)
	}
	a.st = st
	if err != nil {
		a.ws.end(err)
	} else {
		a.restore(st)
		if a.hold != nil && a.hold.TakeUp {
			// A session loaded here runs nowhere else: what it was doing
			// when its last holder stopped (a run, a wake for its mail)
			// is taken up here, as at a restart, before the request that
			// loaded it sees it.
			if err := a.recoverSession(); err != nil {
				a.log().Error("recover session", "session", a.id, "err", err)
			}
		}
	}
	a.serve()
}

// loadHeld loads the actor's session once it holds it, and, for a
// session that may come from another server, the watches of it, which
// the server that held it kept (see watches).
func (a *actor) loadHeld(ctx context.Context) (*state, error) {
	if err := a.takeHold(ctx); err != nil {
		return nil, err
	}
	st, err := a.r.load(ctx, a.id)
	if err == nil && a.hold.TakeUp {
		err = a.r.watchersFromStore(ctx, a.id)
	}
	if err == nil {
		a.r.place.Loaded(a.hold)
	}
	// On failure the hold goes when the actor does (see evictLocked).
	return st, err
}

// resume is the goroutine of an actor taken out of its parking (see
// Runner.unparkLocked).
func (a *actor) resume() {
	a.serve()
}

// parkDelay is how long an idle actor keeps its goroutine before it parks:
// a client that asks again at once (a waiting GetSession after a post)
// finds it still running.
const parkDelay = 100 * time.Millisecond

// serve runs the actor's commands until it parks, is evicted or the
// runner closes.
func (a *actor) serve() {
	idleSince := time.Now()
	idle := time.NewTimer(min(parkDelay, a.r.opts.IdleEvict))
	defer idle.Stop()
	// resyncing says the timer is set for the next resync: commands do
	// not push it back, or a session polled often would never write.
	resyncing := false
	for {
		select {
		case fn := <-a.cmds:
			a.settleDoubt()
			fn(a)
		case <-idle.C:
			switch {
			case a.ws.retrying():
				if err := a.resync(); err != nil {
					a.log().Warn("store still refuses the session's write", "session", a.id, "attempts", a.ws.attempts, "err", err)
				}
			case resyncing:
				// Another write took the pending one along: not idle yet.
			case a.ws.gone() && a.r.tryEvict(a):
				return
			case a.evictable() && a.r.parkOrEvict(a, time.Since(idleSince)):
				return
			}
			resyncing = false
		case <-a.r.ctx.Done():
			a.shutdown()
			return
		}
		for next := a.ws.takeNext(); next != nil; next = a.ws.takeNext() {
			next()
		}
		if a.ws.lost() {
			a.abandon()
		}
		if a.r.draining.Load() {
			a.handOverIdle()
		}
		a.answerReads()
		a.notePhase()
		switch {
		case a.ws.gone():
			// Nothing can be done with a session that is not there: stop
			// new holders from finding this actor, answer the current
			// ones, and leave once none is left.
			a.r.forget(a)
			if a.r.tryEvict(a) {
				return
			}
			idle.Reset(10 * time.Millisecond)
			resyncing = false
		case a.ws.retrying():
			if !resyncing {
				idle.Reset(a.ws.backoff())
				resyncing = true
			}
		case a.run == nil:
			idle.Reset(min(parkDelay, a.r.opts.IdleEvict))
			idleSince = time.Now()
			resyncing = false
		}
	}
}

// wakeForMail starts a run for mail that arrived while the session could
// not start one (its store lagged behind): nothing else would fold it.
func (a *actor) wakeForMail() {
	if a.run != nil || !a.st.meta.Status.AcceptsInput() || len(a.st.mail) == 0 {
		return
	}
	if err := a.wake(agentsv1.RunTrigger_RUN_TRIGGER_MAIL); err != nil {
		a.log().Error("wake for mail", "session", a.id, "err", err)
	}
}

// unknown is what a command is told once the session is deleted.
func (a *actor) unknown() error {
	return errs.NotFound(errs.CodeUnknownSession, "unknown session %s", a.id)
}

func (a *actor) evictable() bool {
	return a.run == nil && len(a.idleWaiters) == 0 && len(a.idleReads) == 0 && len(a.dueReads) == 0 && !a.ws.retrying()
}

// shutdown stops the active run without recording it as stopped: the
// store still says running, and the next start resumes it.
func (a *actor) shutdown() {
	a.closeRun()
	a.wakeIdleWaiters()
	a.releaseReads()
	// Answer anything still queued so no caller waits forever.
	for {
		select {
		case fn := <-a.cmds:
			a.ws.end(errClosing)
			fn(a)
		default:
			return
		}
	}
}

// load reads a session and what is pending for it from the store: all of
// what restore makes the actor's memory (see memory.go).
func (r *Runner) load(ctx context.Context, id string) (*state, error) {
	meta, turns, err := r.store.LoadSession(ctx, id)
	if err != nil {
		return nil, err
	}
	mail, err := r.store.PendingMail(ctx, id)
	if err != nil {
		return nil, err
	}
	pending, err := r.store.PendingDeferred(ctx, id)
	if err != nil {
		return nil, err
	}
	var deferred []session.DeferredCall
	for _, d := range pending {
		if clientAnswered(d.Reason) {
			deferred = append(deferred, d)
		}
	}
	meta.PendingCalls = len(deferred)
	st := &state{meta: meta, turns: turns, mail: mail, deferred: deferred}
	if st.round, err = r.newestRound(ctx, st); err != nil {
		return nil, err
	}
	return st, nil
}

// waitIdle returns a channel closed once no run is active.
func (a *actor) waitIdle() <-chan struct{} {
	ch := make(chan struct{})
	if a.run == nil {
		close(ch)
		return ch
	}
	a.idleWaiters = append(a.idleWaiters, ch)
	return ch
}

// wakeIdleWaiters wakes whoever waits for no run to be active; the
// waiting reads are answered once the command in hand is done.
func (a *actor) wakeIdleWaiters() {
	wake(&a.idleWaiters)
	a.dueReads = append(a.dueReads, a.idleReads...)
	clear(a.idleReads)
	a.idleReads = a.idleReads[:0]
}

// wake closes the channels of waiters and forgets them.
func wake(waiters *[]chan struct{}) {
	for _, w := range *waiters {
		close(w)
	}
	*waiters = nil
}
