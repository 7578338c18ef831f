// Package committer writes the kernel's changes to the store and only
// then publishes their events, in commit order: a client never sees an
// event that is not stored, and sees events in seq order.
//
// It sits beside the store and the hub, under the runner: the runner
// says what changes (a store.Change and the events that describe it),
// the committer says when and how it is written. Writes from every
// session go through one Committer, which commits the ones that are
// ready together in one transaction (a group commit). What a failed
// write means, and how soon to try it again, is its policy too (see
// Classify and Backoff).
package committer

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
)

// Options configure a Committer.
type Options struct {
	// Runs is the number of runs in flight, which tells a group how long
	// to wait for more writes (see gather); nil never waits.
	Runs func() int
	// Now stamps events that have no time; nil is time.Now.
	Now func() time.Time
	// Log takes what goes wrong after a commit (an event the hub
	// refuses); nil discards it.
	Log *slog.Logger
	// Publish, when set, publishes each committed event in place of the
	// hub's PublishEncoded: with several servers on one database, other
	// servers' events must reach the hub between this server's (see
	// cluster.Sequencer).
	Publish func(ev *agentsv1.Event, body []byte) error
}

// Committer is the one writer of the kernel's changes.
type Committer struct {
	store store.Store
	hub   *events.Hub
	opts  Options
	// in queues the writes for the loop. Every write put in it is
	// answered: by the loop with its outcome, or, once the loop stopped,
	// by the drain with ErrClosing; closed (under mu) stops new ones
	// before the drain, so none is left in a queue nobody reads.
	in chan *write
	// commit is held through each group commit and the publishing of
	// its events, by the loop or by a writer committing its own write
	// (see Write): one group at a time, its events out in commit order.
	commit    sync.Mutex
	mu        sync.RWMutex
	closed    bool
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// write is a change waiting for the committer.
type write struct {
	change *store.Change
	events []*agentsv1.Event
	done   chan error
}

// New starts a committer on a store and a hub. Close stops it.
func New(st store.Store, hub *events.Hub, opts Options) *Committer {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	c := &Committer{store: st, hub: hub, opts: opts, in: make(chan *write, maxGroup), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// Close stops taking writes, lets the group being committed finish and
// answers its writers with their outcome, and returns once it is done.
// Writes after Close fail with ErrClosing, and nothing of them is stored.
func (c *Committer) Close() {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		close(c.stop)
	})
	<-c.done
}

// Write commits a change with its events, then publishes them. It
// returns the change's own outcome: once the committer took the write
// the answer is what the store did, even when the committer is closing
// meanwhile, so a writer is never told "shutting down" of a change that
// was stored. ctx bounds only the wait for the committer to take it.
func (c *Committer) Write(ctx context.Context, ch *store.Change, evs []*agentsv1.Event) error {
	ts := timestamppb.New(c.opts.Now())
	ch.Events = make([]store.Event, len(evs))
	for i, ev := range evs {
		if ev.Time == nil {
			ev.Time = ts
		}
		body, err := proto.Marshal(ev)
		if err != nil {
			return err
		}
		ch.Events[i] = store.Event{SessionID: ev.SessionId, Owner: ev.Owner, Kind: ev.Kind, Time: ev.Time.AsTime(), Body: body}
	}
	w := &write{change: ch, events: evs, done: make(chan error, 1)}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrClosing
	}
	if c.alone() && c.commit.TryLock() {
		// A write with no other to group with commits on its writer's
		// goroutine: handing it to the loop and the answer back cost two
		// goroutine wake-ups a write, a few percent of a lone session's
		// CPU a prompt (BENCHMARKS.md). Close waits for it (the read
		// lock).
		c.commitGroup([]*write{w}, []*store.Change{ch})
		c.commit.Unlock()
		c.mu.RUnlock()
		return <-w.done
	}
	select {
	case c.in <- w:
	case <-ctx.Done():
		c.mu.RUnlock()
		return ctx.Err()
	}
	c.mu.RUnlock()
	return <-w.done
}

// maxGroup bounds the changes one group commit takes.
const maxGroup = 64

// With many runs in flight the committer waits up to groupWait for more
// writes before it commits what it has: a commit costs about the same for
// one change as for ten (the transaction, the pages of the WAL), and the
// steps of the other runs end within that time. At 64 sessions a group
// grew from 2–3 changes to 9–10, and a prompt cost a tenth less CPU
// (BENCHMARKS.md). With fewer than groupWaitRuns runs, or once every
// run in flight has a write in the group, it does not wait: a lone
// session's step pays nothing. At eight runs, 16 sessions prompting had
// fewer than eight runs in flight for half of their commits, each
// committed alone (about 100 µs of CPU a commit whatever its size); at
// four, a prompt cost 0.84× the CPU at 16 × 20 and 0.95× at 4 × 20.
const (
	groupWait     = time.Millisecond
	groupWaitRuns = 4
)

