package events

import (
	"context"
	"errors"
	"slices"
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
	hub      *Hub
	scope    Scope
	mode     Mode
	snapshot Position
	ch       chan *agentsv1.Event
	// visit is the kinds of event the hub's index offers the
	// subscription: those of its scope, and the logged ones too while it
	// holds deltas back (they open their sessions, see lets).
	visit kindSet

	// last is the position of the newest event queued (or where the
	// subscription began); ended makes ending idempotent. Both are
	// guarded by the hub's mutex.
	last Position
	// open, when not nil, holds deltas back: the subscription began at a
	// position that does not place this hub's deltas, and only those of
	// the sessions in open, which had a logged event since, go through
	// (see SubscribeAt). At most maxOpenSessions; when full it is
	// emptied, which can only hold more deltas back. Guarded by the hub's
	// mutex.
	open   map[string]struct{}
	ended  bool
	reason atomic.Int32
}

// Subscribe is SubscribeAt for a hub without a log, with a seq for a
// position.
func (h *Hub) Subscribe(scope Scope, after *uint64) (*Subscription, Mode) {
	var p *Position
	if after != nil {
		p = &Position{Seq: *after}
	}
	s, err := h.SubscribeAt(context.Background(), scope, p)
	if err != nil {
		// Only reading the log fails, and without one nothing is read.
		s = h.register(scope, ModeSnapshot, nil, Position{}, false)
	}
	return s, s.mode
}

// SubscribeAt registers a subscriber for scope. With after nil it receives
// live events only (ModeLive). When every event after *after that scope
// matches is still at hand (the logged ones in the ring or in the log, the
// deltas in the delta ring), it first receives them, in order, then live
// ones (ModeReplay); a logged position the log holds but the hub has not
// published yet (it follows another server's commits) is one of them.
// Otherwise (too old, a delta of the scope pushed out, or newer than
// anything the log holds) it receives live events after SnapshotPosition
// and the caller owes the client a snapshot (ModeSnapshot): a replay is
// never given with a gap. It fails only when reading the log fails.
//
// A position that does not place this hub's deltas (another server's, one
// of this server before a restart, a bare seq on a server that relays:
// see placesDeltas) still places the logged events, which are the same
// on every server: the subscriber gets those after its seq replayed, and
// no delta of the replay, and then each session's live deltas only once
// the session's next logged event has come (see Subscription.open). The
// client's text in progress came from another numbering: any delta here
// may be one it has, and a delta shown twice is a wrong answer, while
// one missing is a hole the next logged turn fills with the whole text.
// A snapshot would be honest too, but would make the client refetch
// every session in scope and replay no logged event at all, for the sake
// of deltas that are best-effort anyway.
//
// The replayed events are queued and the subscriber registered in one
// critical section, so no event can fall between them or arrive twice.
func (h *Hub) SubscribeAt(ctx context.Context, scope Scope, after *Position) (*Subscription, error) {
	h.mu.Lock()
	if after == nil {
		defer h.mu.Unlock()
		return h.register(scope, ModeLive, nil, Position{}, false), nil
	}
	p, deltas := *after, h.placesDeltas(*after)
	if !deltas {
		p = Position{Seq: after.Seq}
	}
	// A scope that takes no delta needs none held, and none replayed:
	// losing some never stands in its way.
	held := !deltas && scope.wantsDeltas()
	deltas = deltas && scope.wantsDeltas()
	// A position past the hub's newest event is none of this hub's
	// deltas, but may be a logged event it has not been given yet: one
	// another server committed, which this server's follower publishes
	// here in a moment. The log has it, and places it.
	ahead := h.position().Before(p)
	switch {
	case ahead && (h.log == nil || p.Delta != 0), deltas && !h.deltas.holds(scope, p):
		defer h.mu.Unlock()
		return h.register(scope, ModeSnapshot, nil, Position{}, false), nil
	case !ahead && h.ring.covers(p):
		defer h.mu.Unlock()
		var backlog []*agentsv1.Event
		if err := h.ring.each(scope, p, func(ev *agentsv1.Event) { backlog = append(backlog, ev) }); err != nil {
			return nil, err
		}
		if deltas {
			var err error
			if backlog, err = h.withDeltas(scope, p, backlog); err != nil {
				return nil, err
			}
		}
		return h.register(scope, ModeReplay, backlog, Position{}, held), nil
	}
	h.mu.Unlock()
	if h.log == nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.register(scope, ModeSnapshot, nil, Position{}, false), nil
	}
	// Older than the ring, or newer than the hub: read the log up to its
	// newest seq, then take what was published since from the ring. A
	// burst that pushes that point out of the ring meanwhile makes it
	// read again. The live events up to that seq, which a hub behind the
	// log publishes later, are skipped (see register).
	for range 3 {
		logged, newest, ok, err := h.readLog(ctx, scope, p.Seq)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		upTo := Position{Seq: newest}
		h.mu.Lock()
		if !h.ring.covers(upTo) {
			h.mu.Unlock()
			continue
		}
		if deltas && !h.deltas.holds(scope, p) {
			// Pushed out while the log was read.
			defer h.mu.Unlock()
			return h.register(scope, ModeSnapshot, nil, Position{}, false), nil
		}
		err = h.ring.each(scope, upTo, func(ev *agentsv1.Event) { logged = append(logged, ev) })
		backlog := logged
		if err == nil && deltas {
			backlog, err = h.withDeltas(scope, p, logged)
		}
		if err != nil {
			h.mu.Unlock()
			return nil, err
		}
		s := h.register(scope, ModeReplay, backlog, upTo, held)
		h.mu.Unlock()
		return s, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.register(scope, ModeSnapshot, nil, Position{}, false), nil
}

