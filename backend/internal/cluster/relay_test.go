package cluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
)

func delta(session, text string) *agentsv1.Event {
	return &agentsv1.Event{Kind: "text.delta", SessionId: session, Owner: "o",
		Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{Text: text}}}
}

// relayServer is a hub with a relay, and a subscriber of everything.
type relayServer struct {
	hub   *events.Hub
	relay *Relay
	sub   *events.Subscription
	// bubble says the test runs in a synctest bubble, as the tests on
	// the bus in memory do.
	bubble bool
}

func newRelayServer(t *testing.T, bus Bus, id string) *relayServer {
	t.Helper()
	hub := events.New(events.Options{QueueSize: 1 << 14, DeltaRingSize: 1 << 14, DeltaRingBytes: 16 << 20})
	hub.Start(0)
	sub, _ := hub.Subscribe(events.AllScope(), nil)
	r, err := NewRelay(hub, bus, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.Close()
		hub.Shutdown()
	})
	_, inMemory := bus.(*MemoryBus)
	return &relayServer{hub: hub, relay: r, sub: sub, bubble: inMemory}
}

// publish is what the runner does with a delta: publish it here, then
// relay it.
func (s *relayServer) publish(ev *agentsv1.Event) {
	s.hub.PublishDelta(ev)
	s.relay.Send(ev)
}

// texts waits for n deltas on the subscriber and returns "session:text"
// of each, then checks that nothing more comes. It runs in a synctest
// bubble: its deadline costs no time, and once every goroutine waits,
// nothing more is on the way.
func (s *relayServer) texts(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	deadline := time.After(10 * time.Second)
	for len(got) < n {
		select {
		case ev := <-s.sub.C():
			got = append(got, ev.SessionId+":"+ev.GetTextDelta().GetText())
		case <-deadline:
			t.Fatalf("got %d deltas after 10s, want %d", len(got), n)
		}
	}
	if s.bubble {
		synctest.Wait() // every goroutine of the bubble waits: nothing more is on the way
		select {
		case ev := <-s.sub.C():
			t.Fatalf("got one delta too many: %s:%.40s", ev.SessionId, ev.GetTextDelta().GetText())
		default:
		}
		return got
	}
	// Over a real database nothing but a pause says that all has come.
	select {
	case ev := <-s.sub.C():
		t.Fatalf("got one delta too many: %s:%.40s", ev.SessionId, ev.GetTextDelta().GetText())
	case <-time.After(50 * time.Millisecond):
	}
	return got
}

func TestRelayCarriesDeltasToTheOtherServersInOrder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bus := NewMemoryBus()
		defer bus.Close()
		parts := newRecorder()
		defer bus.Listen(ChannelDeltas, parts.add)()
		a, b, c := newRelayServer(t, bus, "a"), newRelayServer(t, bus, "b"), newRelayServer(t, bus, "c")

		const n = 300
		var want []string
		for i := range n {
			ev := delta(fmt.Sprintf("s%d", i%3), fmt.Sprintf("piece %d ", i))
			want = append(want, ev.SessionId+":"+ev.GetTextDelta().GetText())
			a.publish(ev)
		}
		for name, s := range map[string]*relayServer{"a": a, "b": b, "c": c} {
			if got := s.texts(t, n); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("server %s got deltas\n%v\nwant\n%v", name, got, want)
			}
		}
		// Deltas queued together travel together.
		if p := len(parts.all()); p >= n {
			t.Errorf("%d deltas took %d notifications", n, p)
		}
		for _, p := range parts.all() {
			if len(p) >= MaxPayload {
				t.Fatalf("a part of %d bytes", len(p))
			}
		}
	})
}

func TestRelayCutsALargeDeltaIntoParts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bus := NewMemoryBus()
		defer bus.Close()
		parts := newRecorder()
		defer bus.Listen(ChannelDeltas, parts.add)()
		a, b := newRelayServer(t, bus, "a"), newRelayServer(t, bus, "b")
		big := strings.Repeat("0123456789abcdef", 2000) // 32 KB
		a.publish(delta("s", "before"))
		a.publish(delta("s", big))
		a.publish(delta("s", "after"))
		got := b.texts(t, 3)
		if got[0] != "s:before" || got[1] != "s:"+big || got[2] != "s:after" {
			t.Fatalf("got %d deltas of %d, %d and %d bytes", len(got), len(got[0]), len(got[1]), len(got[2]))
		}
		if p := len(parts.all()); p < 5 {
			t.Errorf("32 KB of deltas took %d notifications", p)
		}
		for _, p := range parts.all() {
			if len(p) >= MaxPayload {
				t.Fatalf("a part of %d bytes", len(p))
			}
		}
	})
}

