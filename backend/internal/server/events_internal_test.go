package server

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/events/sse"
)

func TestCoalesceWindowGrowsWithTheSubscribers(t *testing.T) {
	for _, tc := range []struct {
		subscribers int
		want        time.Duration
	}{
		{0, 2 * time.Millisecond},
		{1, 2 * time.Millisecond},
		{199, 2 * time.Millisecond},
		{200, 4 * time.Millisecond},
		{1000, 20 * time.Millisecond},
		{100000, 20 * time.Millisecond},
	} {
		if got := coalesceWindow(tc.subscribers); got != tc.want {
			t.Errorf("coalesceWindow(%d) = %v, want %v", tc.subscribers, got, tc.want)
		}
	}
}

func TestSSEBatchesShareTheBytesOfTheSameEvents(t *testing.T) {
	hub := events.New(events.Options{})
	var evs []*agentsv1.Event
	for i := range 4 {
		ev := &agentsv1.Event{Kind: "run.stopped", SessionId: fmt.Sprint("s", i%2), Owner: "o"}
		hub.Publish(ev)
		evs = append(evs, ev)
	}
	frames := func(evs ...*agentsv1.Event) []byte {
		var out []byte
		for _, ev := range evs {
			f, err := sse.EventFrame(ev)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, f...)
		}
		return out
	}
	var c sseBatches
	for _, tc := range []struct {
		name string
		evs  []*agentsv1.Event
	}{
		{"one scope's", []*agentsv1.Event{evs[0], evs[2]}},
		{"another scope's", []*agentsv1.Event{evs[1], evs[3]}},
		{"the same first and last, another middle", []*agentsv1.Event{evs[0], evs[1], evs[2]}},
		{"the same first and last, the other middle", []*agentsv1.Event{evs[0], evs[3], evs[2]}},
		{"one event", []*agentsv1.Event{evs[3]}},
	} {
		first, err := c.bytes(hub, slices.Clone(tc.evs))
		if err != nil {
			t.Fatal(err)
		}
		if want := frames(tc.evs...); !bytes.Equal(first, want) {
			t.Errorf("%s: got %q, want %q", tc.name, first, want)
		}
		again, err := c.bytes(hub, slices.Clone(tc.evs))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, first) {
			t.Errorf("%s, asked again: got %q, want %q", tc.name, again, first)
		}
		if len(tc.evs) > 1 && &again[0] != &first[0] {
			t.Errorf("%s, asked again: encoded again, not shared", tc.name)
		}
	}
}

func TestSSEBatchesKeepAtMostTheirBudget(t *testing.T) {
	hub := events.New(events.Options{})
	big := strings.Repeat("x", 100<<10)
	var c sseBatches
	for i := range 40 {
		a := &agentsv1.Event{Kind: "run.stopped", Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Text: big}}}
		b := &agentsv1.Event{Kind: "run.stopped", SessionId: fmt.Sprint(i)}
		hub.Publish(a)
		hub.Publish(b)
		if _, err := c.bytes(hub, []*agentsv1.Event{a, b}); err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, b := range c.recent {
			if b != nil {
				kept += len(b.bytes)
			}
		}
		if kept != c.size || kept > maxSharedBytes {
			t.Fatalf("after %d batches: %d bytes kept, counted %d, budget %d", i+1, kept, c.size, maxSharedBytes)
		}
	}
}
