package events

import agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"

// ring holds the newest events in order, bounded both by count and by
// their encoded size, so a few huge events cannot pin much memory. floor is
// the position of the newest event pushed out (or where the ring began):
// the ring holds every event after it. Not safe for concurrent use; the
// hub's mutex guards it.
type ring struct {
	entries  []ringEntry
	head, n  int
	bytes    int
	maxBytes int
	floor    Position
	// dropped is told of each event pushed out.
	dropped func(*agentsv1.Event)
}

type ringEntry struct {
	ev   *agentsv1.Event
	size int
}

func newRing(count, maxBytes int) ring {
	return ring{entries: make([]ringEntry, count), maxBytes: maxBytes}
}

// put appends ev, which comes after every event in the ring, pushing out
// the oldest ones until the ring fits its bounds again.
func (r *ring) put(ev *agentsv1.Event, size int) {
	for r.n > 0 && (r.n == len(r.entries) || r.bytes+size > r.maxBytes) {
		r.dropOldest()
	}
	if size > r.maxBytes {
		// Too big to keep at all: it counts as pushed out at once.
		r.floor = PositionOf(ev)
		if r.dropped != nil {
			r.dropped(ev)
		}
		return
	}
	r.entries[(r.head+r.n)%len(r.entries)] = ringEntry{ev: ev, size: size}
	r.n++
	r.bytes += size
}

func (r *ring) dropOldest() {
	e := &r.entries[r.head]
	r.floor = PositionOf(e.ev)
	if r.dropped != nil {
		r.dropped(e.ev)
	}
	r.bytes -= e.size
	*e = ringEntry{}
	r.head = (r.head + 1) % len(r.entries)
	r.n--
}

// covers reports whether the ring holds every event after p.
func (r *ring) covers(p Position) bool { return !p.Before(r.floor) }

// reset empties the ring; it now holds every event after p (none).
func (r *ring) reset(p Position) {
	for r.n > 0 {
		r.dropOldest()
	}
	r.floor = p
}

// each calls f, oldest first, for every event after p that scope matches.
func (r *ring) each(scope Scope, p Position, f func(*agentsv1.Event)) {
	for i := range r.n {
		ev := r.entries[(r.head+i)%len(r.entries)].ev
		if p.Before(PositionOf(ev)) && scope.Matches(ev) {
			f(ev)
		}
	}
}
