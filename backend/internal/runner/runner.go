// Package runner is the kernel: it drives sessions through runs of steps
// (a model call plus the tool calls it asks for), persists every step, and
// publishes what happens as events. It knows nothing of HTTP, RPC or SQL.
//
// Each live session is owned by one actor goroutine; every operation on a
// session, and every result of its model and tool calls, reaches the actor
// as a closure on its command channel, so a session's state has a single
// writer. Model and tool calls run on their own goroutines and report back
// to the actor, which stays free to take interrupts, cancels and mail.
package runner

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/placement"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/backend/internal/tracing"
)

// Model streams one chat completion; *llm.Client implements it.
type Model interface {
	Stream(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error)
}

// ModelFactory returns the client of an agent's model endpoint.
type ModelFactory func(catalog.Model) (Model, error)

// Defaults of Options fields left at zero.
const (
	DefaultMaxSteps = 50
	DefaultMaxDepth = 8
	// DefaultIdleEvict is short: an idle session costs nothing but its
	// rows in the store (and its params) once it is unloaded, and loading
	// it again is one read.
	DefaultIdleEvict = 20 * time.Second
)

// Options configure a Runner.
type Options struct {
	Log     *slog.Logger
	Store   store.Store
	Hub     *events.Hub
	Catalog *catalog.Catalog
	Models  ModelFactory
	// MaxSteps ends a run after this many steps unless the agent or the
	// run sets its own limit.
	MaxSteps int
	// MaxDepth bounds the nesting of helper agents' child sessions.
	MaxDepth int
	// IdleEvict unloads a session that has had no run, call or waiter for
	// this long.
	IdleEvict time.Duration
	// MaxRuns bounds the runs active at once on the server, and
	// MaxRunsPerOwner those of one owner; zero means no limit. Every run
	// counts, whoever starts it.
	MaxRuns, MaxRunsPerOwner int
	// Retention bounds the event log and the model calls kept one by
	// one; zero fields take the defaults.
	Retention Retention
	// TurnCacheBudget bounds the bytes of turn encodings the loaded
	// sessions keep (see TurnCache); 0 is DefaultTurnCacheBudget, a
	// negative budget keeps none.
	TurnCacheBudget int64
	// OnStep, when set, is told the timings of every completed step.
	OnStep func(StepStats)
	// SessionDeleted, when set, is told each session this server
	// deleted, once its deletion is stored: what tools kept for it
	// (a database's per-session copy) can go.
	SessionDeleted func(id string)
	// Publish, when set, publishes the committed events in place of the
	// hub (cluster.Sequencer.Committed: with several servers on one
	// database, other servers' events come between this server's).
	Publish func(ev *agentsv1.Event, body []byte) error
	// RelayDelta, when set, is given each delta (text, thinking, a tool
	// call being written) once it is published to the hub (cluster.Relay.Send carries it to the other
	// servers). It must not block.
	RelayDelta func(ev *agentsv1.Event)
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Placement says where sessions live: on this server alone, or on
	// the server among several that holds each (placement/leased); nil
	// is placement.Solo, a server alone on its database (SQLite).
	Placement placement.Placement
	// Budgets are the prices and the budget settings.
	Budgets Budgets
	// Tracer records the runs as traces; nil records none.
	Tracer *tracing.Tracer
	// Background is work that lives as long as the runner, off the run
	// path (the webhooks' dispatcher): each runs in the runner's group of
	// goroutines from New on, and must return once its context ends,
	// which Close ends and waits for, before the store is closed.
	Background []func(ctx context.Context)
	// ScheduleGrace is how late a schedule's firing may be and still
	// fire as itself; a time further past was missed (see
	// DefaultScheduleGrace, the value at zero).
	ScheduleGrace time.Duration
	// SchedulePoll is the longest the scheduler sleeps when no schedule
	// is due sooner and no schedule.changed event wakes it (see
	// DefaultSchedulePoll, the value at zero).
	SchedulePoll time.Duration
}

