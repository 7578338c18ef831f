package events

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Defaults for Options fields left at zero.
//
// The rings are small: every logged event is in the log, so a position
// the ring no longer covers replays from there, and deltas only matter
// for the turn in progress, which GetSession returns anyway. What they
// keep counts against an idle server's memory.
const (
	DefaultRingSize       = 2048
	DefaultRingBytes      = 1 << 20
	DefaultDeltaRingSize  = 1024
	DefaultDeltaRingBytes = 256 << 10
	DefaultQueueSize      = 1024
	DefaultMaxReplay      = 10000
)

// Log is the durable event log a hub replays from when a subscriber's
// position is older than the ring. It is appended to in seq order and
// trimmed from its oldest end only, so the oldest seq Bounds reports
// never goes down: the hub relies on that to read the events and the
// bounds separately while the log is pruned (see Hub.readLog).
type Log interface {
	// After returns up to limit logged events after seq that scope
	// matches, oldest first.
	After(ctx context.Context, scope Scope, seq uint64, limit int) ([]*agentsv1.Event, error)
	// Bounds returns the oldest and the newest seq in the log (0, 0 when
	// it is empty).
	Bounds(ctx context.Context) (oldest, newest uint64, err error)
}

// Options configure a Hub. Zero fields take the defaults.
type Options struct {
	// RingSize and RingBytes bound the newest logged events kept in memory
	// for replay, by count and by the bytes kept (their encodings, see
	// ring).
	RingSize  int
	RingBytes int
	// DeltaRingSize and DeltaRingBytes bound the deltas kept in memory;
	// deltas have a ring of their own, so they never push logged events
	// out of the replay window. The ring is shared by every session; what
	// it pushes out is remembered per session and owner (see losses), up
	// to DeltaRingSize of each.
	DeltaRingSize  int
	DeltaRingBytes int
	// QueueSize is how many live events a subscriber may have waiting before
	// it is cut as lagged. Replayed events come on top: they never count
	// against it.
	QueueSize int
	// Log, when set, serves replays older than the ring. Without it such
	// positions get a snapshot.
	Log Log
	// MaxReplay is the most events a replay from the log sends; a position
	// further behind gets a snapshot.
	MaxReplay int
	// Now stamps event times; tests inject a fake clock.
	Now func() time.Time
}

// Hub keeps and fans out events. It is safe for concurrent use.
//
// Logged events arrive with the seq the log gave them, in seq order (the
// publisher serialises its commits and publishes in commit order); an
// event published without a seq gets the next one, for a hub without a
// log. Deltas get the newest seq and a delta counter of their own.
type Hub struct {
	now       func() time.Time
	queueSize int
	log       Log
	maxReplay int

	// seq is written only under mu, but is atomic so Seq needs no lock.
	seq atomic.Uint64
	// lagged counts the subscriptions ever cut for falling behind; it is
	// written under mu and read without it, for metrics.
	lagged atomic.Uint64

	// frames caches each event's encodings while a ring holds it, so
	// every subscriber shares one (see Frame). It is keyed by position,
	// which names one event: a copy of it read from the log or decoded
	// from the ring shares the cache too.
	frames sync.Map // Position → *frame

	mu sync.Mutex
	// delta is the newest delta's Delta: the hub's tag and its counter
	// (see Position), the tag alone before the first delta.
	delta    uint64
	ring     ring
	deltas   ring
	subs     index
	shutdown bool
	// relayed says other servers' deltas are published here too (see
	// SetRelayed).
	relayed bool
}

