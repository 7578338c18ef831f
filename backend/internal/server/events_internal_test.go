package server

import (
	"testing"
	"time"
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

func TestASubscriberThatTakesFewEventsWaitsAShorterWindow(t *testing.T) {
	hub := coalesceWindow(1000)
	start := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	// observed is a subscriber's rate after batches of n events, one
	// batch every interval.
	observed := func(batches, n int, every time.Duration) *eventRate {
		var r eventRate
		for i := range batches {
			r.observe(n, start.Add(time.Duration(i)*every))
		}
		return &r
	}
	for _, tc := range []struct {
		name string
		rate *eventRate
		want time.Duration
	}{
		{"nothing observed yet", observed(0, 0, 0), hub},
		{"one batch: no rate yet", observed(1, 5, 0), hub},
		{"ten events in each window", observed(20, 10, hub), hub},
		{"one event in each window", observed(20, 1, hub), hub},
		{"one event in two windows", observed(20, 1, 2*hub), hub / 2},
		{"one run.stopped a second", observed(20, 1, time.Second), coalesce},
	} {
		if got := tc.rate.window(hub); got != tc.want {
			t.Errorf("%s: window = %v, want %v", tc.name, got, tc.want)
		}
	}
}