// StepStats are the timings of one step.
type StepStats struct {
	SessionID string
	// Total is the wall time of the step, model and tools included.
	Total time.Duration
	// Model is the time spent in the model call.
	Model time.Duration
	// Tools is the time spent waiting for tool calls.
	Tools time.Duration
	// Input is the measured input of the step's model request, in
	// tokens (see measure.go).
	Input int64
}

// Overhead is the server's own time in the step.
func (s StepStats) Overhead() time.Duration { return s.Total - s.Model - s.Tools }

// Runner owns the live sessions.
type Runner struct {
	opts  Options
	log   *slog.Logger
	store store.Store
	hub   *events.Hub
	cat   *catalog.Catalog
	now   func() time.Time
	// tracer records the spans of runs (see trace.go).
	tracer *tracing.Tracer
	// schemas keeps the tools' compiled parameter schemas: every call's
	// arguments are decoded against one, twice (judged, then run).
	schemas tool.Schemas

	watches watches
	params  sessionParams
	// gone are the deferred calls of deleted sessions, for late answers.
	gone  goneCalls
	slots slots
	// commits writes every change with its events, then publishes them.
	commits *committer.Committer
	// workers run the model calls.
	workers *workers
	// turnBudget bounds the loaded sessions' turn encodings.
	turnBudget turnBudget
	// learned are the context windows providers stated for models in
	// their context_length_exceeded answers, by model name.
	learned sync.Map

	// importing makes the imports of this server one at a time, so two
	// of one session settle as imported and unchanged (see ImportSession).
	importing sync.Mutex

	mu   sync.Mutex
	live map[string]*actor
	// closing is set, and goroutines closed, by Close: under mu, a
	// runner not closing starts any goroutine it asks for.
	closing bool
	release release
	// goroutines are every goroutine the runner starts.
	goroutines goroutines

	// place says where each session lives (see placement.Placement).
	place placement.Placement
	// others are the steps in flight of the sessions other servers run,
	// as their deltas build them (see remotereads.go).
	others remoteProgress
	// handsOver says the placement hands sessions over to other servers
	// as this one drains (see actor.handOverIdle).
	handsOver atomic.Bool

	// draining refuses new runs and ends runs at their next step boundary.
	draining atomic.Bool
	// active counts the runs in flight.
	active atomic.Int64

	// handingOver (guarded by mu) refuses to load sessions once the
	// placement gives up their holds (see kernel.StopLoading).
	handingOver bool

	// scheduleWake has the scheduler loop look at once (see
	// wakeScheduler).
	scheduleWake chan struct{}

	// ctx is cancelled by Close: every run and call derives from it.
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns a runner. Call Recover once at start, Close at the end.
func New(opts Options) *Runner {
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.IdleEvict <= 0 {
		opts.IdleEvict = DefaultIdleEvict
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TurnCacheBudget == 0 {
		opts.TurnCacheBudget = DefaultTurnCacheBudget
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Tracer == nil {
		opts.Tracer = tracing.NewTracer(nil, false)
	}
	if opts.Placement == nil {
		opts.Placement = &placement.Solo{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{
		opts:   opts,
		log:    opts.Log,
		store:  opts.Store,
		hub:    opts.Hub,
		cat:    opts.Catalog,
		tracer: opts.Tracer,
		now:    func() time.Time { return opts.Now().UTC() },
		place:  opts.Placement,
		live:   map[string]*actor{},
		ctx:    ctx,
		cancel: cancel,
		slots:  slots{max: opts.MaxRuns, perOwner: opts.MaxRunsPerOwner},

		scheduleWake: make(chan struct{}, 1),
	}
	r.turnBudget.max = opts.TurnCacheBudget
	r.slots.wake = func(id string) {
		// Refused once the runner closes: the mail waits in the store,
		// and the next start queues the session again (see Recover).
		r.goroutines.Go(func() { r.wakeQueued(id) })
	}
	r.commits = committer.New(opts.Store, opts.Hub, committer.Options{
		Runs:    func() int { return int(r.active.Load()) },
		Now:     r.now,
		Log:     r.log,
		Publish: opts.Publish,
	})
	r.workers = newWorkers(ctx, &r.goroutines)
	r.goroutines.Go(r.prune)
	r.goroutines.Go(r.resumeAtRollover)
	for _, work := range opts.Background {
		r.goroutines.Go(func() { work(ctx) })
	}
	r.place.Start(ctx, kernel{r})
	r.goroutines.Go(r.runSchedules)
	return r
}

// ActiveRuns is the number of runs in flight.
func (r *Runner) ActiveRuns() int { return r.slots.active() }

// Close stops every run where it stands and unloads every session. Runs
// stay `running` in the store, so the next start resumes them (see
// Recover): a shutdown is handled like a crash, minus the lost work.
func (r *Runner) Close() {
	r.place.Stop()
	r.mu.Lock()
	r.closing = true
	r.goroutines.close()
	if r.release.timer != nil {
		r.release.timer.Stop()
	}
	for _, a := range r.live {
		if a.parked.Load() {
			a.evict.Stop()
		}
	}
	r.mu.Unlock()
	r.cancel()
	// Writes the committer took are committed and answered; later ones
	// are refused, so no goroutine waited for below waits for a write
	// that never comes.
	r.commits.Close()
	// Every goroutine ends with the context; those that write to the
	// store directly (a hold released, a watch dropped, a command
	// applied) are done before Close returns and the store is closed.
	r.goroutines.wait()
	// Nothing of the sessions is written any more: other servers take
	// them now, not at the expiry of their leases.
	r.place.Close(context.Background())
}

// Drain prepares a shutdown: new runs are refused, and every active run
// ends at its next step boundary, once the step in flight is stored. The
// store still says running, so the next start resumes the runs where they
// stopped. Drain returns when no run is active, or ctx's error when it
// ends first; Close then stops what is left. With other servers on the
// database, each session is handed over as soon as it has no run: the
// idle ones at once, the others as their runs stop; the other servers
// are told, so they take the sessions up without waiting for the leases
// to expire.
func (r *Runner) Drain(ctx context.Context) error {
	r.draining.Store(true)
	r.place.Drain(ctx)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for r.active.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	r.place.Drained(ctx)
	return nil
}

// errClosing is the committer's: a write it refused because the server is
// closing and a request refused for the same reason are one error.
var errClosing = committer.ErrClosing

// acquire returns the live actor of a session, loading it if needed, and
// holds it in memory until release is called.
func (r *Runner) acquire(id string) (*actor, func(), error) {
	a, err := r.hold(id)
	if err != nil {
		return nil, nil, err
	}
	return a, func() { r.releaseRef(a) }, nil
}

// hold is acquire without the release function: its caller calls
// releaseRef itself.
func (r *Runner) hold(id string) (*actor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, errClosing
	}
	a, ok := r.live[id]
	switch {
	case !ok && r.handingOver:
		return nil, errClosing
	case !ok:
		a = newActor(r, id)
		r.live[id] = a
		r.goroutines.Go(func() { a.loop(nil) })
	case a.parked.Load():
		r.unparkLocked(a)
	}
	a.refs++
	return a, nil
}

// adopt registers an actor for a session that was just created, with its
// state already in hand. An id that is live already (an import under an
// id someone is reading) is errs.Conflict: one id, one actor.
func (r *Runner) adopt(st *state) (*actor, func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing || r.handingOver {
		return nil, nil, errClosing
	}
	if _, ok := r.live[st.meta.ID]; ok {
		return nil, nil, errs.Conflict(errs.CodeSessionExists, "session %s is in use; try again", st.meta.ID)
	}
	a := newActor(r, st.meta.ID)
	a.refs = 1
	r.live[st.meta.ID] = a
	r.goroutines.Go(func() { a.loop(st) })
	return a, func() { r.releaseRef(a) }, nil
}

func (r *Runner) releaseRef(a *actor) {
	r.mu.Lock()
	a.refs--
	r.mu.Unlock()
}

// tryEvict removes an idle actor from the live set; it refuses while
// anyone holds a reference, so no command can be sent to a gone actor.
func (r *Runner) tryEvict(a *actor) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.refs > 0 || len(a.cmds) > 0 {
		return false
	}
	r.evictLocked(a)
	return true
}

func (r *Runner) evictLocked(a *actor) {
	if r.live[a.id] == a {
		delete(r.live, a.id)
		r.noteEviction()
		if !r.closing {
			// Once the runner closes, the hold stays: Close gives up
			// what is left (see placement.Placement.Close).
			r.place.Release(a.id)
		}
	}
	a.turnCache.drop()
}

// An idle session keeps its state loaded for IdleEvict, so a client that
// comes back soon finds it without reading the store, but not its
// goroutine: after parkDelay the actor parks, and the next holder
// (acquire) or report of a call (post) starts one again. A thousand
// sessions touched once hold no goroutines a moment later, and the
// runtime, which keeps a descriptor for every goroutine that ever ran at
// once, does not grow to one per session touched.

// parkOrEvict lets an idle actor's goroutine go: the session is evicted
// when it has been idle for IdleEvict, parked until then. It refuses
// while anyone holds the actor or a command is queued; true means the
// goroutine must end.
func (r *Runner) parkOrEvict(a *actor, idleFor time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.refs > 0 || len(a.cmds) > 0 {
		return false
	}
	if idleFor >= r.opts.IdleEvict || r.closing {
		r.evictLocked(a)
		return true
	}
	a.parked.Store(true)
	if len(a.cmds) > 0 {
		// A report posted before it could see the mark (see post).
		a.parked.Store(false)
		return false
	}
	a.parkGen++
	gen := a.parkGen
	a.evict = time.AfterFunc(r.opts.IdleEvict-idleFor, func() { r.evictParked(a, gen) })
	return true
}

// evictParked evicts an actor still in the parking it entered as gen.
func (r *Runner) evictParked(a *actor, gen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.parked.Load() && a.parkGen == gen {
		r.evictLocked(a)
	}
}

// unpark starts a parked actor's goroutine again, unless it was evicted
// meanwhile or the runner is closing.
func (r *Runner) unpark(a *actor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.parked.Load() && r.live[a.id] == a && !r.closing {
		r.unparkLocked(a)
	}
}

func (r *Runner) unparkLocked(a *actor) {
	a.parked.Store(false)
	a.evict.Stop()
	r.goroutines.Go(a.resume)
}

// forget removes an actor whose session could not be loaded or was
// deleted.
func (r *Runner) forget(a *actor) {
	r.mu.Lock()
	if r.live[a.id] == a {
		delete(r.live, a.id)
	}
	r.mu.Unlock()
}

// loaded returns the live actor of a session this server has loaded,
// held until release is called, without loading it: false when it is
// not loaded.
func (r *Runner) loaded(id string) (*actor, func(), bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.live[id]
	if !ok || r.closing {
		return nil, nil, false
	}
	if a.parked.Load() {
		r.unparkLocked(a)
	}
	a.refs++
	return a, func() { r.releaseRef(a) }, true
}

// withSession runs fn inside the session's actor and returns its error.
func (r *Runner) withSession(ctx context.Context, id string, fn func(a *actor) error) error {
	a, err := r.hold(id)
	if err != nil {
		return err
	}
	defer r.releaseRef(a)
	return a.call(ctx, fn)
}

// LiveSessions is the number of sessions loaded in memory.
func (r *Runner) LiveSessions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}

// isCancel reports whether err is a cancellation rather than a failure.
func isCancel(err error) bool {
	return errors.Is(err, context.Canceled)
}
