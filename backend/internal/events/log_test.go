package events

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// memLog is a Log over a slice, for tests.
type memLog struct{ evs []*agentsv1.Event }

func (l *memLog) After(_ context.Context, scope Scope, seq uint64, limit int) ([]*agentsv1.Event, error) {
	var out []*agentsv1.Event
	for _, ev := range l.evs {
		if ev.Seq > seq && scope.Matches(ev) && len(out) < limit {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (l *memLog) Bounds(context.Context) (uint64, uint64, error) {
	if len(l.evs) == 0 {
		return 0, 0, nil
	}
	return l.evs[0].Seq, l.evs[len(l.evs)-1].Seq, nil
}

func positions(sub *Subscription) []Position {
	var out []Position
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				return out
			}
			out = append(out, PositionOf(ev))
		default:
			return out
		}
	}
}

// A hub that starts where the log is replays older positions from the
// log, then the ring, then live events: positions mean the same across a
// restart.
func TestReplayFromTheLogAfterAStart(t *testing.T) {
	log := &memLog{}
	for seq := uint64(3); seq <= 10; seq++ { // 1 and 2 were pruned
		log.evs = append(log.evs, &agentsv1.Event{Seq: seq, SessionId: "s", Owner: "o", Kind: "x"})
	}
	h := New(Options{Log: log, RingSize: 4})
	h.Start(10)
	for seq := uint64(11); seq <= 12; seq++ {
		ev := &agentsv1.Event{Seq: seq, SessionId: "s", Owner: "o", Kind: "x"}
		log.evs = append(log.evs, ev)
		h.Publish(ev)
	}

	sub, err := h.SubscribeAt(context.Background(), OwnerScope("o"), &Position{Seq: 5})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Mode() != ModeReplay {
		t.Fatalf("mode %v, want replay", sub.Mode())
	}
	h.Publish(&agentsv1.Event{Seq: 13, SessionId: "s", Owner: "o", Kind: "x"})
	var got []uint64
	for _, p := range positions(sub) {
		got = append(got, p.Seq)
	}
	wantSeqs(t, "log, then ring, then live", got, seqRange(6, 13))

	for _, tt := range []struct {
		after uint64
		want  Mode
	}{{1, ModeSnapshot}, {2, ModeReplay}, {13, ModeReplay}, {14, ModeSnapshot}} {
		sub, err := h.SubscribeAt(context.Background(), AllScope(), &Position{Seq: tt.after})
		if err != nil {
			t.Fatal(err)
		}
		if sub.Mode() != tt.want {
			t.Errorf("after %d: mode %v, want %v", tt.after, sub.Mode(), tt.want)
		}
	}
}

// Deltas sit between logged events; a position with a delta resumes
// after exactly that delta.
func TestDeltasResumeAtTheirPosition(t *testing.T) {
	h := New(Options{})
	h.Publish(event("s", "o", "run.started")) // 1
	d1 := h.PublishDelta(event("s", "o", "text.delta"))
	d2 := h.PublishDelta(event("s", "o", "text.delta"))
	h.Publish(event("s", "o", "session.updated")) // 2
	d3 := h.PublishDelta(event("s", "o", "text.delta"))
	if d1 != deltaAt(h, 1, 1) || d2 != deltaAt(h, 1, 2) || d3 != deltaAt(h, 2, 3) {
		t.Fatalf("delta positions %v %v %v", d1, d2, d3)
	}
	sub, err := h.SubscribeAt(context.Background(), SessionScope("s"), &d1)
	if err != nil {
		t.Fatal(err)
	}
	got := positions(sub)
	want := []Position{deltaAt(h, 1, 2), {2, 0}, deltaAt(h, 2, 3)}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if h.Position() != deltaAt(h, 2, 3) {
		t.Errorf("Position() = %v", h.Position())
	}
	// Deltas have their own ring: many of them never push a logged event
	// out of the replay window of a scope they do not belong to.
	u := h.Publish(event("u", "q", "session.updated"))
	for range DefaultRingSize * 2 {
		h.PublishDelta(event("t", "p", "text.delta"))
	}
	sub, _ = h.Subscribe(SessionScope("u"), ptr(0))
	if sub.Mode() != ModeReplay {
		t.Fatalf("after many deltas of another session, replay from 0 is %v", sub.Mode())
	}
	wantSeqs(t, "the logged event of u", queued(sub), []uint64{u})
}

// The ring is bounded by bytes too: a few huge events do not stay pinned.
func TestRingIsBoundedByBytes(t *testing.T) {
	h := New(Options{RingBytes: 10_000})
	big := strings.Repeat("x", 4000)
	for range 10 {
		h.Publish(&agentsv1.Event{SessionId: "s", Owner: "o", Kind: "x", Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{Text: big}}})
	}
	if h.ring.bytes > 10_000 || h.ring.n > 2 {
		t.Fatalf("ring holds %d events, %d bytes; want at most 2 within 10000", h.ring.n, h.ring.bytes)
	}
	if _, mode := h.Subscribe(AllScope(), ptr(5)); mode != ModeSnapshot {
		t.Errorf("a pushed-out position replays (%v)", mode)
	}
	if _, mode := h.Subscribe(AllScope(), ptr(8)); mode != ModeReplay {
		t.Errorf("a held position does not replay (%v)", mode)
	}
}

