package cli

import (
	"testing"
	"time"
)

// TestAnIdleServerGivesItsPagesBackSoonAndThenEveryRecollect: a server
// that served something releases at the first check that finds it idle
// (idleCheck later, not a minute), not while a request is open or marks
// keep changing; a probe or scrape does not keep it busy, but what it
// mapped is given back at the next check; while it stays idle it
// releases only every recollect, so an idle server does not collect every
// idleCheck.
func TestAnIdleServerGivesItsPagesBackSoonAndThenEveryRecollect(t *testing.T) {
	a := func(n uint64) activity { return activity{requests: n} }
	probed := func(n, probes uint64) activity { return activity{requests: n, probes: probes} }
	w := idleWatch{last: a(0)}
	steps := []struct {
		mark activity
		open bool
		want bool
	}{
		{a(0), false, false}, // idle since the start's release: nothing to give back yet
		{a(2), false, false}, // served a request
		{a(2), false, true},  // idle for a check: give back what the request mapped
		{a(2), false, false}, // still idle: not again at once
		{a(3), true, false},  // a request open (a stream)
		{a(3), true, false},  // still open, no new mark
		{a(4), false, false}, // it ended
		{a(4), false, true},
		{probed(4, 1), false, true},  // scraped: idle still, its pages go at the next check
		{probed(4, 1), false, false}, // nothing since
		{probed(4, 2), false, true},  // probed again
	}
	for i, s := range steps {
		if got := w.check(s.mark, s.open); got != s.want {
			t.Fatalf("check %d (%v, open %v) = %v, want %v", i, s.mark.requests, s.open, got, s.want)
		}
	}
	checks := 0
	for !w.check(probed(4, 2), false) {
		checks++
	}
	if got, want := time.Duration(checks+1)*idleCheck, recollect; got != want {
		t.Errorf("idle, it collected again after %v, want every %v", got, want)
	}
	if idleCheck > 15*time.Second {
		t.Errorf("idleCheck = %v: a server should give back a request's pages within seconds of going idle", idleCheck)
	}
}
