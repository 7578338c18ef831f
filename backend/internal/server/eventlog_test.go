package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/tools/fakellm"
)

// subscription is a Connect Subscribe stream read on a goroutine of its
// own, so a test can wait for an event with a deadline.
type subscription struct {
	mode   string
	events chan *agentsv1.Event
}

func (e *env) subscribe(req *agentsv1.SubscribeRequest) *subscription {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := e.events.Subscribe(ctx, connect.NewRequest(req))
	if err != nil {
		cancel()
		e.t.Fatalf("subscribe: %v", err)
	}
	s := &subscription{events: make(chan *agentsv1.Event, 4096)}
	if !stream.Receive() { // the heartbeat or snapshot that opens every stream
		cancel()
		e.t.Fatalf("subscribe: the stream ended at once: %v", stream.Err())
	}
	s.mode = stream.ResponseHeader().Get("Agents-Replay")
	go func() {
		defer close(s.events)
		for stream.Receive() {
			if ev := stream.Msg().GetEvent(); ev != nil {
				s.events <- ev
			}
		}
	}()
	e.t.Cleanup(func() {
		cancel()
		_ = stream.Close()
	})
	return s
}

func (s *subscription) next(t *testing.T) *agentsv1.Event {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the subscription ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20s")
		return nil
	}
}

// logged is an event of the log as a test compares it: position, kind,
// session.
func logged(ev *agentsv1.Event) string {
	return fmt.Sprintf("%d %s %s", ev.GetSeq(), ev.GetKind(), ev.GetSessionId())
}

// Issue 8, item 1 and the durable event log: positions are the log's.
// A client that was at position N before a restart gets, after it,
// exactly the logged events after N, then the new ones live, whose
// positions go on from the old.
func TestAReconnectAfterARestartReplaysExactlyTheEventsAfterItsPosition(t *testing.T) {
	t.Parallel()
	e := start(t, chatty())
	feed := e.openSSE("/v1/events")
	id := e.create("helper", "talk").GetMeta().GetId()
	var before []string
	var seqs []uint64
	for {
		f, ok := feed.next(t)
		if !ok {
			t.Fatal("stream ended")
		}
		if f.id == "" || strings.Contains(f.id, ".") {
			continue // heartbeats and deltas, which are not logged
		}
		ev := f.eventOf(t)
		before = append(before, logged(ev))
		seqs = append(seqs, ev.GetSeq())
		if ev.GetKind() == "run.stopped" && ev.GetSessionId() == id {
			break
		}
	}
	e.wait(id)
	if len(before) < 4 {
		t.Fatalf("logged events of a run = %v, want at least session.created, run.started, an update and run.stopped", before)
	}
	cut := 1 // the client saw the first two events, then lost its connection
	after, last := seqs[cut], seqs[len(seqs)-1]

	e.restart()

	sub := e.subscribe(&agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER, After: &after})
	if sub.mode != "replay" {
		t.Fatalf("Agents-Replay = %q after a restart, want replay", sub.mode)
	}
	for i, want := range before[cut+1:] {
		if got := logged(sub.next(t)); got != want {
			t.Fatalf("replayed event %d = %q, want %q (the events after %d: %q)", i, got, want, after, before[cut+1:])
		}
	}
	// Then live, on from the old positions, without a gap.
	second := e.create("helper", "more").GetMeta().GetId()
	prev := last
	for {
		ev := sub.next(t)
		if ev.GetDeltaSeq() != 0 {
			if ev.GetSeq() != prev {
				t.Fatalf("delta at %v after logged event %d", events.PositionOf(ev), prev)
			}
			continue
		}
		if ev.GetSeq() != prev+1 {
			t.Fatalf("%s after %d, want %d: positions go on from the old ones, one by one", logged(ev), prev, prev+1)
		}
		prev = ev.GetSeq()
		if ev.GetKind() == "run.stopped" && ev.GetSessionId() == second {
			break
		}
	}

	// SSE agrees: Last-Event-ID from before the restart is a replay.
	s := e.openSSE("/v1/events", "Last-Event-ID", fmt.Sprint(after))
	if mode := s.header.Get("Agents-Replay"); mode != "replay" {
		t.Errorf("SSE Agents-Replay = %q, want replay", mode)
	}
	if got := logged(until(t, s, func(*agentsv1.Event) bool { return true })); got != before[cut+1] {
		t.Errorf("first SSE event after %d = %q, want %q", after, got, before[cut+1])
	}
}

