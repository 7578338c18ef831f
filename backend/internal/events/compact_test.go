package events

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// After Compact the rings keep the same events, replays give the same
// events, the budget counts what is kept without the forgotten frames,
// and a frame asked for again is made again.
func TestCompactKeepsEveryEventAndReplay(t *testing.T) {
	h := New(Options{})
	var evs []*agentsv1.Event
	for i := range 40 {
		ev := event(fmt.Sprintf("s%d", i%3), fmt.Sprintf("o%d", i%2), "session.updated")
		if i%4 == 3 {
			h.PublishDelta(ev)
		} else {
			h.Publish(ev)
		}
		evs = append(evs, ev)
	}
	encodes := 0
	encode := func(*agentsv1.Event) ([]byte, error) { encodes++; return []byte("frame"), nil }
	for _, ev := range evs[:10] {
		if _, err := h.Frame(ev, EncodingSSE, encode); err != nil {
			t.Fatal(err)
		}
	}
	replay := func() []*agentsv1.Event {
		sub, err := h.SubscribeAt(t.Context(), AllScope(), &Position{})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		var out []*agentsv1.Event
		for {
			select {
			case ev := <-sub.C():
				out = append(out, ev)
				continue
			default:
			}
			return out
		}
	}
	before := replay()
	h.mu.Lock()
	bytesBefore := h.ring.bytes + h.deltas.bytes
	h.mu.Unlock()

	h.Compact()

	after := replay()
	if len(after) != len(before) || len(after) != len(evs) {
		t.Fatalf("replay after Compact: %d events, before %d, published %d", len(after), len(before), len(evs))
	}
	for i := range after {
		if !proto.Equal(after[i], before[i]) {
			t.Errorf("event %d after Compact = %v, want %v", i, after[i], before[i])
		}
	}
	h.mu.Lock()
	bytesAfter := h.ring.bytes + h.deltas.bytes
	h.mu.Unlock()
	if want := bytesBefore - 10*len("frame"); bytesAfter != want {
		t.Errorf("ring bytes after Compact = %d, want %d (%d less the forgotten frames)", bytesAfter, want, bytesBefore)
	}
	if b, err := h.Frame(evs[0], EncodingSSE, encode); err != nil || string(b) != "frame" || encodes != 11 {
		t.Errorf("Frame after Compact = %q, %v after %d encodings, want it made again (11)", b, err, encodes)
	}
	h.Frame(evs[0], EncodingSSE, encode)
	if encodes != 11 {
		t.Errorf("a frame made after Compact is not cached: %d encodings", encodes)
	}
	// Publishing goes on as before.
	h.Publish(event("s0", "o0", "run.stopped"))
	if n := len(replay()); n != len(evs)+1 {
		t.Errorf("replay after one more event: %d events, want %d", n, len(evs)+1)
	}
}