// readLog reads from the log the events after seq that scope matches, up
// to the log's newest seq, which it returns too. ok is false when the log
// no longer holds all of them (pruned), holds more than a replay sends,
// or has not reached seq (a position nobody published).
//
// The pruner may delete the oldest events at any moment, and the bounds
// and the events are separate reads. So the newest seq is read first
// (every event up to it is committed, in seq order, so the events read
// next include all of them that are left), and the oldest seq again last:
// the log is trimmed from its oldest end only, so if it still starts at
// or before the first seq wanted once the events were read, none was
// missing when they were.
func (h *Hub) readLog(ctx context.Context, scope Scope, seq uint64) (logged []*agentsv1.Event, newest uint64, ok bool, err error) {
	oldest, newest, err := h.log.Bounds(ctx)
	if err != nil || !heldFrom(oldest, seq) || newest < seq {
		return nil, 0, false, err
	}
	logged, err = h.log.After(ctx, scope, seq, h.maxReplay+1)
	if err != nil || len(logged) > h.maxReplay {
		return nil, 0, false, err
	}
	if oldest, _, err = h.log.Bounds(ctx); err != nil || !heldFrom(oldest, seq) {
		return nil, 0, false, err
	}
	for len(logged) > 0 && logged[len(logged)-1].Seq > newest {
		logged = logged[:len(logged)-1]
	}
	if scope.kinds != 0 {
		// The log selects by scope; the kinds are sifted here, so the
		// replay bound counts every event of the scope.
		logged = slices.DeleteFunc(logged, func(ev *agentsv1.Event) bool { return !scope.wants(bitOf(ev)) })
	}
	return logged, newest, true, nil
}

// heldFrom reports whether a log whose oldest seq is oldest holds every
// event after seq.
func heldFrom(oldest, seq uint64) bool { return oldest != 0 && oldest <= seq+1 }

// withDeltas merges into logged (ordered) the deltas after p that scope
// matches. Called under the hub's mutex.
func (h *Hub) withDeltas(scope Scope, p Position, logged []*agentsv1.Event) ([]*agentsv1.Event, error) {
	var deltas []*agentsv1.Event
	if err := h.deltas.each(scope, p, func(ev *agentsv1.Event) { deltas = append(deltas, ev) }); err != nil {
		return nil, err
	}
	if len(deltas) == 0 {
		return logged, nil
	}
	out := make([]*agentsv1.Event, 0, len(logged)+len(deltas))
	i, j := 0, 0
	for i < len(logged) || j < len(deltas) {
		if j == len(deltas) || (i < len(logged) && PositionOf(logged[i]).Before(PositionOf(deltas[j]))) {
			out = append(out, logged[i])
			i++
		} else {
			out = append(out, deltas[j])
			j++
		}
	}
	return out, nil
}

