package events

import (
	"sync"
	"sync/atomic"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Defaults for Options fields left at zero.
const (
	DefaultRingSize  = 4096
	DefaultQueueSize = 1024
)

// Options configure a Hub. Zero fields take the defaults.
type Options struct {
	// RingSize is how many of the newest events are kept for replay.
	RingSize int
	// QueueSize is how many live events a subscriber may have waiting before
	// it is cut as lagged. Replayed events come on top: they never count
	// against it.
	QueueSize int
	// Now stamps event times; tests inject a fake clock.
	Now func() time.Time
}

// Hub numbers, keeps and fans out events. It is safe for concurrent use.
type Hub struct {
	now       func() time.Time
	queueSize int

	// seq is written only under mu, but is atomic so Seq needs no lock.
	seq atomic.Uint64
	// lagged counts the subscriptions ever cut for falling behind; it is
	// written under mu and read without it, for metrics.
	lagged atomic.Uint64

	mu       sync.Mutex
	ring     ring
	subs     index
	shutdown bool
}

// New returns a hub configured by opts.
func New(opts Options) *Hub {
	if opts.RingSize <= 0 {
		opts.RingSize = DefaultRingSize
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Hub{
		now:       opts.Now,
		queueSize: opts.QueueSize,
		ring:      newRing(opts.RingSize),
		subs:      newIndex(),
	}
}

// Publish stamps ev with the next seq and the current time, keeps it for
// replay and offers it to every matching subscriber, and returns the seq.
// It never blocks on a subscriber: one whose queue is full is cut as lagged.
// ev must not be nil, and from now on it belongs to the hub: nobody may
// modify it. Publishing still numbers and keeps events after Shutdown, so a
// runner winding down needs no special case.
func (h *Hub) Publish(ev *agentsv1.Event) uint64 {
	if ev == nil {
		panic("events: Publish of a nil event")
	}
	// Allocate outside the critical section; fill inside it, so times never
	// go backwards along seqs (given a clock that does not step back).
	ts := new(timestamppb.Timestamp)

	h.mu.Lock()
	defer h.mu.Unlock()
	seq := h.seq.Load() + 1
	h.seq.Store(seq)
	now := h.now()
	ts.Seconds, ts.Nanos = now.Unix(), int32(now.Nanosecond())
	ev.Seq, ev.Time = seq, ts
	h.ring.put(ev)
	h.subs.publish(ev)
	return seq
}

// Seq returns the seq of the newest event, 0 before the first.
func (h *Hub) Seq() uint64 { return h.seq.Load() }

// Subscribers returns how many subscriptions are live.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subs.count
}

// Lagged returns how many subscriptions have been cut for falling behind
// since the hub was made.
func (h *Hub) Lagged() uint64 { return h.lagged.Load() }

// Shutdown ends every subscription with ErrShutdown. Subscriptions made
// afterwards start already ended the same way. It is idempotent.
func (h *Hub) Shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.shutdown = true
	h.subs.each(func(s *Subscription) { s.end(reasonShutdown) })
	h.subs = newIndex()
}
