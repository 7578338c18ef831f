package events

import (
	"errors"
	"sync/atomic"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Mode says how a subscription begins, which is what the server announces
// in the Agents-Replay header.
type Mode uint8

const (
	// ModeLive: no position was asked for; only events published after
	// Subscribe arrive.
	ModeLive Mode = iota
	// ModeReplay: every matching event after the asked position arrives,
	// then live ones, with no gap and no duplicate.
	ModeReplay
	// ModeSnapshot: the asked position is gone from the ring or unknown to
	// this server. The caller sends a snapshot reflecting at least
	// SnapshotSeq, then the live events, which start after SnapshotSeq. An
	// event may show both in the snapshot and live; clients apply events
	// idempotently, and nothing is missed.
	ModeSnapshot
)

// String returns "live", "replay" or "snapshot".
func (m Mode) String() string {
	switch m {
	case ModeReplay:
		return "replay"
	case ModeSnapshot:
		return "snapshot"
	default:
		return "live"
	}
}

// Why a subscription ended, reported by Subscription.Err.
var (
	ErrClosed   = errors.New("events: subscription closed")
	ErrLagged   = errors.New("events: subscriber lagged")
	ErrShutdown = errors.New("events: hub shut down")
)

type reason int32

const (
	reasonNone reason = iota
	reasonClosed
	reasonLagged
	reasonShutdown
)

// Subscription is one subscriber's stream of events. Its methods are safe to
// call from any goroutine.
type Subscription struct {
	hub         *Hub
	scope       Scope
	mode        Mode
	snapshotSeq uint64
	ch          chan *agentsv1.Event

	// lastSeq is written under the hub's mutex and read without it.
	lastSeq atomic.Uint64
	reason  atomic.Int32

	// ended is guarded by the hub's mutex; it makes ending idempotent.
	ended bool
}

// Subscribe registers a subscriber for scope. With after nil it receives
// live events only (ModeLive). When every event after *after is still in the
// ring — including after == Seq() — it first receives the matching ones, in
// order, then live ones (ModeReplay). Otherwise (too old, or newer than
// anything this hub numbered) it receives live events after SnapshotSeq and
// the caller owes the client a snapshot (ModeSnapshot).
//
// Registration and the copy of the replayed events happen in one critical
// section, so no event can fall between them or arrive twice.
func (h *Hub) Subscribe(scope Scope, after *uint64) (*Subscription, Mode) {
	h.mu.Lock()
	defer h.mu.Unlock()

	cur := h.seq.Load()
	s := &Subscription{hub: h, scope: scope, snapshotSeq: cur}
	// Whatever the mode, every event up to cur that the subscription will
	// carry is queued below, covered by the snapshot, or was not asked for.
	s.lastSeq.Store(cur)
	backlog := 0
	switch {
	case after == nil:
		s.mode = ModeLive
	case h.ring.covers(*after, cur):
		s.mode = ModeReplay
		// Counting first sizes the channel exactly without building an
		// intermediate slice; this runs under the lock, so it matters.
		h.ring.each(scope, *after, cur, func(*agentsv1.Event) { backlog++ })
	default:
		s.mode = ModeSnapshot
	}

	// The backlog gets room of its own so the live queue keeps its full
	// size, and filling it here can never block.
	s.ch = make(chan *agentsv1.Event, h.queueSize+backlog)
	if h.shutdown {
		s.end(reasonShutdown)
		return s, s.mode
	}
	if backlog > 0 {
		h.ring.each(scope, *after, cur, func(ev *agentsv1.Event) { s.ch <- ev })
	}
	h.subs.add(s)
	return s, s.mode
}

// C returns the channel of events. It is closed when the subscription ends
// (Close, lagged cut, Shutdown); events queued before that stay readable.
func (s *Subscription) C() <-chan *agentsv1.Event { return s.ch }

// Mode returns how the subscription began.
func (s *Subscription) Mode() Mode { return s.mode }

// Scope returns the subscription's scope.
func (s *Subscription) Scope() Scope { return s.scope }

// SnapshotSeq returns the hub's seq when the subscription was registered. In
// ModeSnapshot the snapshot must reflect at least every event up to it; live
// events start right after it.
func (s *Subscription) SnapshotSeq() uint64 { return s.snapshotSeq }

// LastSeq returns the position of the subscription: a consumer that has
// read every event queued so far has seen every matching event with a seq up
// to LastSeq. It starts at SnapshotSeq (the replayed events are queued at
// once) and then follows each live event queued. It is what a client
// reconnects with.
func (s *Subscription) LastSeq() uint64 { return s.lastSeq.Load() }

// Err returns nil while the subscription is live, then why it ended:
// ErrClosed, ErrLagged or ErrShutdown.
func (s *Subscription) Err() error {
	switch reason(s.reason.Load()) {
	case reasonClosed:
		return ErrClosed
	case reasonLagged:
		return ErrLagged
	case reasonShutdown:
		return ErrShutdown
	default:
		return nil
	}
}

// Lagged reports whether the subscription was cut for falling behind, and
// its LastSeq: the seq of the last event it was given (or SnapshotSeq when
// none came live). Once the consumer has drained C(), the client resumes
// after it.
func (s *Subscription) Lagged() (bool, uint64) {
	return reason(s.reason.Load()) == reasonLagged, s.lastSeq.Load()
}

// Close ends the subscription and unregisters it. It is idempotent and may
// race with a lagged cut or Shutdown: whichever comes first decides Err.
func (s *Subscription) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.ended {
		return
	}
	h.subs.remove(s)
	s.end(reasonClosed)
}

// offer queues ev without blocking. When the queue is full it cuts the
// subscription as lagged and returns false; the caller drops it from the
// index. Called under the hub's mutex.
func (s *Subscription) offer(ev *agentsv1.Event) bool {
	select {
	case s.ch <- ev:
		s.lastSeq.Store(ev.Seq)
		return true
	default:
		s.end(reasonLagged)
		s.hub.lagged.Add(1)
		return false
	}
}

// end records why the subscription ended and closes its channel, the reason
// first so a consumer that sees the channel closed also sees the reason.
// Called under the hub's mutex, once.
func (s *Subscription) end(r reason) {
	s.ended = true
	s.reason.Store(int32(r))
	close(s.ch)
}
