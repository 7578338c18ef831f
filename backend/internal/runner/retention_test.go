package runner

import (
	"testing"
	"time"
)

// A trim is due every minute while events are published, and only once an
// hour on a server where nothing happens.
func TestTrimIsDueWhenEventsWerePublishedOrAnHourPassed(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	last := lastTrim{at: t0, seq: 40}
	for _, tc := range []struct {
		name   string
		last   lastTrim
		now    time.Time
		newest uint64
		known  bool
		want   bool
	}{
		{"the first trim", lastTrim{}, t0, 40, true, true},
		{"events since", last, t0.Add(time.Minute), 41, true, true},
		{"quiet for a minute", last, t0.Add(time.Minute), 40, true, false},
		{"quiet for 59 minutes", last, t0.Add(59 * time.Minute), 40, true, false},
		{"quiet for an hour", last, t0.Add(time.Hour), 40, true, true},
		{"no hub to tell", last, t0.Add(time.Minute), 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.last.due(tc.now, tc.newest, tc.known); got != tc.want {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}
