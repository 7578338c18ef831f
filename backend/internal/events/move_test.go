package events

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// twoServers is two hubs on one log, as two servers on one database: each
// publishes every logged event, and numbers the deltas it publishes (its
// runs' and those relayed from the other) itself.
type twoServers struct {
	log  *memLog
	a, b *Hub
}

func newTwoServers(opts Options) *twoServers {
	log := &memLog{}
	opts.Log = log
	ts := &twoServers{log: log, a: New(opts), b: New(opts)}
	ts.a.SetRelayed()
	ts.b.SetRelayed()
	return ts
}

// logged commits the next logged event of session and publishes it on
// both hubs.
func (ts *twoServers) logged(session, kind string) uint64 {
	ev := &agentsv1.Event{Seq: uint64(len(ts.log.evs)) + 1, SessionId: session, Owner: "o", Kind: kind}
	ts.log.evs = append(ts.log.evs, ev)
	ts.a.Publish(proto.Clone(ev).(*agentsv1.Event))
	ts.b.Publish(proto.Clone(ev).(*agentsv1.Event))
	return ev.Seq
}

// items drains what sub has queued: a logged event as its seq, a delta
// as its text.
func items(sub *Subscription) string {
	var out []string
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				return strings.Join(out, " ")
			}
			if d := ev.GetTextDelta(); d != nil {
				out = append(out, d.GetText())
			} else {
				out = append(out, fmt.Sprint(ev.GetSeq()))
			}
		default:
			return strings.Join(out, " ")
		}
	}
}

// A client streams a run on server A, then reconnects to server B with
// the position of the last delta it had (its SSE id, through the wire).
// B numbered its own deltas, further than A and behind it on this run:
// read against B's counter, A's position would replay chunks the client
// has. B replays every logged event after the position's seq, once, and
// holds back the session's deltas until its next logged event: the text
// in progress may miss a piece on such a move, never repeat one.
func TestAMoveToAnotherServerReplaysLoggedEventsAndNoDeltaTwice(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"from the ring", Options{}},
		{"from the log", Options{RingSize: 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTwoServers(tt.opts)
			for i := range 10 { // B's counter runs ahead of A's
				ts.b.PublishDelta(delta("other", "o", fmt.Sprint("x", i)))
			}
			for range 30 {
				ts.logged("s", "session.updated")
			}
			var last Position
			for i := 1; i <= 7; i++ { // the run is on A
				last = ts.a.PublishDelta(delta("s", "o", fmt.Sprint("c", i)))
			}
			for i := 1; i <= 3; i++ { // B has them relayed, behind
				ts.b.PublishDelta(delta("s", "o", fmt.Sprint("c", i)))
			}
			for range 11 { // the client misses these (another session's too)
				ts.logged("t", "session.updated")
				ts.logged("s", "tool.progressed")
			}
			ts.a.PublishDelta(delta("s", "o", "late"))

			p, err := ParsePosition(last.String())
			if err != nil {
				t.Fatal(err)
			}
			sub := subscribeAt(t, ts.b, OwnerScope("o"), p)
			if sub.Mode() != ModeReplay {
				t.Fatalf("mode %v, want replay", sub.Mode())
			}
			var want []string
			for seq := 31; seq <= 52; seq++ {
				want = append(want, fmt.Sprint(seq))
			}
			if got := items(sub); got != strings.Join(want, " ") {
				t.Fatalf("replayed %q, want the logged events after 30: %q", got, strings.Join(want, " "))
			}

			for i := 4; i <= 7; i++ { // relayed late: the client has them
				ts.b.PublishDelta(delta("s", "o", fmt.Sprint("c", i)))
			}
			ts.b.PublishDelta(delta("s", "o", "late"))
			seq := ts.logged("s", "session.updated") // the turn is stored
			ts.b.PublishDelta(delta("s", "o", "next"))
			if got, want := items(sub), fmt.Sprint(seq, " next"); got != want {
				t.Errorf("live: %q, want %q", got, want)
			}
		})
	}
}

