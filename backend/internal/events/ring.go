package events

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// ring holds the newest events in order, bounded both by count and by the
// bytes it keeps, so a few huge events cannot pin much memory. It keeps
// one encoding of each event, its protobuf bytes, and not the event
// itself: an event's objects weigh several times its encoding, and a
// replay, the only reader, is rare. What the budget counts is what the
// ring keeps: the encoding, the session and owner it matches scopes by,
// the wire frames cached for the event while the ring holds it (see
// Hub.Frame), and a fixed overhead per entry.
//
// floor is the position of the newest event pushed out (or where the ring
// began): the ring holds every event after it. Not safe for concurrent
// use; the hub's mutex guards it.
type ring struct {
	entries  []ringEntry
	head, n  int
	bytes    int
	maxBytes int
	floor    Position
	// dropped is told of each entry pushed out.
	dropped func(Position)
	// lost, when set, keeps what was pushed out by scope (see losses).
	lost *losses
}

type ringEntry struct {
	pos            Position
	session, owner string
	// body is the event's protobuf encoding without its seq and delta
	// seq, which pos holds.
	body []byte
	// frame is the event's cached wire encodings, made when the first
	// subscriber asks for one (Hub.Frame); once it exists its size is
	// the entry's.
	frame *frame
	size  int
	// deltaAt is the hub's delta counter when the event was kept: the
	// hub's position right after it is {pos.Seq, deltaAt}.
	deltaAt uint64
}

// entryOverhead is what the budget counts per entry besides its bytes:
// the entry, and the frame and the cache's map entry once made.
const entryOverhead = 256

func newRing(count, maxBytes int) ring {
	return ring{entries: make([]ringEntry, count), maxBytes: maxBytes}
}

// put appends an event, which comes after every event in the ring,
// pushing out the oldest ones until the ring fits its bounds again. body
// is ev's encoding without seq and delta seq.
func (r *ring) put(ev *agentsv1.Event, body []byte, deltaAt uint64) {
	e := ringEntry{pos: PositionOf(ev), session: ev.GetSessionId(), owner: ev.GetOwner(), body: body, deltaAt: deltaAt}
	e.size = len(body) + len(e.session) + len(e.owner) + entryOverhead
	for r.n > 0 && (r.n == len(r.entries) || r.bytes+e.size > r.maxBytes) {
		r.dropOldest()
	}
	if e.size > r.maxBytes {
		// Too big to keep at all: it counts as pushed out at once.
		r.lose(e.pos, e.session, e.owner)
		return
	}
	r.entries[(r.head+r.n)%len(r.entries)] = e
	r.n++
	r.bytes += e.size
}

// grow counts n more bytes for f's entry (an encoding just cached) and
// pushes out the oldest entries until the ring fits its budget again,
// keeping the newest entry.
func (r *ring) grow(f *frame, n int) {
	if f.gone {
		return
	}
	f.size += n
	r.bytes += n
	for r.n > 1 && r.bytes > r.maxBytes {
		r.dropOldest()
	}
}

// frameOf returns the frame of the entry at p, made on first use; nil
// when the ring does not hold p.
func (r *ring) frameOf(p Position) *frame {
	e := r.entryAt(p)
	if e == nil {
		return nil
	}
	if e.frame == nil {
		e.frame = &frame{ring: r, size: e.size}
	}
	return e.frame
}

// entryAt returns the entry at p, nil when the ring does not hold p.
func (r *ring) entryAt(p Position) *ringEntry {
	// Entries are in position order: search the ring as one sorted list.
	i, j := 0, r.n
	for i < j {
		m := int(uint(i+j) >> 1)
		if r.entries[(r.head+m)%len(r.entries)].pos.Before(p) {
			i = m + 1
		} else {
			j = m
		}
	}
	if i == r.n {
		return nil
	}
	e := &r.entries[(r.head+i)%len(r.entries)]
	if e.pos != p {
		return nil
	}
	return e
}

func (r *ring) dropOldest() {
	r.drop(&r.entries[r.head])
	r.head = (r.head + 1) % len(r.entries)
	r.n--
}

// drop lets e go: its bytes leave the budget, its frame the cache.
func (r *ring) drop(e *ringEntry) {
	r.lose(e.pos, e.session, e.owner)
	size := e.size
	if e.frame != nil {
		size = e.frame.size
		e.frame.gone = true
		if r.dropped != nil {
			r.dropped(e.pos)
		}
	}
	r.bytes -= size
	*e = ringEntry{}
}

