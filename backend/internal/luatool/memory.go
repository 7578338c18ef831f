package luatool

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// memoryPoll is how often a running script's memory is looked at.
const memoryPoll = 20 * time.Millisecond

const (
	heapObjects = "/memory/classes/heap/objects:bytes" // live and not yet collected, now
	heapLive    = "/gc/heap/live:bytes"                // live, as of the last collection
)

// watchMemory stops the script (cancelling its context, which its state
// checks between instructions) once the process's live heap has grown by
// more than limit bytes since the script began. gopher-lua allocates from
// the Go heap with no hook of its own, so this is the one measure there
// is: coarse, since what the rest of the server keeps meanwhile counts
// too, and late by up to one poll. The heap is looked at cheaply; only
// when it has grown past the limit is a collection run, so that garbage
// (the script's or anyone's) is not taken for growth. Strings the modules
// make are bounded apart (maxString), so no single allocation outruns
// it. The returned func stops the watch.
func watchMemory(ctx context.Context, cancel context.CancelCauseFunc, limit int64) (stop func()) {
	if limit <= 0 {
		return func() {}
	}
	samples := []metrics.Sample{{Name: heapObjects}, {Name: heapLive}}
	read := func() (objects, live int64) {
		metrics.Read(samples)
		return value(samples[0]), value(samples[1])
	}
	objects, base := read()
	trigger := objects + limit
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(memoryPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if objects, _ := read(); objects <= trigger {
					continue
				}
				runtime.GC()
				_, live := read()
				if live-base > limit {
					cancel(errMemory)
					return
				}
				trigger = live + limit
			}
		}
	}()
	return func() { close(done) }
}

func value(s metrics.Sample) int64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s.Value.Uint64())
}