// loop takes the writes that are waiting, up to maxGroup, commits them
// in one transaction (each in a savepoint, so one that fails fails
// alone), publishes the events of those that committed, in order, and
// answers each writer. While a commit runs, the next writes wait and go
// in the next group: with many sessions, one commit serves many steps.
// A write that finds none waiting and no commit running is committed by
// its own writer instead (Write).
func (c *Committer) loop() {
	defer close(c.done)
	defer c.drain()
	group := make([]*write, 0, maxGroup)
	changes := make([]*store.Change, 0, maxGroup)
	wait := time.NewTimer(groupWait)
	wait.Stop()
	for {
		group, changes = group[:0], changes[:0]
		select {
		case w := <-c.in:
			group = append(group, w)
		case <-c.stop:
			return
		}
		// The lock first: the writes that come while a writer commits
		// its own go in this group.
		c.commit.Lock()
	more:
		for len(group) < maxGroup {
			select {
			case w := <-c.in:
				group = append(group, w)
			default:
				break more
			}
		}
		if c.opts.Runs != nil {
			if runs := c.opts.Runs(); runs >= groupWaitRuns {
				group = c.gather(group, runs, wait)
			}
		}
		for _, w := range group {
			changes = append(changes, w.change)
		}
		c.commitGroup(group, changes)
		c.commit.Unlock()
		clear(group)
		clear(changes)
	}
}

// alone reports whether a write would wait for no other: none is queued,
// and too few runs are in flight for the loop to gather a group (see
// groupWaitRuns).
func (c *Committer) alone() bool {
	return len(c.in) == 0 && (c.opts.Runs == nil || c.opts.Runs() < groupWaitRuns)
}

// commitGroup commits the changes of group in one transaction, publishes
// the events of those that committed, in order, and answers each writer.
// The caller holds c.commit.
func (c *Committer) commitGroup(group []*write, changes []*store.Change) {
	// A group commit runs to its end even when the committer is
	// closing: its writes were taken, and SQLite's transaction is
	// short. A context that is never done also spares database/sql
	// and the driver a watcher goroutine for the transaction and for
	// each of its statements.
	outcomes := c.store.CommitAll(context.Background(), changes)
	for i, w := range group {
		if outcomes[i] == nil {
			for j, ev := range w.events {
				ev.Seq = w.change.Events[j].Seq
				if err := c.publish(ev, w.change.Events[j].Body); err != nil {
					// The change is stored; only its live delivery
					// failed, and replay from the log still has it.
					c.opts.Log.Error("publish a committed event", "session", ev.GetSessionId(), "seq", ev.GetSeq(), "err", err)
				}
			}
		}
		w.done <- outcomes[i]
	}
}

// publish gives a committed event to the hub. An event stored without its
// position (Seq 0: PostgreSQL gives positions after the commit, and this
// one's could not wait) is left to Options.Publish, whose follower of the
// log publishes it once it has one; with no follower nothing would.
func (c *Committer) publish(ev *agentsv1.Event, body []byte) error {
	if c.opts.Publish != nil {
		return c.opts.Publish(ev, body)
	}
	if ev.Seq == 0 {
		return errUnpositioned
	}
	_, err := c.hub.PublishEncoded(ev, body)
	return err
}

// errUnpositioned is publish's error for an event stored without its
// position on a committer that has no follower of the log.
var errUnpositioned = errors.New("stored without a position, and nothing follows the log to publish it")

// drain answers the writes still queued when the loop stops: none of
// them was stored. Close set closed first, so no write comes after.
func (c *Committer) drain() {
	for {
		select {
		case w := <-c.in:
			w.done <- ErrClosing
		default:
			return
		}
	}
}

// gather adds the writes that come within groupWait to group, until it
// holds maxGroup or as many as there are runs in flight.
func (c *Committer) gather(group []*write, runs int, wait *time.Timer) []*write {
	wait.Reset(groupWait)
	defer wait.Stop()
	for len(group) < maxGroup && len(group) < runs {
		select {
		case w := <-c.in:
			group = append(group, w)
		case <-wait.C:
			return group
		case <-c.stop:
			return group
		}
	}
	return group
}
