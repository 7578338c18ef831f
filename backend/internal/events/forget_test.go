package events

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Issue 33, item 11: once a session's session.deleted event is
// published, neither ring holds an entry of it (its events' encodings,
// their frames), and what the rings held of other sessions stays. A
// replay from before the deleted session's events no longer comes from
// the ring, which lacks them (the log has them: without one, a
// snapshot); one from after them still does.
func TestDeletingASessionDropsItsEntries(t *testing.T) {
	h := New(Options{})
	big := strings.Repeat("x", 64<<10)
	encode := func(*agentsv1.Event) ([]byte, error) { return []byte("frame"), nil }
	for i := range 12 {
		session := fmt.Sprintf("s%d", i%3)
		ev := &agentsv1.Event{SessionId: session, Owner: "o", Kind: "session.updated",
			Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Reason: big}}}
		h.Publish(ev)
		if _, err := h.Frame(ev, EncodingSSE, encode); err != nil {
			t.Fatal(err)
		}
		h.PublishDelta(&agentsv1.Event{SessionId: session, Owner: "o", Kind: "text.delta"})
	}
	before := h.Position()
	h.Publish(event("s2", "o", "session.updated"))
	h.Publish(event("s1", "o", "session.deleted"))

	held := func(r *ring) (sessions []string, bytes int) {
		for i := range r.n {
			sessions = append(sessions, r.entries[(r.head+i)%len(r.entries)].session)
		}
		return sessions, r.bytes
	}
	h.mu.Lock()
	logged, loggedBytes := held(&h.ring)
	deltas, _ := held(&h.deltas)
	h.mu.Unlock()
	// The deleted session's own session.deleted is its one entry left.
	if n := strings.Count(strings.Join(logged, " "), "s1"); n != 1 || logged[len(logged)-1] != "s1" {
		t.Errorf("the ring holds %v: entries of the deleted session s1 beside its session.deleted", logged)
	}
	if slices.Contains(deltas, "s1") {
		t.Errorf("the delta ring holds %v: entries of the deleted session s1", deltas)
	}
	if c := strings.Count(strings.Join(logged, " "), "s0"); c != 4 {
		t.Errorf("the ring holds %d entries of s0, want its 4", c)
	}
	if loggedBytes > 9*(64<<10)+9*(entryOverhead+64) {
		t.Errorf("the ring counts %d bytes, more than what it holds of s0 and s2", loggedBytes)
	}
	frames := 0
	h.frames.Range(func(any, any) bool { frames++; return true })
	if frames != 8 {
		t.Errorf("%d frames cached, want the 8 of s0's and s2's events", frames)
	}

	sub, err := h.SubscribeAt(t.Context(), AllScope(), &Position{})
	if err != nil {
		t.Fatal(err)
	}
	if sub.Mode() == ModeReplay {
		t.Errorf("a replay from before the deleted session's events came from the ring, which lacks them")
	}
	sub.Close()
	sub, err = h.SubscribeAt(t.Context(), AllScope(), &before)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Mode() != ModeReplay {
		t.Errorf("a replay from after the deleted session's events: mode %v, want a replay", sub.Mode())
	}
}