// The durable event log: a client that opens a session in the middle of
// an answer gets the text streamed so far and the position it reflects,
// and a subscription after that position brings the rest of the answer:
// partial text plus the deltas is the whole answer, no piece missing or
// twice. The model is held half-way, so the view is taken at a known
// point.
func TestJoiningMidAnswerContinuesWithNoGapAndNoDuplicate(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: slowText, ChunkSize: 3}}, withModelFaults())
	hold := e.modelFaults.HoldAfter(5)
	id := e.create("helper", "talk").GetMeta().GetId()
	select {
	case <-hold.Held():
	case <-time.After(20 * time.Second):
		t.Fatal("the model never streamed")
	}
	s := e.get(id)
	p := s.GetInProgress()
	if p == nil || p.GetTurnIndex() != 1 || p.GetText() != slowText[:15] {
		t.Fatalf("in progress = %v, want turn 1 with the 15 characters streamed so far", p)
	}
	if s.GetDeltaSeq() == 0 {
		t.Errorf("position = %d.%d, want the position of the last delta", s.GetSeq(), s.GetDeltaSeq())
	}
	text := joinAt(t, e, id, s, hold.Release)
	if text != slowText {
		t.Fatalf("partial text plus deltas = %q, want %q", text, slowText)
	}
}

// The same, joining while the answer streams: whatever the moment, the
// view and the deltas after its position add up to the answer.
func TestJoiningWhileTheAnswerStreamsContinuesWithNoGap(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: slowText, ChunkSize: 1, ChunkDelay: "1ms"}})
	feed := e.openSSE("/v1/events")
	for range 3 {
		id := e.create("helper", "talk").GetMeta().GetId()
		until(t, feed, kind(id, "text.delta"))
		text := joinAt(t, e, id, e.get(id), func() {})
		if text != slowText {
			t.Fatalf("partial text plus deltas = %q, want %q", text, slowText)
		}
	}
}

// joinAt subscribes to a session after the position of its view s, calls
// then, and returns the view's partial text followed by every text delta
// of the turn until the turn is stored.
func joinAt(t *testing.T, e *env, id string, s *agentsv1.Session, then func()) string {
	t.Helper()
	if s.GetInProgress() == nil {
		// The answer was stored before the view was taken.
		e.wait(id)
		return lastTurn(s).GetLlm().GetText()
	}
	seq, delta := s.GetSeq(), s.GetDeltaSeq()
	from := events.Position{Seq: seq, Delta: delta}
	sub := e.subscribe(&agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION, SessionId: id, After: &seq, AfterDelta: delta})
	if sub.mode != "replay" {
		t.Fatalf("Agents-Replay = %q, want replay", sub.mode)
	}
	then()
	var text strings.Builder
	text.WriteString(s.GetInProgress().GetText())
	turn := s.GetInProgress().GetTurnIndex()
	for {
		ev := sub.next(t)
		if !from.Before(events.PositionOf(ev)) {
			t.Fatalf("event at %v, at or before the view's position %v", events.PositionOf(ev), from)
		}
		if d := ev.GetTextDelta(); d != nil && d.GetTurnIndex() == turn {
			text.WriteString(d.GetText())
		}
		if h := ev.GetSessionUpdated().GetHeadTurn(); h.GetLlm() != nil && h.GetIndex() == turn {
			if h.GetLlm().GetText() != text.String() {
				t.Errorf("stored answer %q, streamed %q", h.GetLlm().GetText(), text.String())
			}
			break
		}
	}
	e.wait(id)
	return text.String()
}
