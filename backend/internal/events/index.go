package events

import (
	"sync/atomic"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// index holds the live subscribers, bucketed by scope so that fan-out visits
// only the subscribers an event can match instead of all of them. Buckets are
// slices (not maps) because Publish iterates them on every event and slice
// iteration is the cheapest there is; removal is a linear scan, paid only on
// Close. Each member carries the kinds its subscriber is offered, so one
// that wants none of an event's kind costs a bit test in the bucket's own
// memory: no lock, no queueing, no wake-up. Not safe for concurrent use; the
// hub's mutex guards it.
type index struct {
	all      []member
	owners   map[string][]member
	sessions map[string][]member
	// count is read without the hub's mutex (Hub.Subscribers, on every
	// batch a subscriber sends); it is written under it.
	count atomic.Int64
}

// reset empties the index: no subscriber in any bucket.
func (x *index) reset() {
	x.all = nil
	x.owners = make(map[string][]member)
	x.sessions = make(map[string][]member)
	x.count.Store(0)
}

// member is a subscriber in a bucket, with the kinds it is offered
// (Subscription.visit).
type member struct {
	visit kindSet
	s     *Subscription
}

func (x *index) add(s *Subscription) {
	m := member{visit: s.visit, s: s}
	switch s.scope.kind {
	case scopeAll:
		x.all = append(x.all, m)
	case scopeOwner:
		x.owners[s.scope.id] = append(x.owners[s.scope.id], m)
	case scopeSession:
		// An empty session id matches nothing, but the subscriber is still
		// kept so Shutdown and Close treat it like any other.
		x.sessions[s.scope.id] = append(x.sessions[s.scope.id], m)
	default:
		// The zero scope matches nothing; keep it with the empty-session
		// bucket, which fan-out never visits.
		x.sessions[""] = append(x.sessions[""], m)
	}
	x.count.Add(1)
}

func (x *index) remove(s *Subscription) {
	switch s.scope.kind {
	case scopeAll:
		x.all = without(x.all, s)
	case scopeOwner:
		setBucket(x.owners, s.scope.id, without(x.owners[s.scope.id], s))
	case scopeSession:
		setBucket(x.sessions, s.scope.id, without(x.sessions[s.scope.id], s))
	default:
		setBucket(x.sessions, "", without(x.sessions[""], s))
	}
	x.count.Add(-1)
}

// publish offers ev to every subscriber whose scope matches it, dropping the
// ones it had to cut. It must agree exactly with Scope.Matches.
func (x *index) publish(ev *agentsv1.Event) {
	bit := bitOf(ev)
	if len(x.all) > 0 {
		x.all = x.offer(x.all, ev, bit)
	}
	if id := ev.GetSessionId(); id != "" {
		if b, ok := x.sessions[id]; ok {
			x.offerKeyed(x.sessions, id, b, ev, bit)
		}
	}
	if owner := ev.GetOwner(); owner != "" {
		if b, ok := x.owners[owner]; ok {
			x.offerKeyed(x.owners, owner, b, ev, bit)
		}
	} else if isServerWide(ev) {
		// Rare (agents.changed): every owner subscriber gets it.
		for owner, b := range x.owners {
			x.offerKeyed(x.owners, owner, b, ev, bit)
		}
	}
}

// offerKeyed offers ev to the bucket m[key] and writes the bucket back only
// when a cut shrank it, keeping map writes off the common path.
func (x *index) offerKeyed(m map[string][]member, key string, b []member, ev *agentsv1.Event, bit kindSet) {
	if kept := x.offer(b, ev, bit); len(kept) != len(b) {
		setBucket(m, key, kept)
	}
}

// offer delivers ev, whose kind's bit is bit, to each subscriber of
// bucket offered that kind, and returns the bucket without the subscribers
// that were cut, compacted in place.
func (x *index) offer(bucket []member, ev *agentsv1.Event, bit kindSet) []member {
	kept := bucket[:0]
	for _, m := range bucket {
		if m.visit&bit == 0 || m.s.offer(ev, bit) {
			kept = append(kept, m)
		} else {
			x.count.Add(-1)
		}
	}
	clear(bucket[len(kept):]) // let cut subscribers be collected
	return kept
}

// each calls f for every subscriber.
func (x *index) each(f func(*Subscription)) {
	for _, m := range x.all {
		f(m.s)
	}
	for _, b := range x.owners {
		for _, m := range b {
			f(m.s)
		}
	}
	for _, b := range x.sessions {
		for _, m := range b {
			f(m.s)
		}
	}
}

// setBucket stores b under key, deleting the key once the bucket is empty so
// that sessions that come and go do not leave the map growing.
func setBucket(m map[string][]member, key string, b []member) {
	if len(b) == 0 {
		delete(m, key)
		return
	}
	m[key] = b
}

// without removes s from b, not preserving order.
func without(b []member, s *Subscription) []member {
	for i, t := range b {
		if t.s == s {
			last := len(b) - 1
			b[i] = b[last]
			b[last] = member{}
			return b[:last]
		}
	}
	return b
}
