package leased

import (
	"context"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/placement"
	"github.com/agents-os/agents/backend/internal/store"
)

// Run leases.
//
//   - The kernel loads a session only once it took the session's lease
//     (Hold), and a session it creates takes its lease as soon as it is
//     stored. What it then reads is the truth for as long as it holds
//     the lease.
//   - Every change the kernel writes carries the lease's fence: the
//     store refuses it, alone in its group, once another server took the
//     lease over.
//   - One loop renews the leases of every loaded session (renewLeases).
//     A lease found lost, by a renewal or by a refused write, stops the
//     session here at once (Kernel.Lost): its run is cancelled, nothing
//     more is written (neither again nor to settle it from the store:
//     that is the new holder's business), and the actor goes.
//   - An unloading gives the lease up (Release); Drain gives each up as
//     soon as its session has no run (HandOver), Drained and Close give
//     up what is left (handOver), and the other servers take the
//     sessions that need one at once.

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

// Hold takes the lease of a session, before the session is read:
// errs.Conflict (lease_held) when another server holds it.
func (p *Placement) Hold(ctx context.Context, id string) (*placement.Hold, error) {
	p.leases.mu.Lock()
	releasing := p.leases.releasing[id]
	p.leases.mu.Unlock()
	if releasing != nil {
		select {
		case <-releasing:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l, err := p.store.AcquireLease(ctx, id, p.opts.Holder, p.now(), p.opts.LeaseTTL)
	if errs.CodeOf(err) == errs.CodeLeaseHeld {
		return nil, p.Moved(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	p.leases.put(l)
	return &placement.Hold{Fence: fenceOf(l), TakeUp: true}, nil
}

func fenceOf(l store.Lease) *store.Fence {
	return &store.Fence{SessionID: l.SessionID, Holder: l.Holder, Epoch: l.Epoch}
}

// Holding runs fn while the session stays loaded here, its lease held.
func (p *Placement) Holding(ctx context.Context, id string, fn func() error) error {
	return p.k.Pin(ctx, id, fn)
}

// Loaded makes the commands other servers left for the session this
// server's to apply now.
func (p *Placement) Loaded(*placement.Hold) { p.kickApplier() }

// Moved is the answer for a session another server runs: errs.Conflict
// (lease_held), naming the server (also as the metadata "holder") when
// the store says which.
func (p *Placement) Moved(ctx context.Context, id string) error {
	holder := "another server"
	if l, err := p.store.GetLease(ctx, id); err == nil && l.Holder != p.opts.Holder {
		holder = l.Holder
	}
	return errs.Conflict(errs.CodeLeaseHeld, "session %s is run by server %s", id, holder).With("holder", holder)
}

// Deleted takes the lease of a deleted session out of the book: the
// store deleted it with the session.
func (p *Placement) Deleted(h *placement.Hold) {
	if h != nil && h.Fence != nil {
		p.leases.takeAt(h.Fence.SessionID, h.Fence.Epoch)
	}
}

// Lost takes the lease of a session another server took over out of
// the book, and counts it.
func (p *Placement) Lost(_ string, h *placement.Hold) {
	if h != nil && h.Fence != nil {
		p.leases.takeAt(h.Fence.SessionID, h.Fence.Epoch)
	}
	p.stats.lost.Add(1)
}

// Release gives up the lease of a session that is unloaded. The kernel
// calls it as the actor leaves its live set, under its lock, and only
// while it is not closing (Close gives up what is left, see handOver):
// the release runs on its own goroutine, and a load of the session waits
// for it (see Hold).
func (p *Placement) Release(id string) {
	l, ok := p.leases.take(id)
	if !ok {
		return
	}
	done := make(chan struct{})
	p.leases.mu.Lock()
	if p.leases.releasing == nil {
		p.leases.releasing = map[string]chan struct{}{}
	}
	p.leases.releasing[id] = done
	p.leases.mu.Unlock()
	p.k.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
		defer cancel()
		if err := p.store.ReleaseLease(ctx, id, l.Holder, l.Epoch); err != nil {
			// It expires instead.
			p.log.Warn("release lease", "session", id, "err", err)
		} else {
			p.announceRelease(ctx, id, false)
		}
		p.leases.mu.Lock()
		if p.leases.releasing[id] == done {
			delete(p.leases.releasing, id)
		}
		p.leases.mu.Unlock()
		close(done)
	})
}

// renewLeases renews the leases of every loaded session every third of
// their life, and stops the sessions whose lease another server took. A
// server that cannot reach the database to renew stops them all before
// their leases expire, since another server may take them then.
func (p *Placement) renewLeases() {
	ttl := p.opts.LeaseTTL
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	renewed := p.now()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-tick.C:
		}
		held := p.leases.all()
		now := p.now()
		if len(held) == 0 {
			renewed = now
			p.stats.renewed.Store(now.UnixNano())
			continue
		}
		lost, err := p.store.RenewLeases(p.ctx, p.opts.Holder, held, now, ttl)
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			p.log.Warn("renew leases", "leases", len(held), "err", err)
			if now.Sub(renewed) >= ttl-ttl/3 {
				for _, l := range held {
					p.leaseLost(l, err)
				}
			}
			continue
		}
		renewed = now
		p.stats.renewed.Store(now.UnixNano())
		for _, id := range lost {
			for _, l := range held {
				if l.SessionID == id {
					p.leaseLost(l, errs.FailedPrecondition(errs.CodeLeaseLost, "the renewal found the lease of %s taken", id))
				}
			}
		}
	}
}

