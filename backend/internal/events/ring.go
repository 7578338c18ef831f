package events

import agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"

// ring holds the newest events. Seqs are consecutive, so the event with seq s
// lives at slot (s-1) mod size and no head index is needed. Not safe for
// concurrent use; the hub's mutex guards it.
type ring struct {
	slots []*agentsv1.Event
}

func newRing(size int) ring { return ring{slots: make([]*agentsv1.Event, size)} }

// put stores ev, which carries the hub's newest seq, overwriting the oldest.
func (r *ring) put(ev *agentsv1.Event) {
	r.slots[(ev.Seq-1)%uint64(len(r.slots))] = ev
}

// covers reports whether every event with a seq in (after, last] is still in
// the ring, last being the newest seq. after == last covers the empty range;
// after > last (a seq from another server process) covers nothing.
func (r *ring) covers(after, last uint64) bool {
	return after <= last && last-after <= uint64(len(r.slots))
}

// each calls f, oldest first, for every event with a seq in (after, last]
// that scope matches. The caller has checked covers(after, last).
func (r *ring) each(scope Scope, after, last uint64, f func(*agentsv1.Event)) {
	for seq := after + 1; seq <= last; seq++ {
		if ev := r.slots[(seq-1)%uint64(len(r.slots))]; scope.Matches(ev) {
			f(ev)
		}
	}
}