// register makes a subscription with backlog queued ahead of live events.
// Live events at or before seen (read from the log but not yet published)
// are skipped. held holds each session's live deltas back until its next
// logged event (see SubscribeAt). Called under the hub's mutex.
func (h *Hub) register(scope Scope, mode Mode, backlog []*agentsv1.Event, seen Position, held bool) *Subscription {
	cur := h.position()
	s := &Subscription{hub: h, scope: scope, mode: mode, snapshot: cur, last: cur, visit: everyKind}
	if scope.kinds != 0 {
		s.visit = scope.kinds
	}
	if held {
		s.open = map[string]struct{}{}
		s.visit |= everyKind &^ deltaSet()
	}
	if cur.Before(seen) {
		s.last = seen
	}
	// The backlog gets room of its own so the live queue keeps its full
	// size, and filling it here can never block.
	s.ch = make(chan *agentsv1.Event, h.queueSize+len(backlog))
	if h.shutdown {
		s.end(reasonShutdown)
		return s
	}
	for _, ev := range backlog {
		s.ch <- ev
	}
	h.subs.add(s)
	return s
}

// C returns the channel of events. It is closed when the subscription ends
// (Close, lagged cut, Shutdown); events queued before that stay readable.
func (s *Subscription) C() <-chan *agentsv1.Event { return s.ch }

// Mode returns how the subscription began.
func (s *Subscription) Mode() Mode { return s.mode }

// Scope returns the subscription's scope.
func (s *Subscription) Scope() Scope { return s.scope }

// SnapshotPosition returns the hub's position when the subscription was
// registered. In ModeSnapshot the snapshot must reflect at least every
// event up to it; live events start right after it.
func (s *Subscription) SnapshotPosition() Position { return s.snapshot }

// SnapshotSeq is SnapshotPosition's seq.
func (s *Subscription) SnapshotSeq() uint64 { return s.snapshot.Seq }

// LastPosition returns the position of the subscription: a consumer that
// has read every event queued so far has seen every matching event up to
// it. It starts where the subscription began (the replayed events are
// queued at once) and then follows each live event queued. It is what a
// client reconnects with.
func (s *Subscription) LastPosition() Position {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.last
}

// LastSeq is LastPosition's seq.
func (s *Subscription) LastSeq() uint64 { return s.LastPosition().Seq }

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
// its LastPosition: that of the last event it was given (or where it began
// when none came live). Once the consumer has drained C(), the client
// resumes after it.
func (s *Subscription) Lagged() (bool, Position) {
	return reason(s.reason.Load()) == reasonLagged, s.LastPosition()
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

// offer queues ev, whose kind's bit is bit, without blocking. When the
// queue is full it cuts the subscription as lagged and returns false; the
// caller drops it from the index. Called under the hub's mutex.
func (s *Subscription) offer(ev *agentsv1.Event, bit kindSet) bool {
	p := PositionOf(ev)
	if !s.last.Before(p) {
		return true // already replayed from the log
	}
	if s.open != nil && !s.lets(ev) {
		return true
	}
	if !s.scope.wants(bit) {
		return true // offered only to open its session
	}
	select {
	case s.ch <- ev:
		s.last = p
		return true
	default:
		s.end(reasonLagged)
		s.hub.lagged.Add(1)
		return false
	}
}

// maxOpenSessions bounds Subscription.open.
const maxOpenSessions = 1024

// lets reports whether a subscription that holds deltas back lets ev
// through: a logged event, which opens its session to deltas, or a delta
// of an open session. Called under the hub's mutex.
func (s *Subscription) lets(ev *agentsv1.Event) bool {
	id := ev.GetSessionId()
	if ev.GetDeltaSeq() != 0 {
		_, ok := s.open[id]
		return ok
	}
	if _, ok := s.open[id]; !ok {
		if len(s.open) >= maxOpenSessions {
			clear(s.open)
		}
		s.open[id] = struct{}{}
	}
	return true
}

// end records why the subscription ended and closes its channel, the reason
// first so a consumer that sees the channel closed also sees the reason.
// Called under the hub's mutex, once.
func (s *Subscription) end(r reason) {
	s.ended = true
	s.reason.Store(int32(r))
	close(s.ch)
}