// Frame encodes an event once for every subscriber while the hub holds it.
func TestFrameEncodesOnce(t *testing.T) {
	h := New(Options{RingSize: 2})
	ev := event("s", "o", "x")
	h.Publish(ev)
	calls := 0
	encode := func(*agentsv1.Event) ([]byte, error) { calls++; return []byte("f"), nil }
	for range 5 {
		if b, err := h.Frame(ev, EncodingSSE, encode); err != nil || string(b) != "f" {
			t.Fatalf("Frame = %q, %v", b, err)
		}
	}
	if calls != 1 {
		t.Fatalf("encoded %d times, want once", calls)
	}
	h.Publish(event("s", "o", "x"))
	h.Publish(event("s", "o", "x")) // pushes ev out
	h.Frame(ev, EncodingSSE, encode)
	if calls != 2 {
		t.Fatalf("an event the hub no longer holds was not encoded again (%d)", calls)
	}
	if _, ok := h.frames.Load(PositionOf(ev)); ok {
		t.Fatal("the frame of a pushed-out event is still cached")
	}
}

// The ring keeps an event's encoding, not the event: a replay decodes an
// equal copy, which shares the original's frame cache by position.
func TestRingReplaysEqualCopies(t *testing.T) {
	h := New(Options{})
	ev := &agentsv1.Event{SessionId: "s", Owner: "o", Kind: "text.delta", Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{Text: "héllo"}}}
	h.Publish(ev)
	d := &agentsv1.Event{SessionId: "s", Owner: "o", Kind: "text.delta", Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{Text: "more"}}}
	h.PublishDelta(d)
	sub, mode := h.Subscribe(SessionScope("s"), ptr(0))
	if mode != ModeReplay {
		t.Fatalf("mode %v, want replay", mode)
	}
	var got []*agentsv1.Event
	for range 2 {
		got = append(got, <-sub.C())
	}
	for i, want := range []*agentsv1.Event{ev, d} {
		if got[i] == want {
			t.Errorf("replay %d is the published pointer, want a decoded copy", i)
		}
		if !proto.Equal(got[i], want) {
			t.Errorf("replay %d = %v, want %v", i, got[i], want)
		}
	}
	calls := 0
	encode := func(*agentsv1.Event) ([]byte, error) { calls++; return []byte("frame"), nil }
	h.Frame(ev, EncodingSSE, encode)
	h.Frame(got[0], EncodingSSE, encode)
	if calls != 1 {
		t.Errorf("a replayed copy encoded again (%d encodings)", calls)
	}
}

// The frames a ring caches count against its byte budget.
func TestFramesCountAgainstRingBytes(t *testing.T) {
	h := New(Options{RingBytes: 4 * entryOverhead})
	var evs []*agentsv1.Event
	for range 3 {
		ev := event("s", "o", "x")
		h.Publish(ev)
		evs = append(evs, ev)
	}
	if h.ring.n != 3 {
		t.Fatalf("ring holds %d events, want 3", h.ring.n)
	}
	big := make([]byte, 2*entryOverhead)
	if _, err := h.Frame(evs[2], EncodingSSE, func(*agentsv1.Event) ([]byte, error) { return big, nil }); err != nil {
		t.Fatal(err)
	}
	if h.ring.bytes > h.ring.maxBytes || h.ring.n != 1 {
		t.Fatalf("ring holds %d events in %d bytes, want the newest alone within %d", h.ring.n, h.ring.bytes, h.ring.maxBytes)
	}
	if _, ok := h.frames.Load(PositionOf(evs[0])); ok {
		t.Error("the frame of a pushed-out event is still cached")
	}
}

// Issue 33, item 3: a hub behind its log (another server committed
// events this one has not followed yet) replays, from the log, a
// position it has not reached itself, then goes on live with no event
// twice: a client reconnecting to a server that has not caught up
// misses nothing and gets no snapshot. A position beyond the log too is
// none anybody published: it gets a snapshot.
func TestAPositionAheadOfTheHubReplaysFromTheLog(t *testing.T) {
	for _, relayed := range []bool{true, false} {
		t.Run(map[bool]string{true: "several servers", false: "one server"}[relayed], func(t *testing.T) {
			log := &memLog{}
			h := New(Options{Log: log})
			if relayed {
				h.SetRelayed()
			}
			h.Start(0)
			at := func(seq uint64) *agentsv1.Event {
				return &agentsv1.Event{Seq: seq, SessionId: "s", Owner: "o", Kind: "x"}
			}
			for seq := uint64(1); seq <= 6; seq++ {
				log.evs = append(log.evs, at(seq))
			}
			for seq := uint64(1); seq <= 3; seq++ {
				h.Publish(at(seq))
			}

			after4 := subscribeAt(t, h, OwnerScope("o"), Position{Seq: 4})
			after6 := subscribeAt(t, h, AllScope(), Position{Seq: 6})
			if after4.Mode() != ModeReplay || after6.Mode() != ModeReplay {
				t.Fatalf("after 4: %v, after 6: %v, with the hub at 3 and the log at 6; want replays", after4.Mode(), after6.Mode())
			}
			// The hub catches up, and goes on.
			log.evs = append(log.evs, at(7))
			for seq := uint64(4); seq <= 7; seq++ {
				h.Publish(at(seq))
			}
			wantSeqs(t, "after 4", queued(after4), seqRange(5, 7))
			wantSeqs(t, "after 6", queued(after6), []uint64{7})

			if sub := subscribeAt(t, h, AllScope(), Position{Seq: 9}); sub.Mode() != ModeSnapshot {
				t.Errorf("after 9, with the log at 7: mode %v, want snapshot", sub.Mode())
			}
		})
	}
}