// forget drops every entry of session, a session deleted: no client can
// use its events any more, and the memory they hold goes with it rather
// than when newer events push them out. The ring then no longer holds
// every event after the positions before them, as if they had been
// pushed out; the entries of other sessions stay.
func (r *ring) forget(session string) {
	kept := 0
	for i := range r.n {
		e := &r.entries[(r.head+i)%len(r.entries)]
		if e.session == session {
			r.drop(e)
			continue
		}
		if kept != i {
			r.entries[(r.head+kept)%len(r.entries)] = *e
			*e = ringEntry{}
		}
		kept++
	}
	r.n = kept
}

// lose records that the event at p, of session and owner, is not held:
// the ring no longer covers the positions before it. A session's entries
// forgotten may be newer than the oldest ones pushed out after them: the
// floor never goes back.
func (r *ring) lose(p Position, session, owner string) {
	r.floor = later(r.floor, p)
	if r.lost != nil {
		r.lost.add(session, owner, p)
	}
}

// covers reports whether the ring holds every event after p.
func (r *ring) covers(p Position) bool { return !p.Before(r.floor) }

// holds reports whether the ring holds every event after p that scope
// matches. A ring that keeps its losses by scope can say yes for a
// position it does not cover, when everything pushed out after it belongs
// to other scopes.
func (r *ring) holds(scope Scope, p Position) bool {
	if r.lost == nil {
		return r.covers(p)
	}
	return r.lost.holds(scope, p)
}

// reset empties the ring; it now holds every event after p (none), and
// nothing counts as lost.
func (r *ring) reset(p Position) {
	for r.n > 0 {
		r.dropOldest()
	}
	r.floor = p
	if r.lost != nil {
		r.lost.reset()
	}
}

// each calls f, oldest first, for every event after p that scope
// matches, decoded anew (the kinds are read from the decoded event: a
// replay is rare, and an entry stays small).
func (r *ring) each(scope Scope, p Position, f func(*agentsv1.Event)) error {
	for i := range r.n {
		e := &r.entries[(r.head+i)%len(r.entries)]
		if !p.Before(e.pos) || !scope.matches(e.session, e.owner) {
			continue
		}
		ev := &agentsv1.Event{}
		if err := proto.Unmarshal(e.body, ev); err != nil {
			return fmt.Errorf("events: decode the event at %v: %w", e.pos, err)
		}
		if !scope.wants(bitOf(ev)) {
			continue
		}
		ev.Seq, ev.DeltaSeq = e.pos.Seq, e.pos.Delta
		f(ev)
	}
	return nil
}

// skip records an event that is not kept: the ring no longer covers the
// positions before it, as if it had been pushed out at once.
func (r *ring) skip(ev *agentsv1.Event) {
	for r.n > 0 {
		r.dropOldest()
	}
	r.lose(PositionOf(ev), ev.GetSessionId(), ev.GetOwner())
}

// compact moves what the entries keep into two allocations, one for the
// encodings and one for the session ids and owners, and forgets the
// frames cached for them (the next subscriber to ask makes them again).
// Entries kept through a burst are spread over memory the burst's
// garbage shares with them, and each keeps its span of it in use; once
// compacted the burst's spans hold nothing live, so a collection frees
// them whole and the runtime can return them to the system.
func (r *ring) compact() {
	if r.n == 0 {
		return
	}
	bodies, names := 0, 0
	seen := map[string]bool{}
	for i := range r.n {
		e := &r.entries[(r.head+i)%len(r.entries)]
		bodies += len(e.body)
		for _, s := range [2]string{e.session, e.owner} {
			if !seen[s] {
				seen[s] = true
				names += len(s)
			}
		}
	}
	var sb strings.Builder
	sb.Grow(names)
	offsets := make(map[string][2]int, len(seen))
	for i := range r.n {
		e := &r.entries[(r.head+i)%len(r.entries)]
		for _, s := range [2]string{e.session, e.owner} {
			if _, ok := offsets[s]; !ok {
				offsets[s] = [2]int{sb.Len(), sb.Len() + len(s)}
				sb.WriteString(s)
			}
		}
	}
	all := sb.String()
	name := func(s string) string { o := offsets[s]; return all[o[0]:o[1]] }
	buf := make([]byte, 0, bodies)
	for i := range r.n {
		e := &r.entries[(r.head+i)%len(r.entries)]
		start := len(buf)
		buf = append(buf, e.body...)
		e.body = buf[start:len(buf):len(buf)]
		e.session, e.owner = name(e.session), name(e.owner)
		if f := e.frame; f != nil {
			r.bytes -= f.size - e.size
			f.gone = true
			e.frame = nil
			if r.dropped != nil {
				r.dropped(e.pos)
			}
		}
	}
}
