package runner

import (
	"testing"
	"time"
)

// Issue 20, item 3: a deleted session leaves the watch index on both
// sides, and the watches of other sessions stay.
func TestWatchIndexDropsADeletedSessionBothWays(t *testing.T) {
	var w watches
	exp := time.Now().Add(time.Hour)
	w.put("w", "alice", "t", exp)
	w.put("w", "alice", "u", exp)
	w.put("t", "alice", "u", exp)
	w.put("x", "bob", "w", exp)
	w.drop("w")
	now := time.Now()
	for target, want := range map[string][]string{"t": nil, "u": {"t"}, "w": nil} {
		live, _ := w.of(target, now)
		if len(live) != len(want) || (len(want) > 0 && live[0] != want[0]) {
			t.Errorf("watchers of %s = %v, want %v", target, live, want)
		}
	}
	if _, ok := w.owner("w"); ok {
		t.Error("the deleted watcher's owner is still known")
	}
	if _, ok := w.owner("x"); ok {
		t.Error("a watcher with no watch left is still known")
	}
	if _, ok := w.owner("t"); !ok {
		t.Error("a watcher that still watches lost its owner")
	}
}
