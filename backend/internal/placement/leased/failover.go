package leased

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Failover, when servers share a database: a session that needs a
// server (a run the store says is going, a ready session with mail, or
// a command pending: its holder and the server that forwarded it may
// both have died) and whose lease is absent or expired is an orphan.
// Every server looks for orphans every half of a lease's life, at once
// when a server that drains says it gave some up, and at its start
// (Recover); each tries to take the lease, one wins, and the winner
// recovers the session exactly as a restart does (Kernel.TakeUp)
// and applies its pending commands. A helper's child goes with its
// parent: the server that claims the parent claims its children too, so
// the parent's call waits for a child it runs itself, and the others
// leave the child alone while its parent is an orphan too, or for a few
// looks once another server holds the parent (it takes the child in a
// moment, as its call waits for it again). A parent and child that end
// up apart anyway still work: the call waits for its child in the store.

// patience is how many looks a server leaves alone an orphan whose
// parent another server holds.
const patience = 2

// orphanBatch bounds the orphans one look reads.
const orphanBatch = 100

// notes are the notifications of the other servers not yet acted on.
// The bus's listeners only note them (they must not block); the failover
// loop acts on them.
type notes struct {
	mu sync.Mutex
	// mailFor are the sessions that got mail another server stored.
	mailFor map[string]struct{}
	// released says a server gave up leases; lostTouch that the bus lost
	// its connection, and notifications with it.
	released, lostTouch bool
	wake                chan struct{}
	// passed counts the looks that left an orphan to its parent's
	// holder (see patience).
	passed map[string]int
}

// pass reports whether a look leaves the orphan id to its parent's
// holder once more.
func (n *notes) pass(id string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.passed == nil {
		n.passed = map[string]int{}
	}
	n.passed[id]++
	return n.passed[id] <= patience
}

// forgetPassed forgets the orphans a look no longer found.
func (n *notes) forgetPassed(found map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for id := range n.passed {
		if !found[id] {
			delete(n.passed, id)
		}
	}
}

func (n *notes) mail(id string) {
	n.mu.Lock()
	if n.mailFor == nil {
		n.mailFor = map[string]struct{}{}
	}
	n.mailFor[id] = struct{}{}
	n.mu.Unlock()
	n.kick()
}

func (n *notes) leases() {
	n.mu.Lock()
	n.released = true
	n.mu.Unlock()
	n.kick()
}

func (n *notes) reconnected() {
	n.mu.Lock()
	n.lostTouch = true
	n.mu.Unlock()
	n.kick()
}

func (n *notes) kick() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// take returns the notes and forgets them.
func (n *notes) take() (mail map[string]struct{}, released, lostTouch bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	mail, released, lostTouch = n.mailFor, n.released, n.lostTouch
	n.mailFor, n.released, n.lostTouch = nil, false, false
	return mail, released, lostTouch
}

// failover claims orphans every half of a lease's life, and acts on the
// other servers' notifications as they come.
func (p *Placement) failover() {
	tick := time.NewTicker(p.opts.LeaseTTL / 2)
	defer tick.Stop()
	for {
		look := false
		select {
		case <-p.ctx.Done():
			return
		case <-tick.C:
			look = true
		case <-p.notes.wake:
			mail, released, lostTouch := p.notes.take()
			for id := range mail {
				p.mailArrived(id)
			}
			if lostTouch {
				// Mail notifications may have been missed: every loaded
				// session reads its mail again.
				for _, id := range p.k.LiveIDs() {
					p.mailArrived(id)
				}
			}
			look = released || lostTouch
		}
		if look {
			if err := p.claimOrphans(p.ctx); err != nil && p.ctx.Err() == nil {
				p.log.Warn("look for sessions without a server", "err", err)
			}
		}
	}
}

// claimAll claims orphans until none is left that this server can take:
// the recovery at start of a server that shares its database.
func (p *Placement) claimAll(ctx context.Context) error {
	for {
		n, err := p.claimBatch(ctx)
		if err != nil || n < orphanBatch {
			return err
		}
	}
}

func (p *Placement) claimOrphans(ctx context.Context) error {
	_, err := p.claimBatch(ctx)
	return err
}