// After a restart the hub numbers deltas from the start again: a delta
// position of the process before names none of this one's. The logged
// events after it come from the log, and no delta of the new process is
// taken for one the client had.
func TestADeltaPositionOfTheProcessBeforeARestart(t *testing.T) {
	log := &memLog{}
	publish := func(h *Hub, kind string) uint64 {
		ev := &agentsv1.Event{Seq: uint64(len(log.evs)) + 1, SessionId: "s", Owner: "o", Kind: kind}
		log.evs = append(log.evs, ev)
		return h.Publish(ev)
	}
	before := New(Options{Log: log})
	for range 5 {
		publish(before, "session.updated")
	}
	var last Position
	for i := 1; i <= 7; i++ {
		last = before.PublishDelta(delta("s", "o", fmt.Sprint("c", i)))
	}

	after := New(Options{Log: log})
	after.Start(5)
	for i := 1; i <= 9; i++ { // the recovered run streams again
		after.PublishDelta(delta("s", "o", fmt.Sprint("r", i)))
	}
	p, err := ParsePosition(last.String())
	if err != nil {
		t.Fatal(err)
	}
	sub := subscribeAt(t, after, SessionScope("s"), p)
	if sub.Mode() != ModeReplay {
		t.Fatalf("mode %v, want replay", sub.Mode())
	}
	if got := items(sub); got != "" {
		t.Fatalf("replayed %q, want nothing: no logged event since, no delta placed", got)
	}
	after.PublishDelta(delta("s", "o", "r10"))
	seq := publish(after, "session.updated")
	after.PublishDelta(delta("s", "o", "next"))
	if got, want := items(sub), fmt.Sprint(seq, " next"); got != want {
		t.Errorf("live: %q, want %q", got, want)
	}
}

// A server's own positions still place its deltas: a client that comes
// back to the server it streamed from misses none.
func TestAPositionOfThisHubReplaysItsDeltas(t *testing.T) {
	ts := newTwoServers(Options{})
	ts.logged("s", "run.started")
	p := ts.b.PublishDelta(delta("s", "o", "c1"))
	ts.b.PublishDelta(delta("s", "o", "c2"))
	ts.b.PublishDelta(delta("s", "o", "c3"))
	q, err := ParsePosition(p.String())
	if err != nil {
		t.Fatal(err)
	}
	if got := items(subscribeAt(t, ts.b, SessionScope("s"), q)); got != "c2 c3" {
		t.Errorf("after c1 on its own server: %q, want %q", got, "c2 c3")
	}
	if got := items(subscribeAt(t, ts.a, SessionScope("s"), q)); got != "" {
		t.Errorf("after c1 on the other server: %q, want nothing", got)
	}
}

// A logged event's seq is the same on every server, and so is what it
// places among the logged events; not among the deltas, which each server
// orders as they reach it (a relayed delta can come after a logged event
// here and before it where it was published). On a server that relays,
// a bare seq replays logged events only; on a server alone it replays
// the deltas after it too.
func TestABareSeqPlacesDeltasOnlyOnAServerAlone(t *testing.T) {
	ts := newTwoServers(Options{})
	seq := ts.logged("s", "run.started")
	ts.b.PublishDelta(delta("s", "o", "c1"))
	if got := items(subscribeAt(t, ts.b, SessionScope("s"), Position{Seq: seq})); got != "" {
		t.Errorf("after %d on a relaying server: %q, want nothing", seq, got)
	}

	alone := New(Options{})
	seq = alone.Publish(event("s", "o", "run.started"))
	alone.PublishDelta(delta("s", "o", "c1"))
	if got := items(subscribeAt(t, alone, SessionScope("s"), Position{Seq: seq})); got != "c1" {
		t.Errorf("after %d on a server alone: %q, want %q", seq, got, "c1")
	}
}

// The sessions whose deltas a subscription lets through are bounded; past
// the bound it holds them all back again, which can only leave holes.
func TestHeldBackDeltasStayBounded(t *testing.T) {
	ts := newTwoServers(Options{QueueSize: 2 * maxOpenSessions})
	ts.logged("s", "run.started")
	p := ts.a.PublishDelta(delta("s", "o", "c1"))
	sub := subscribeAt(t, ts.b, OwnerScope("o"), p)
	for i := range maxOpenSessions + 1 {
		ts.logged(fmt.Sprint("s", i), "session.updated")
	}
	items(sub)
	if n := len(sub.open); n > maxOpenSessions {
		t.Errorf("%d sessions let through, want at most %d", n, maxOpenSessions)
	}
	ts.b.PublishDelta(delta(fmt.Sprint("s", maxOpenSessions), "o", "d"))
	if got := items(sub); got != "d" {
		t.Errorf("the session logged last: %q, want %q", got, "d")
	}
}