// leaseLost tells the kernel that the lease l is lost; a session no
// longer loaded only leaves the book.
func (p *Placement) leaseLost(l store.Lease, cause error) {
	if !p.k.Lost(*fenceOf(l), cause) {
		p.leases.takeAt(l.SessionID, l.Epoch)
	}
}

// Drain hands over every session loaded here that has no run, and the
// others as their runs stop, and claims no session any more.
func (p *Placement) Drain(ctx context.Context) {
	p.draining.Store(true)
	p.k.HandOverIdle(ctx)
}

// Drained gives up the leases left once no run is active.
func (p *Placement) Drained(ctx context.Context) { p.handOver(ctx, false) }

// Close gives up the leases the closed kernel left: the other servers
// take the sessions now, not at the expiry of their leases.
func (p *Placement) Close(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, handOverTimeout)
	defer cancel()
	p.handOver(ctx, true)
}

// handOver gives up every lease this server holds and tells the other
// servers which sessions need one, so they take them now rather than at
// expiry. No session is loaded here any more (Kernel.StopLoading), and a
// write of one still loaded would fail its fence. closed says the actors
// are gone already (Close); otherwise each loaded session is let go
// first, and says whether it needs a server (a run to take up, mail to
// fold).
func (p *Placement) handOver(ctx context.Context, closed bool) {
	p.k.StopLoading()
	for _, l := range p.leases.all() {
		// Out of the book first: the unloading must not release it too.
		if !p.leases.takeAt(l.SessionID, l.Epoch) {
			continue // lost, unloaded or handed over meanwhile
		}
		needs := true
		if !closed {
			needs = p.k.LetGo(ctx, l.SessionID)
		}
		p.giveUp(ctx, l, needs)
	}
}

// HandOver gives up the lease of a session the kernel let go as the
// server drains (it had no run): another server takes it up now, not
// once every run here stopped.
func (p *Placement) HandOver(ctx context.Context, h *placement.Hold, needs bool) {
	if h == nil || h.Fence == nil {
		return
	}
	f := h.Fence
	if !p.leases.takeAt(f.SessionID, f.Epoch) {
		return // handOver took it, and releases it
	}
	p.giveUp(ctx, store.Lease{SessionID: f.SessionID, Holder: f.Holder, Epoch: f.Epoch}, needs)
}

// giveUp releases a lease taken out of the book and tells the other
// servers; a release that fails leaves the lease to expire.
func (p *Placement) giveUp(ctx context.Context, l store.Lease, needs bool) {
	if err := p.store.ReleaseLease(ctx, l.SessionID, l.Holder, l.Epoch); err != nil {
		p.log.Warn("release lease", "session", l.SessionID, "err", err)
		return
	}
	p.announceRelease(ctx, l.SessionID, needs)
}

// announceRelease tells the other servers a session's lease is given up:
// they forget this server held it (see remoteHolders), and when it needs
// a server, one takes it now rather than at expiry.
func (p *Placement) announceRelease(ctx context.Context, id string, needs bool) {
	if p.opts.Bus == nil {
		return
	}
	payload := id
	if !needs {
		payload = cluster.ReleasedPrefix + id
	}
	if err := p.opts.Bus.Notify(ctx, cluster.ChannelLeases, payload); err != nil {
		p.log.Warn("tell the servers a session's lease is given up", "session", id, "err", err)
	}
}
