package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// Run leases, when servers share a database (Options.Cluster).
//
//   - An actor loads its session only once it took the session's lease
//     (takeLease), and a session it creates takes its lease as soon as it
//     is stored. What it then reads is the truth for as long as it holds
//     the lease.
//   - Every change the actor writes carries its lease (see write): the
//     store refuses it, alone in its group, once another server took the
//     lease over.
//   - One loop renews the leases of every loaded session (renewLeases).
//     A lease found lost, by a renewal or by a refused write, stops the
//     session here at once (loseLease): its run is cancelled, nothing more
//     is written (neither again nor to settle it from the store: that is
//     the new holder's business), and the actor goes.
//   - An eviction gives the lease up (releaseLease); Drain gives each up
//     as soon as its session has no run (handOverIdle), Drain and Close
//     give up what is left (handOver), and the other servers take the
//     sessions that need one at once.

// errLeaseLost is the cause a run is cancelled with when another server
// took its session over: its calls end without a result to write, and a
// helper call leaves its child to the new holder.
var errLeaseLost = errors.New("another server took the session over")

// handOverTimeout bounds the releases of the leases at Close.
const handOverTimeout = 5 * time.Second

// leaseBook is the leases this server holds: each loaded session's, put
// when its actor takes the lease, taken out when the session is unloaded
// or the lease lost. The renewals read it.
type leaseBook struct {
	mu   sync.Mutex
	held map[string]store.Lease
	// releasing are the releases under way: a session loaded again
	// waits for its release, or the release (same holder, same epoch)
	// would delete the lease the new load just took.
	releasing map[string]chan struct{}
}

func (b *leaseBook) put(l store.Lease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held == nil {
		b.held = map[string]store.Lease{}
	}
	b.held[l.SessionID] = l
}

// take removes a session's lease from the book and returns it.
func (b *leaseBook) take(id string) (store.Lease, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.held[id]
	delete(b.held, id)
	return l, ok
}

// takeAt removes a session's lease from the book when it is still the
// one at epoch.
func (b *leaseBook) takeAt(id string, epoch int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.held[id]
	if ok && l.Epoch == epoch {
		delete(b.held, id)
		return true
	}
	return false
}

func (b *leaseBook) has(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.held[id]
	return ok
}

func (b *leaseBook) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.held)
}

func (b *leaseBook) all() []store.Lease {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]store.Lease, 0, len(b.held))
	for _, l := range b.held {
		out = append(out, l)
	}
	return out
}

// releaseLease gives up the lease of a session that is unloaded. Called
// under the runner's mutex, as the actor leaves the live set: the
// release runs on its own goroutine, and a load of the session waits for
// it (see takeLease). Once the runner closes, the lease stays in the
// book, where Close gives it up with the others (handOver): no goroutine
// starts then.
func (r *Runner) releaseLease(id string) {
	if r.closing {
		return
	}
	l, ok := r.leases.take(id)
	if !ok {
		return
	}
	done := make(chan struct{})
	r.leases.mu.Lock()
	if r.leases.releasing == nil {
		r.leases.releasing = map[string]chan struct{}{}
	}
	r.leases.releasing[id] = done
	r.leases.mu.Unlock()
	r.goroutines.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
		defer cancel()
		if err := r.store.ReleaseLease(ctx, id, l.Holder, l.Epoch); err != nil {
			// It expires instead.
			r.log.Warn("release lease", "session", id, "err", err)
		} else {
			r.announceRelease(ctx, id, false)
		}
		r.leases.mu.Lock()
		if r.leases.releasing[id] == done {
			delete(r.leases.releasing, id)
		}
		r.leases.mu.Unlock()
		close(done)
	})
}

// takeLease takes the lease of the actor's session, before the session
// is read: errs.Conflict (lease_held) when another server holds it.
func (a *actor) takeLease(ctx context.Context) error {
	r := a.r
	r.leases.mu.Lock()
	releasing := r.leases.releasing[a.id]
	r.leases.mu.Unlock()
	if releasing != nil {
		select {
		case <-releasing:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l, err := r.store.AcquireLease(ctx, a.id, r.cluster.Holder, r.now(), r.cluster.LeaseTTL)
	if errs.CodeOf(err) == errs.CodeLeaseHeld {
		return r.heldElsewhere(ctx, a.id)
	}
	if err != nil {
		return err
	}
	a.lease = &l
	r.leases.put(l)
	return nil
}

// heldElsewhere is the answer for a session another server runs:
// errs.Conflict (lease_held), naming the server (also as the metadata
// "holder") when the store says which.
func (r *Runner) heldElsewhere(ctx context.Context, id string) error {
	holder := "another server"
	if l, err := r.store.GetLease(ctx, id); err == nil && l.Holder != r.cluster.Holder {
		holder = l.Holder
	}
	return errs.Conflict(errs.CodeLeaseHeld, "session %s is run by server %s", id, holder).With("holder", holder)
}

// fence is the lease the actor's writes are made under; nil without one.
func (a *actor) fence() *store.Fence {
	if a.lease == nil {
		return nil
	}
	return &store.Fence{SessionID: a.id, Holder: a.lease.Holder, Epoch: a.lease.Epoch}
}

// write commits a change of the actor's session, under its lease. A
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
	a.ws.lose(a.r.heldElsewhere(a.r.ctx, a.id))
}

// abandon unloads a session whose lease was lost, writing nothing: what
// it kept in memory is no longer the truth. Whoever holds it or asks for
// it next is told where it runs now.
func (a *actor) abandon() {
	a.closeRun()
	a.ws.abandon()
	a.waiting = nil
	if a.lease != nil {
		a.r.leases.takeAt(a.id, a.lease.Epoch)
		a.lease = nil
	}
	a.r.leaseStats.lost.Add(1)
	wake(&a.idleWaiters)
}

// renewLeases renews the leases of every loaded session every third of
// their life, and stops the sessions whose lease another server took. A
// server that cannot reach the database to renew stops them all before
// their leases expire, since another server may take them then.
func (r *Runner) renewLeases() {
	ttl := r.cluster.LeaseTTL
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	renewed := r.now()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
		held := r.leases.all()
		now := r.now()
		if len(held) == 0 {
			renewed = now
			r.leaseStats.renewed.Store(now.UnixNano())
			continue
		}
		lost, err := r.store.RenewLeases(r.ctx, r.cluster.Holder, held, now, ttl)
		if err != nil {
			if r.ctx.Err() != nil {
				return
			}
			r.log.Warn("renew leases", "leases", len(held), "err", err)
			if now.Sub(renewed) >= ttl-ttl/3 {
				for _, l := range held {
					r.leaseLost(l, err)
				}
			}
			continue
		}
		renewed = now
		r.leaseStats.renewed.Store(now.UnixNano())
		for _, id := range lost {
			for _, l := range held {
				if l.SessionID == id {
					r.leaseLost(l, errs.FailedPrecondition(errs.CodeLeaseLost, "the renewal found the lease of %s taken", id))
				}
			}
		}
	}
}

