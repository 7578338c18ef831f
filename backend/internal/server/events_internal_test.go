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
