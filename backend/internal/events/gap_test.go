package events

import (
	"context"
	"fmt"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// delta is a text delta of session and owner saying text.
func delta(session, owner, text string) *agentsv1.Event {
	return &agentsv1.Event{SessionId: session, Owner: owner, Kind: "text.delta", Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{Text: text}}}
}

// texts drains what sub has queued and returns the text of its deltas, in
// order, the deltas of sessions other than a counted, not spelt out.
func texts(sub *Subscription) string {
	var b strings.Builder
	others := 0
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				return b.String()
			}
			d := ev.GetTextDelta()
			switch {
			case d == nil:
			case ev.GetSessionId() != "a":
				others++
			default:
				if others > 0 {
					fmt.Fprintf(&b, "(%d of others)", others)
					others = 0
				}
				b.WriteString(d.GetText())
			}
		default:
			if others > 0 {
				fmt.Fprintf(&b, "(%d of others)", others)
			}
			return b.String()
		}
	}
}

func subscribeAt(t *testing.T, h *Hub, scope Scope, after Position) *Subscription {
	t.Helper()
	sub, err := h.SubscribeAt(context.Background(), scope, &after)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// The delta ring is shared by every session: when other sessions' deltas
// push out a delta of session a that a client has not seen, a replay
// would skip it ("A…C"). Every scope that matches the lost delta gets a
// snapshot instead; a scope that lost nothing after its position still
// replays.
func TestADeltaPushedOutByOtherSessionsGivesASnapshot(t *testing.T) {
	h := New(Options{})
	h.Publish(event("a", "o", "run.started"))
	seenA := h.PublishDelta(delta("a", "o", "A"))
	seenB := h.PublishDelta(delta("a", "o", "B"))
	for range DefaultDeltaRingSize {
		h.PublishDelta(delta("b", "p", "x"))
	}
	h.PublishDelta(delta("a", "o", "C"))

	for _, scope := range []Scope{SessionScope("a"), OwnerScope("o"), AllScope(), SessionScope("b"), OwnerScope("p")} {
		sub := subscribeAt(t, h, scope, seenA)
		if sub.Mode() != ModeSnapshot {
			t.Errorf("%v after A: mode %v with deltas %q, want snapshot (B was pushed out)", scope, sub.Mode(), texts(sub))
		}
	}
	// Session a lost nothing after B; owner q never had a delta.
	sub := subscribeAt(t, h, SessionScope("a"), seenB)
	if sub.Mode() != ModeReplay {
		t.Fatalf("session a after B: mode %v, want replay", sub.Mode())
	}
	if got := texts(sub); got != "C" {
		t.Errorf("session a after B replays %q, want C", got)
	}
	if sub := subscribeAt(t, h, OwnerScope("q"), seenA); sub.Mode() != ModeReplay {
		t.Errorf("an owner that lost nothing: mode %v, want replay", sub.Mode())
	}
}

// The same holds for a position older than the ring of logged events,
// replayed from the log: the deltas after it must all be in memory.
func TestADeltaLostBeforeALogReplayGivesASnapshot(t *testing.T) {
	log := &memLog{}
	h := New(Options{Log: log, RingSize: 2, DeltaRingSize: 4})
	publish := func(ev *agentsv1.Event) {
		ev.Seq = h.Seq() + 1
		log.evs = append(log.evs, ev)
		h.Publish(ev)
	}
	publish(event("a", "o", "run.started"))
	seenA := h.PublishDelta(delta("a", "o", "A"))
	h.PublishDelta(delta("a", "o", "B"))
	for range 4 {
		h.PublishDelta(delta("b", "o", "x"))
	}
	for range 4 { // push seq 1 out of the ring: the replay reads the log
		publish(event("c", "o", "session.updated"))
	}
	h.PublishDelta(delta("a", "o", "C"))

	sub := subscribeAt(t, h, SessionScope("a"), seenA)
	if sub.Mode() != ModeSnapshot {
		t.Errorf("after A, from the log: mode %v with deltas %q, want snapshot", sub.Mode(), texts(sub))
	}
}

// A subscription reads the log's bounds and then its events; the pruner
// may delete events in between. Whichever read the prune lands before,
// the answer is a whole replay or a snapshot, never a replay with a gap.
func TestAReplayRacingAPruneGivesASnapshot(t *testing.T) {
	for before := 1; before <= 4; before++ {
		log := &racyLog{pruneBefore: before, keepFrom: 6}
		for seq := uint64(1); seq <= 10; seq++ {
			log.evs = append(log.evs, &agentsv1.Event{Seq: seq, SessionId: "s", Owner: "o", Kind: "x"})
		}
		h := New(Options{Log: log, RingSize: 2})
		h.Start(10)

		sub := subscribeAt(t, h, AllScope(), Position{Seq: 3})
		got := queued(sub)
		if sub.Mode() == ModeReplay && (len(got) == 0 || got[0] != 4) {
			t.Errorf("prune before read %d: replay of %v after 3, want 4… or a snapshot", before, got)
		}
		if log.calls >= before && sub.Mode() != ModeSnapshot {
			t.Errorf("prune before read %d of %d: mode %v, want snapshot", before, log.calls, sub.Mode())
		}
	}
}

// racyLog is a memLog whose pruner removes every event before keepFrom
// just before its pruneBefore-th read.
type racyLog struct {
	memLog
	calls, pruneBefore int
	keepFrom           uint64
}

func (l *racyLog) read() {
	l.calls++
	if l.calls != l.pruneBefore {
		return
	}
	for len(l.evs) > 0 && l.evs[0].Seq < l.keepFrom {
		l.evs = l.evs[1:]
	}
}

func (l *racyLog) After(ctx context.Context, scope Scope, seq uint64, limit int) ([]*agentsv1.Event, error) {
	l.read()
	return l.memLog.After(ctx, scope, seq, limit)
}

func (l *racyLog) Bounds(ctx context.Context) (uint64, uint64, error) {
	l.read()
	return l.memLog.Bounds(ctx)
}

// A position of this hub past its newest delta is none it published: it
// gets a snapshot, not a replay that would skip the deltas up to it.
func TestADeltaPositionBeyondTheHubGivesASnapshot(t *testing.T) {
	h := New(Options{})
	h.Publish(event("a", "o", "run.started"))
	h.PublishDelta(delta("a", "o", "A"))
	if sub := subscribeAt(t, h, SessionScope("a"), deltaAt(h, 1, 5)); sub.Mode() != ModeSnapshot {
		t.Errorf("after 1.5 with the hub at 1.1: mode %v, want snapshot", sub.Mode())
	}
}

// What the delta ring pushed out is remembered per session up to a bound
// (as many sessions as the ring has entries); past it the ring forgets
// which sessions lost deltas, and every position before the forgetting
// gets a snapshot, honestly, while later ones still replay.
func TestForgottenDeltaLossesStayHonest(t *testing.T) {
	h := New(Options{DeltaRingSize: 2})
	h.Publish(event("a", "o", "run.started"))
	before := h.PublishDelta(delta("a", "o", "A"))
	for i := range 10 {
		id := string(rune('b' + i))
		h.PublishDelta(delta(id, id, "x"))
	}
	after := h.Position()
	h.PublishDelta(delta("q", "q", "x"))
	h.PublishDelta(delta("r", "r", "x"))
	h.PublishDelta(delta("s", "s", "x")) // pushes q's out

	if sub := subscribeAt(t, h, SessionScope("z"), before); sub.Mode() != ModeSnapshot {
		t.Errorf("a position before the forgetting: mode %v, want snapshot", sub.Mode())
	}
	if sub := subscribeAt(t, h, SessionScope("z"), after); sub.Mode() != ModeReplay {
		t.Errorf("a session that lost nothing after its position: mode %v, want replay", sub.Mode())
	}
	if sub := subscribeAt(t, h, SessionScope("q"), after); sub.Mode() != ModeSnapshot {
		t.Errorf("session q lost a delta after its position: mode %v, want snapshot", sub.Mode())
	}
}

// Deltas pushed out while the log is read count as well: the check is
// made again under the lock that queues the replay.
func TestADeltaLostWhileTheLogIsReadGivesASnapshot(t *testing.T) {
	log := &hookLog{}
	h := New(Options{Log: log, RingSize: 2, DeltaRingSize: 4})
	publish := func(ev *agentsv1.Event) {
		ev.Seq = h.Seq() + 1
		log.evs = append(log.evs, ev)
		h.Publish(ev)
	}
	publish(event("a", "o", "run.started"))
	seenA := h.PublishDelta(delta("a", "o", "A"))
	h.PublishDelta(delta("a", "o", "B"))
	for range 4 { // push seq 1 out of the ring: the replay reads the log
		publish(event("c", "o", "session.updated"))
	}
	log.after = func() {
		for range 4 {
			h.PublishDelta(delta("b", "o", "x"))
		}
	}

	sub := subscribeAt(t, h, SessionScope("a"), seenA)
	if sub.Mode() != ModeSnapshot {
		t.Errorf("after A, B pushed out during the read: mode %v with deltas %q, want snapshot", sub.Mode(), texts(sub))
	}
}

// hookLog is a memLog that calls after, when set, once After has read.
type hookLog struct {
	memLog
	after func()
}

func (l *hookLog) After(ctx context.Context, scope Scope, seq uint64, limit int) ([]*agentsv1.Event, error) {
	evs, err := l.memLog.After(ctx, scope, seq, limit)
	if l.after != nil {
		l.after()
	}
	return evs, err
}
