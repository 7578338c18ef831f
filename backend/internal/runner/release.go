package runner

import (
	"runtime/debug"
	"time"
)

// An evicted session's memory is garbage, but a server that has gone
// quiet allocates too little to collect it, and the Go runtime keeps the
// pages it grew to during the burst: minutes later an idle server still
// holds its busiest moment. So once a wave of evictions ends (no eviction
// for releaseDelay) after the last loaded session went, or after
// releaseEvery evictions, the runner collects and returns the free memory
// to the system. It costs one garbage collection of what is left, at a
// moment the server has nothing else to do, at most once per wave; the
// event rings are compacted first (events.Hub.Compact).
const (
	releaseDelay = time.Second
	releaseEvery = 256
)

// release is the state of the memory release; the runner's mutex guards
// it.
type release struct {
	evicted int // evictions since the last release
	timer   *time.Timer
}

// noteEviction counts an eviction and schedules a release when it ends a
// wave. Called under the runner's mutex, after the actor left r.live.
func (r *Runner) noteEviction() {
	if len(r.live) == 0 {
		// Maps never shrink: a new one lets the old buckets go.
		r.live = map[string]*actor{}
	}
	r.release.evicted++
	if len(r.live) > 0 && r.release.evicted < releaseEvery {
		return
	}
	if r.release.timer != nil {
		r.release.timer.Reset(releaseDelay)
		return
	}
	r.release.timer = time.AfterFunc(releaseDelay, r.releaseMemory)
}

// releaseMemory collects and returns free memory to the system.
func (r *Runner) releaseMemory() {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return
	}
	r.release.evicted = 0
	r.mu.Unlock()
	// What the event rings kept through the burst is spread over the
	// burst's memory; moved together, it no longer keeps those pages in
	// use.
	if r.hub != nil {
		r.hub.Compact()
	}
	debug.FreeOSMemory()
}