// Every kind of delta crosses, a tool call's arguments in one big piece
// too, and arrives as it was sent; what is not a delta does not travel.
func TestRelayCarriesEveryKindOfDelta(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bus := NewMemoryBus()
		defer bus.Close()
		a, b := newRelayServer(t, bus, "a"), newRelayServer(t, bus, "b")
		call := func(index int32, id, name, args string) *agentsv1.Event {
			return &agentsv1.Event{Kind: "tool_call.delta", SessionId: "s", Owner: "o", Body: &agentsv1.Event_ToolCallDelta{
				ToolCallDelta: &agentsv1.ToolCallDelta{TurnIndex: 3, CallIndex: index, CallId: id, Name: name, Arguments: args},
			}}
		}
		sent := []*agentsv1.Event{
			{Kind: "thinking.delta", SessionId: "s", Owner: "o", Body: &agentsv1.Event_ThinkingDelta{ThinkingDelta: &agentsv1.ThinkingDelta{Text: "hmm", TurnIndex: 3}}},
			delta("s", "an answer"),
			call(0, "call_1", "bash_x", ""),
			call(0, "", "", `{"a":`),
			call(1, "call_2", "bash_y", `{"big":"`+strings.Repeat("0123456789abcdef", 2000)+`"}`),
			call(0, "", "", `1}`),
		}
		a.publish(sent[0])
		a.relay.Send(&agentsv1.Event{Kind: "run.started", SessionId: "s", Owner: "o", Body: &agentsv1.Event_RunStarted{RunStarted: &agentsv1.RunStarted{}}})
		for _, ev := range sent[1:] {
			a.publish(ev)
		}
		deadline := time.After(10 * time.Second)
		for i, want := range sent {
			select {
			case got := <-b.sub.C():
				if got.GetKind() != want.GetKind() || !proto.Equal(got.GetToolCallDelta(), want.GetToolCallDelta()) ||
					got.GetTextDelta().GetText() != want.GetTextDelta().GetText() || got.GetThinkingDelta().GetText() != want.GetThinkingDelta().GetText() {
					t.Fatalf("delta %d arrived as %.80v, want %.80v", i, got, want)
				}
			case <-deadline:
				t.Fatalf("got %d deltas after 10s, want %d", i, len(sent))
			}
		}
		synctest.Wait()
		select {
		case ev := <-b.sub.C():
			t.Fatalf("got one event too many: %.80v", ev)
		default:
		}
	})
}

// A message whose parts did not all come is dropped, and the messages
// after it still arrive.
func TestRelayDropsIncompleteMessages(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bus := NewMemoryBus()
		defer bus.Close()
		b := newRelayServer(t, bus, "b")
		part := func(msg uint64, n, of int, data string) {
			t.Helper()
			if err := bus.Notify(context.Background(), ChannelDeltas, fmt.Sprintf("x %d %d/%d %s", msg, n, of, data)); err != nil {
				t.Fatal(err)
			}
		}
		encoded := func(text string) string {
			var sb strings.Builder
			if _, err := protodelim.MarshalTo(&sb, delta("s", text)); err != nil {
				t.Fatal(err)
			}
			return base64.StdEncoding.EncodeToString([]byte(sb.String()))
		}
		// pending counts the messages waiting for parts, on the bus's
		// goroutine, which owns them, after what was sent before.
		pending := func(now time.Time) int {
			t.Helper()
			got := make(chan int, 1)
			defer bus.Listen("probe", func(string) {
				b.relay.expire(now)
				got <- len(b.relay.partial)
			})()
			if err := bus.Notify(context.Background(), "probe", ""); err != nil {
				t.Fatal(err)
			}
			return <-got
		}
		lost := encoded("lost")
		part(1, 1, 3, lost[:4])
		part(1, 3, 3, lost[8:]) // part 2 never came
		part(2, 2, 2, "AAAA")   // its first part never came
		part(3, 1, 1, "!!!!")   // not base64
		if err := bus.Notify(context.Background(), ChannelDeltas, "nonsense"); err != nil {
			t.Fatal(err)
		}
		ok := encoded("ok")
		part(4, 1, 2, ok[:4])
		part(4, 2, 2, ok[4:])
		if got := b.texts(t, 1); got[0] != "s:ok" {
			t.Fatalf("got %v", got)
		}
		if n := pending(time.Now()); n != 1 {
			t.Errorf("%d incomplete messages kept, want the one that may still get its part 2", n)
		}
		part(5, 1, 2, ok[:4])
		b.texts(t, 0)
		if n := pending(time.Now().Add(partialTTL + time.Second)); n != 0 {
			t.Errorf("%d incomplete messages kept after they expired", n)
		}
	})
}

func TestValidServerID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"host-1234-ab12", true},
		{"", false},
		{"a b", false},
		{"a\tb", false},
		{strings.Repeat("x", maxServerID), true},
		{strings.Repeat("x", maxServerID+1), false},
	} {
		if err := ValidServerID(tc.id); (err == nil) != tc.ok {
			t.Errorf("ValidServerID(%q) = %v", tc.id, err)
		}
	}
}
