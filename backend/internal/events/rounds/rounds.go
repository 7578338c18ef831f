// Package rounds paces the writes of many event subscribers into shared
// rounds.
//
// With a thousand subscribers, fan-out costs a write to a socket per
// subscriber each time it is woken, and a write costs about the same for
// one event as for ten, so a subscriber waits a short window after its
// first event for those that usually follow. Subscribers that each wait on
// a timer of their own spread their writes over time and each writes
// whatever its queue holds when its timer fires, so no two write the same
// bytes, and a thousand timers fire where one would do.
//
// A Clock gives the subscribers one window: a subscriber with an event to
// write waits for the next round, which starts a window after the first
// subscriber asked for it, and releases every subscriber waiting at once.
// Each round has a cut, the hub's position when it started: every
// subscriber of the round writes its events up to the cut and keeps the
// later ones for the next round, so the subscribers of one scope write
// the same events in each round and can share one encoding of them.
//
// A round never waits for the writes of the one before: a subscriber
// whose write blocks (a client that does not read) joins a later round
// when it is done, and holds no other back.
package rounds

import (
	"context"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/events"
)

// Clock starts rounds. It is safe for concurrent use; make one with New.
type Clock struct {
	window func() time.Duration
	cut    func() events.Position

	mu sync.Mutex
	// next is closed when the next round starts; armed says its timer
	// runs.
	next  chan struct{}
	armed bool
	timer *time.Timer
	// round is the cut of the round started last.
	round events.Position
}

// New returns a clock whose rounds start window() after the first
// subscriber asked for one. cut returns the hub's position (see
// events.Hub.Position): a round's cut.
func New(window func() time.Duration, cut func() events.Position) *Clock {
	c := &Clock{window: window, cut: cut, next: make(chan struct{})}
	c.timer = time.AfterFunc(time.Hour, c.start)
	c.timer.Stop()
	return c
}

// Wait blocks until the next round starts and returns its cut: the caller
// writes its events up to the cut. It returns ctx's error if ctx ends
// first.
func (c *Clock) Wait(ctx context.Context) (events.Position, error) {
	c.mu.Lock()
	next := c.next
	if !c.armed {
		c.armed = true
		c.timer.Reset(c.window())
	}
	c.mu.Unlock()
	select {
	case <-next:
		// The cut of the round that released the caller, or of a later
		// one when another started before it woke: that only moves more
		// of its events into this round.
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.round, nil
	case <-ctx.Done():
		return events.Position{}, ctx.Err()
	}
}

// start starts a round: it takes the cut and releases the subscribers
// waiting.
func (c *Clock) start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.round = c.cut()
	close(c.next)
	c.next = make(chan struct{})
	c.armed = false
}
