// Package eventually is the tests' one way to wait for what happens by
// itself: a run that ends, a lease that moves, a process that exits. A
// test waits for what the system shows, never for a time; the patience
// only bounds how long a broken system is waited for, so it is generous
// enough for a loaded machine.
package eventually

import (
	"testing"
	"time"
)

// Patience is how long That waits.
const Patience = 20 * time.Second

// every is how often a condition is looked at: often enough that a wait
// costs a test little beyond the event itself.
const every = 5 * time.Millisecond

// That waits until cond holds, and fails the test, naming what it waited
// for, if it still does not after Patience.
func That(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Patience, what, cond)
}

// Within is That with another patience, for what takes long by design
// (a server's restart, a lease's expiry after a crash).
func Within(t testing.TB, patience time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Holds(patience, cond) {
		t.Fatalf("still not so after %v: %s", patience, what)
	}
}

// Holds waits until cond holds or patience runs out, and says which: for
// a test that reports the failure itself, with what it saw.
func Holds(patience time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
}