// New returns a hub configured by opts.
func New(opts Options) *Hub {
	if opts.RingSize <= 0 {
		opts.RingSize = DefaultRingSize
	}
	if opts.RingBytes <= 0 {
		opts.RingBytes = DefaultRingBytes
	}
	if opts.DeltaRingSize <= 0 {
		opts.DeltaRingSize = DefaultDeltaRingSize
	}
	if opts.DeltaRingBytes <= 0 {
		opts.DeltaRingBytes = DefaultDeltaRingBytes
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.MaxReplay <= 0 {
		opts.MaxReplay = DefaultMaxReplay
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	h := &Hub{
		now:       opts.Now,
		queueSize: opts.QueueSize,
		log:       opts.Log,
		maxReplay: opts.MaxReplay,
		ring:      newRing(opts.RingSize, opts.RingBytes),
		deltas:    newRing(opts.DeltaRingSize, opts.DeltaRingBytes),
		delta:     newTag() << counterBits,
	}
	lost := newLosses(opts.DeltaRingSize)
	h.deltas.lost = &lost
	h.subs.reset()
	forget := func(p Position) { h.frames.Delete(p) }
	h.ring.dropped, h.deltas.dropped = forget, forget
	return h
}

// Encoding names a wire format an event is encoded in.
type Encoding int

// The encodings a hub caches, one slot each.
const (
	// EncodingSSE is a whole SSE frame.
	EncodingSSE Encoding = iota
	// EncodingProto is the event in protobuf binary.
	EncodingProto
	// EncodingJSON is the event in protobuf JSON.
	EncodingJSON
	encodings
)

// frame is one event's cached encodings.
type frame struct {
	slots [encodings]struct {
		once  sync.Once
		bytes []byte
		err   error
	}
	// ring is the ring whose entry the frame belongs to; size is what
	// the entry counts against its budget, and gone says the entry was
	// pushed out. Guarded by the hub's mutex.
	ring *ring
	size int
	gone bool
}

// Frame returns encode(ev) for the encoding, computed once per event and
// encoding for every subscriber while a ring still holds the event (its
// bytes then count against the ring's budget); an event no ring holds is
// encoded each time. The bytes are shared: nobody may modify them.
func (h *Hub) Frame(ev *agentsv1.Event, enc Encoding, encode func(*agentsv1.Event) ([]byte, error)) ([]byte, error) {
	if enc < 0 || enc >= encodings {
		return encode(ev)
	}
	p := PositionOf(ev)
	var f *frame
	if v, ok := h.frames.Load(p); ok {
		f = v.(*frame)
	} else if f = h.frameOf(p); f == nil {
		return encode(ev)
	}
	slot := &f.slots[enc]
	slot.once.Do(func() {
		slot.bytes, slot.err = encode(ev)
		if n := len(slot.bytes); n > 0 {
			h.mu.Lock()
			f.ring.grow(f, n)
			h.mu.Unlock()
		}
	})
	return slot.bytes, slot.err
}

// Start sets the position the log is at when the process starts: the
// first event published next comes after seq, and replays of anything up
// to seq come from the log. Call it before the first Publish.
func (h *Hub) Start(seq uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq.Store(seq)
	h.ring.reset(Position{Seq: seq})
	h.deltas.reset(Position{Seq: seq})
}

// Stamp sets ev's time to now unless it has one.
func (h *Hub) Stamp(ev *agentsv1.Event) {
	if ev.Time == nil {
		ev.Time = timestamppb.New(h.now())
	}
}

// ErrOutOfOrder is PublishEncoded's answer to an event whose seq is not
// above every seq published before: the publisher published out of
// commit order, a bug it must report.
var ErrOutOfOrder = errors.New("events: seq out of order")

// Publish keeps a logged event for replay and offers it to every matching
// subscriber, and returns its seq. An event with no seq gets the next one
// (a hub without a log); one with a seq must come above every seq
// published before, or Publish panics: it is for callers that number
// events themselves, whose misordering is a programming error (a
// publisher of the log's seqs uses PublishEncoded and handles the error).
// It never blocks on a subscriber: one whose queue is full is cut as
// lagged. ev must not be nil, and from now on it belongs to the hub:
// nobody may modify it.
func (h *Hub) Publish(ev *agentsv1.Event) uint64 {
	if ev == nil {
		panic("events: Publish of a nil event")
	}
	h.Stamp(ev)
	seq, err := h.PublishEncoded(ev, encode(ev))
	if err != nil {
		panic(err)
	}
	return seq
}

// PublishEncoded is Publish for a caller that has the event's protobuf
// encoding, body, made once its time was set; its seq and delta seq may
// be missing or stale (the ring keeps the position beside it). The hub
// keeps body: nobody may modify it. A nil body makes the ring skip the
// event (a replay then comes from the log).
//
// An event with a seq at or below the newest one published is refused
// with ErrOutOfOrder, and neither kept nor offered: renumbering it would
// give it a position the log does not have. Subscribers that were live
// then miss it; it is in the log, and the caller logs the error.
func (h *Hub) PublishEncoded(ev *agentsv1.Event, body []byte) (uint64, error) {
	if ev == nil {
		panic("events: Publish of a nil event")
	}
	h.Stamp(ev)
	h.mu.Lock()
	defer h.mu.Unlock()
	newest := h.seq.Load()
	switch {
	case ev.Seq == 0:
		ev.Seq = newest + 1
	case ev.Seq <= newest:
		return 0, fmt.Errorf("%w: %s event %d of session %q published after event %d", ErrOutOfOrder, ev.GetKind(), ev.Seq, ev.GetSessionId(), newest)
	}
	ev.DeltaSeq = 0
	h.seq.Store(ev.Seq)
	// A deleted session's events go with it.
	if ev.GetKind() == KindSessionDeleted {
		h.ring.forget(ev.GetSessionId())
		h.deltas.forget(ev.GetSessionId())
	}
	h.keep(&h.ring, ev, body)
	h.subs.publish(ev)
	return ev.Seq, nil
}

// keep puts ev in r. Called under the hub's mutex.
func (h *Hub) keep(r *ring, ev *agentsv1.Event, body []byte) {
	if body == nil {
		// Not encodable (invalid UTF-8, say): it cannot be kept, and
		// counts as pushed out at once.
		r.skip(ev)
		return
	}
	r.put(ev, body, h.delta)
}

// frameOf returns the frame of the event at p, made and cached on first
// use while a ring holds the event; nil when none does.
func (h *Hub) frameOf(p Position) *frame {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := &h.ring
	if p.Delta != 0 {
		r = &h.deltas
	}
	f := r.frameOf(p)
	if f != nil {
		h.frames.Store(p, f)
	}
	return f
}

// encode returns ev's protobuf encoding, nil when it has none.
func encode(ev *agentsv1.Event) []byte {
	b, err := proto.Marshal(ev)
	if err != nil {
		return nil
	}
	return b
}

// PublishDelta offers an event that is not logged (a text, thinking or
// tool-call delta) and keeps it in the delta ring. It returns the
// event's position.
func (h *Hub) PublishDelta(ev *agentsv1.Event) Position {
	h.Stamp(ev)
	ev.Seq, ev.DeltaSeq = 0, 0
	body := encode(ev)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.delta++
	ev.Seq, ev.DeltaSeq = h.seq.Load(), h.delta
	h.keep(&h.deltas, ev, body)
	h.subs.publish(ev)
	return PositionOf(ev)
}

// PositionAfter returns the hub's position right after it published ev, a
// logged event: its seq with the delta counter the hub had then, which
// places the deltas published before it (see placesDeltas), as the
// position a read gives must. A delta's position is its own; a logged
// event the ring no longer holds has only its seq.
func (h *Hub) PositionAfter(ev *agentsv1.Event) Position {
	p := PositionOf(ev)
	if p.Delta != 0 {
		return p
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.ring.entryAt(p); e != nil {
		return Position{Seq: p.Seq, Delta: e.deltaAt}
	}
	return p
}

// SetRelayed says this server is one of several on one log, whose deltas
// the servers relay to each other: each hub publishes every server's, in
// the order they reach it, so a delta can come after a logged event here
// and before it where it was published. A logged event's seq then places
// the logged events only: a subscription after a bare seq gets no delta
// replayed (see SubscribeAt), since the client may have had some of them
// before that event from the server it left.
func (h *Hub) SetRelayed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.relayed = true
}

// placesDeltas reports whether p places this hub's deltas: p is a
// position this hub gave (its tag is the hub's), or a bare seq on a hub
// that is alone on its log. Called under the hub's mutex.
func (h *Hub) placesDeltas(p Position) bool {
	if p.Delta == 0 {
		return !h.relayed
	}
	return p.tag() == h.delta>>counterBits
}

// Compact moves what the rings keep into fresh, contiguous memory (see
// ring.compact). It is for a server gone quiet, before it collects and
// returns its free memory to the system; the events kept and every
// replay stay the same.
func (h *Hub) Compact() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ring.compact()
	h.deltas.compact()
}

// Seq returns the seq of the newest logged event.
func (h *Hub) Seq() uint64 { return h.seq.Load() }

// Position returns the position of the newest event: every event
// published so far is at or before it, every later one after it.
func (h *Hub) Position() Position {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.position()
}

func (h *Hub) position() Position { return Position{Seq: h.seq.Load(), Delta: h.delta} }

// Subscribers returns how many subscriptions are live.
func (h *Hub) Subscribers() int {
	return int(h.subs.count.Load())
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
	h.subs.reset()
}