func TestPositionStrings(t *testing.T) {
	h := New(Options{})
	tag := h.delta >> counterBits
	for _, p := range []Position{
		{Seq: 41},
		{Seq: 41, Delta: 7},                           // an older server's
		{Seq: 41, Delta: tag<<counterBits | 7},        // this hub's
		{Seq: 41, Delta: tag << counterBits},          // this hub's, before a delta
		{Seq: 0, Delta: 1<<(counterBits+tagBits) - 1}, // the largest
		{Seq: 1<<64 - 1, Delta: 1<<counterBits - 1},   // no tag
	} {
		s := p.String()
		q, err := ParsePosition(s)
		if err != nil || q != p {
			t.Errorf("ParsePosition(%q) = %v, %v; want %v", s, q, err, p)
		}
	}
	if s := (Position{Seq: 41, Delta: 36<<counterBits | 7}).String(); s != "41.7.10" {
		t.Errorf("a tagged position reads %q, want 41.7.10", s)
	}
	if p, err := ParsePosition("41.7.10"); err != nil || p != (Position{Seq: 41, Delta: 36<<counterBits | 7}) {
		t.Errorf(`ParsePosition("41.7.10") = %v, %v`, p, err)
	}
	for _, in := range []string{"41.7.", "41..a", "41.7.0", "41.7.-a", "41.7.+a", "41.7.a.b", "41.7.zzzzzzzzzzzzz",
		fmt.Sprintf("41.%d.a", uint64(1)<<counterBits), "41.7.a b"} {
		if p, err := ParsePosition(in); err == nil {
			t.Errorf("ParsePosition(%q) = %v, want an error", in, p)
		}
	}
}

// Hubs of one process never share a tag; the tag of a process is drawn
// at random, so two servers' almost never do.
func TestHubsHaveTheirOwnTags(t *testing.T) {
	a, b := New(Options{}), New(Options{})
	if a.delta>>counterBits == b.delta>>counterBits {
		t.Errorf("two hubs share the tag %d", a.delta>>counterBits)
	}
}

// A delta_seq is a JSON number on the routes: every hub's stays below
// 2^53, where JavaScript's numbers stop being exact, whatever tag it drew.
func TestDeltaSeqsStayExactInJSON(t *testing.T) {
	for range 1000 {
		if tag := newTag(); tag == 0 || (tag+1)<<counterBits >= 1<<53 {
			t.Fatalf("tag %d: its delta_seqs reach 2^53", tag)
		}
	}
}

// The position right after a logged event, as this hub published it,
// places the deltas published before it: a server that answers it to a
// client (with the state as of that event) lets the client subscribe
// after it and get this hub's next deltas, not a wait for the session's
// next logged event, which a bare seq means on a hub that relays.
func TestThePositionAfterALoggedEventPlacesTheDeltasBeforeIt(t *testing.T) {
	ts := newTwoServers(Options{})
	ts.b.PublishDelta(delta("s1", "o", "relayed ahead of its run.started "))
	seq := ts.logged("s1", "run.started")
	sub, _ := ts.b.Subscribe(SessionScope("s1"), nil)
	ts.logged("s1", "session.updated")
	published := <-sub.C()
	sub.Close()

	pos := ts.b.PositionAfter(published)
	if pos.Seq != seq+1 || pos.Delta != ts.b.Position().Delta {
		t.Fatalf("the position after event %d: %v; want seq %d with the hub's delta counter (%v)", published.GetSeq(), pos, seq+1, ts.b.Position())
	}
	after, err := ts.b.SubscribeAt(t.Context(), SessionScope("s1"), &pos)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	ts.b.PublishDelta(delta("s1", "o", "next"))
	if got := items(after); got != "next" {
		t.Fatalf("after the position: %q, want the next delta", got)
	}

	// An event the ring no longer holds has only its seq.
	small := New(Options{RingSize: 1})
	small.SetRelayed()
	first := event("s1", "o", "run.started")
	small.Publish(first)
	small.Publish(event("s1", "o", "session.updated"))
	if pos := small.PositionAfter(first); pos != (Position{Seq: first.GetSeq()}) {
		t.Fatalf("the position after an event pushed out: %v, want its bare seq", pos)
	}
}