// leaseLost tells the actor of a session that its lease l is lost.
func (r *Runner) leaseLost(l store.Lease, cause error) {
	r.mu.Lock()
	a := r.live[l.SessionID]
	r.mu.Unlock()
	if a == nil {
		r.leases.takeAt(l.SessionID, l.Epoch)
		return
	}
	a.post(func(a *actor) {
		if a.lease != nil && a.lease.Epoch == l.Epoch {
			a.loseLease(cause)
		}
	})
}

// handOver gives up every lease this server holds and tells the other
// servers which sessions need one, so they take them now rather than at
// expiry. No session is loaded here any more (see acquire), and a write
// of one still loaded would fail its fence. closed says the actors are
// gone already (Close); otherwise each loaded session is let go first,
// and says whether it needs a server (a run to take up, mail to fold).
func (r *Runner) handOver(ctx context.Context, closed bool) {
	r.mu.Lock()
	r.handingOver = true
	r.mu.Unlock()
	for _, l := range r.leases.all() {
		// Out of the book first: the unloading must not release it too.
		if !r.leases.takeAt(l.SessionID, l.Epoch) {
			continue // lost, unloaded or handed over meanwhile
		}
		needs := true
		if !closed {
			needs = r.letGo(ctx, l.SessionID)
		}
		r.giveUp(ctx, l, needs)
	}
}

// handOverIdle hands over, while the server drains, every session loaded
// here that has no run: a post through another server to one of them
// need not wait for the slowest step of the others. The sessions with a
// run follow one by one as their runs stop (see actor.handOverIdle).
func (r *Runner) handOverIdle(ctx context.Context) {
	for _, id := range r.liveIDs() {
		a, release, ok := r.loaded(id)
		if !ok {
			continue
		}
		_ = a.call(ctx, func(a *actor) error {
			a.handOverIdle()
			return nil
		})
		release()
	}
}

// handOverIdle gives the session up to the other servers when the server
// drains and the session has no run (none of its own, or the one the
// drain stopped at a step boundary) and nothing left to write: another
// server takes it up now, not once every run here stopped. The actor
// then goes, as after letGo; the serve loop calls it after every command
// while the server drains, so a session loaded meanwhile goes too.
func (a *actor) handOverIdle() {
	if !a.r.draining.Load() || a.lease == nil || a.run != nil || !a.ws.quiet() {
		return
	}
	l := *a.lease
	needs := a.needsServer()
	a.letGo()
	if !a.r.leases.takeAt(a.id, l.Epoch) {
		return // handOver took it, and releases it
	}
	ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
	defer cancel()
	a.r.giveUp(ctx, l, needs)
}

// handedOver reports whether err is the answer of a session this server
// gave up as it drains (see handOverIdle), or can no longer load: it is
// read from the store, as a session another server holds is.
func (r *Runner) handedOver(err error) bool {
	return r.cluster != nil && r.draining.Load() && errs.CodeOf(err) == errClosing.Code
}

// giveUp releases a lease taken out of the book and tells the other
// servers; a release that fails leaves the lease to expire.
func (r *Runner) giveUp(ctx context.Context, l store.Lease, needs bool) {
	if err := r.store.ReleaseLease(ctx, l.SessionID, l.Holder, l.Epoch); err != nil {
		r.log.Warn("release lease", "session", l.SessionID, "err", err)
		return
	}
	r.announceRelease(ctx, l.SessionID, needs)
}

// announceRelease tells the other servers a session's lease is given up:
// they forget this server held it (see remoteHolders), and when it needs
// a server, one takes it now rather than at expiry.
func (r *Runner) announceRelease(ctx context.Context, id string, needs bool) {
	if r.cluster.Bus == nil {
		return
	}
	payload := id
	if !needs {
		payload = cluster.ReleasedPrefix + id
	}
	if err := r.cluster.Bus.Notify(ctx, cluster.ChannelLeases, payload); err != nil {
		r.log.Warn("tell the servers a session's lease is given up", "session", id, "err", err)
	}
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
	a.lease = nil
}
