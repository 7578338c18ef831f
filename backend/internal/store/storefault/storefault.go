// Package storefault wraps a store.Store with switches that make its
// writes fail or slow down, the way a locked or full database does, so
// tests exercise the kernel's error paths for real.
//
// The switches live in Faults, apart from the store they act on, so one
// set of switches can follow a test across a restart that opens the
// database again (Wrap the new store with the same Faults).
package storefault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// ErrRefused is the error of a write a switch refused. It is not one of
// the kinds of package errs, like the error of a database that is locked
// or full.
var ErrRefused = errors.New("storefault: write refused")

// Always, as a count, keeps a refusal on until Clear.
const Always = -1

// Faults are the switches of one or more wrapped stores. The zero value
// refuses nothing; it is safe for concurrent use.
type Faults struct {
	mu    sync.Mutex
	rules []*rule
	// slowWrites and slowReads are waited before each write or read.
	slowWrites, slowReads time.Duration
	refused, writes       int
	changed               chan struct{}
}

// rule refuses the writes it matches, left times (Always: forever).
type rule struct {
	left int
	// match selects commits; nil selects every write, commits included.
	match func(*store.Change) bool
	// err is what a refused write returns; nil is ErrRefused.
	err error
}

// RefuseWrites makes the next n writes fail with ErrRefused, whatever they
// are (Commit and every other write method); Always refuses them until
// Clear.
func (f *Faults) RefuseWrites(n int) {
	f.add(&rule{left: n})
}

// RefuseCommits makes the next n commits that match fail with ErrRefused
// (Always: until Clear). Other writes go through.
func (f *Faults) RefuseCommits(n int, match func(*store.Change) bool) {
	f.add(&rule{left: n, match: match})
}

// FailCommits makes the next n commits that match fail with err, as the
// store reports a permanent failure (a conflict, a missing session):
// err is returned as it is, so a test picks the kind the kernel sees.
func (f *Faults) FailCommits(n int, match func(*store.Change) bool, err error) {
	f.add(&rule{left: n, match: match, err: err})
}

func (f *Faults) add(r *rule) {
	if r.left == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, r)
}

// SlowWrites makes every write wait d before it goes to the store, and
// SlowReads every read; zero ends the wait.
func (f *Faults) SlowWrites(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slowWrites = d
}

// SlowReads makes every read wait d before it goes to the store.
func (f *Faults) SlowReads(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.slowReads = d
}

// Clear turns every switch off: the store takes every write again, at
// full speed.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
	f.slowWrites, f.slowReads = 0, 0
}

// Refused returns how many writes were refused so far.
func (f *Faults) Refused() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

// Writes returns how many writes reached the switches so far, refused or
// not (a write the database itself then refuses counts too).
func (f *Faults) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// WaitWrites waits until at least n writes reached the switches, or
// returns ctx's error.
func (f *Faults) WaitWrites(ctx context.Context, n int) error {
	return f.waitFor(ctx, n, func() int { return f.writes }, "writes")
}

// WaitRefused waits until at least n writes were refused, or returns
// ctx's error.
func (f *Faults) WaitRefused(ctx context.Context, n int) error {
	return f.waitFor(ctx, n, func() int { return f.refused }, "writes refused")
}

// waitFor waits until count(), read under f.mu, is at least n.
func (f *Faults) waitFor(ctx context.Context, n int, count func() int, what string) error {
	for {
		f.mu.Lock()
		if count() >= n {
			f.mu.Unlock()
			return nil
		}
		ch := f.changedLocked()
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			f.mu.Lock()
			got := count()
			f.mu.Unlock()
			return fmt.Errorf("%d %s, want %d: %w", got, what, n, ctx.Err())
		case <-ch:
		}
	}
}

func (f *Faults) changedLocked() chan struct{} {
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

// write decides a write: c is the change of a commit, nil for the other
// write methods.
func (f *Faults) write(ctx context.Context, c *store.Change) error {
	f.mu.Lock()
	delay := f.slowWrites
	var refuse bool
	var err error
	for i, r := range f.rules {
		if r.match != nil && (c == nil || !r.match(c)) {
			continue
		}
		refuse, err = true, r.err
		if r.left > 0 {
			if r.left--; r.left == 0 {
				f.rules = slices.Delete(f.rules, i, i+1)
			}
		}
		break
	}
	f.writes++
	if refuse {
		f.refused++
	}
	close(f.changedLocked())
	f.changed = nil
	f.mu.Unlock()
	if err := wait(ctx, delay); err != nil {
		return err
	}
	if refuse && err != nil {
		return err
	}
	if refuse {
		return ErrRefused
	}
	return nil
}

func (f *Faults) read(ctx context.Context) error {
	f.mu.Lock()
	delay := f.slowReads
	f.mu.Unlock()
	return wait(ctx, delay)
}

func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WithEvent matches a commit that carries an event of one of the kinds,
// such as "run.stopped".
func WithEvent(kinds ...string) func(*store.Change) bool {
	return func(c *store.Change) bool {
		for _, e := range c.Events {
			if slices.Contains(kinds, e.Kind) {
				return true
			}
		}
		return false
	}
}

// EndsRun matches a commit that records the end of a run: run.stopped or
// session.failed.
func EndsRun() func(*store.Change) bool {
	return WithEvent(events.KindRunStopped, events.KindSessionFailed)
}

// WithStatus matches a commit that writes a session with the status.
func WithStatus(status session.Status) func(*store.Change) bool {
	return func(c *store.Change) bool { return c.Meta != nil && c.Meta.Status == status }
}

// WithTurns matches a commit that appends turns to a session.
func WithTurns() func(*store.Change) bool {
	return func(c *store.Change) bool { return len(c.NewTurns) > 0 }
}

// WithToolResults matches a commit that stores the results of a round of
// tool calls.
func WithToolResults() func(*store.Change) bool {
	return func(c *store.Change) bool {
		for _, t := range c.NewTurns {
			if t.User != nil && len(t.User.ToolResults) > 0 {
				return true
			}
		}
		return false
	}
}

// WithMail matches a commit that stores mail for a session.
func WithMail(sessionID string) func(*store.Change) bool {
	return func(c *store.Change) bool {
		for _, m := range c.NewMail {
			if m.SessionID == sessionID {
				return true
			}
		}
		return false
	}
}

// Of matches a commit of one session: one that writes its metadata, or,
// for a commit without metadata, one whose events are all about it.
func Of(sessionID string, match func(*store.Change) bool) func(*store.Change) bool {
	return func(c *store.Change) bool {
		about := c.Meta != nil && c.Meta.ID == sessionID
		if c.Meta == nil && len(c.Events) > 0 {
			about = true
			for _, e := range c.Events {
				about = about && e.SessionID == sessionID
			}
		}
		return about && match(c)
	}
}