// claimBatch claims the orphans of one look and returns how many the
// look found, or 0 when every one was claimed by some server: a batch
// that could not be claimed is not looked at again at once.
func (p *Placement) claimBatch(ctx context.Context) (int, error) {
	p.claiming.Lock()
	defer p.claiming.Unlock()
	if p.closing.Load() || p.draining.Load() {
		return 0, nil
	}
	ids, err := p.store.Orphans(ctx, p.now(), orphanBatch)
	if err != nil {
		return 0, err
	}
	orphan := map[string]bool{}
	for _, id := range ids {
		orphan[id] = true
	}
	p.notes.forgetPassed(orphan)
	failed := false
	for _, id := range ids {
		meta, err := p.store.GetMeta(ctx, id)
		if err != nil {
			failed = failed || errs.KindOf(err) != errs.KindNotFound
			continue
		}
		if orphan[meta.ParentID] {
			continue // claimed with its parent
		}
		if meta.ParentID != "" && p.heldByAnother(ctx, meta.ParentID) && p.notes.pass(id) {
			continue
		}
		if ok, err := p.claim(ctx, id); ok {
			p.claimChildren(ctx, id)
		} else if err != nil {
			failed = true
		}
	}
	if failed {
		return 0, nil
	}
	return len(ids), nil
}

// claimChildren claims the children of a session this server just took
// that need a server, and theirs.
func (p *Placement) claimChildren(ctx context.Context, id string) {
	children, err := p.store.Children(ctx, id)
	if err != nil {
		p.log.Warn("claim the children of a session", "session", id, "err", err)
		return
	}
	for _, c := range children {
		if c.Status != session.StatusRunning && (c.Status != session.StatusReady || c.PendingMail == 0) {
			continue
		}
		if ok, _ := p.claim(ctx, c.ID); ok {
			p.claimChildren(ctx, c.ID)
		}
	}
}

// claim tries to take a session that needs a server and recovers it as
// a restart does. ok says this server took it; err is a failure other
// than another server's winning it.
func (p *Placement) claim(ctx context.Context, id string) (ok bool, err error) {
	if p.leases.has(id) {
		return false, nil
	}
	prev, prevErr := p.store.GetLease(ctx, id)
	ok, err = p.k.TakeUp(ctx, id)
	switch {
	case ok:
		// Its pending commands are this server's to apply now, in order.
		p.kickApplier()
		p.stats.claims.Add(1)
		if prevErr == nil && prev.Holder != p.opts.Holder {
			p.stats.failovers.Add(1)
		}
		if err != nil {
			p.log.Error("recover a claimed session", "session", id, "err", err)
		} else {
			p.log.Info("claimed session", "session", id, "from", prev.Holder)
		}
		return true, nil
	case errs.CodeOf(err) == errs.CodeLeaseHeld || errs.KindOf(err) == errs.KindNotFound:
		return false, nil // another server won it, or it is gone
	default:
		return false, err
	}
}

// heldByAnother reports whether another live server holds a session.
func (p *Placement) heldByAnother(ctx context.Context, id string) bool {
	l, err := p.store.GetLease(ctx, id)
	return err == nil && l.Holder != p.opts.Holder && l.Live(p.now())
}

// MailStored tells the other servers about mail a change stored for
// sessions this server does not hold (a watcher's, say), so the holder
// takes it in.
func (p *Placement) MailStored(mail []session.Mail) {
	if p.opts.Bus == nil {
		return
	}
	var told []string
	for _, m := range mail {
		if slices.Contains(told, m.SessionID) || p.leases.has(m.SessionID) {
			continue
		}
		told = append(told, m.SessionID)
		if err := p.opts.Bus.Notify(p.ctx, cluster.ChannelMail, m.SessionID); err != nil && p.ctx.Err() == nil {
			p.log.Warn("tell the servers about mail", "session", m.SessionID, "err", err)
		}
	}
}

// mailArrived has a session this server holds take in the mail another
// server stored for it. A session not loaded here is left alone: its
// holder, or the server that loads it next, reads its mail.
func (p *Placement) mailArrived(id string) {
	if p.leases.has(id) {
		p.k.MailArrived(id)
	}
}
