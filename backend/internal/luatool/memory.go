package luatool

import (
	"context"
	"runtime/metrics"
	"time"
)

// memoryPoll is how often a running script's memory is looked at.
const memoryPoll = 20 * time.Millisecond

const heapObjects = "/memory/classes/heap/objects:bytes"

// watchMemory stops the script (cancelling its context, which its state
// checks at each instruction) once the process's heap has grown by more
// than limit bytes since the script began. gopher-lua allocates from the
// Go heap with no hook of its own, so this is the one measure there is:
// coarse, since other work of the server counts too, and late by up to
// one poll. Strings the modules make are bounded apart (maxString), so
// no single allocation can outrun it. The returned func stops the watch.
func watchMemory(ctx context.Context, cancel context.CancelCauseFunc, limit int64) (stop func()) {
	if limit <= 0 {
		return func() {}
	}
	sample := []metrics.Sample{{Name: heapObjects}}
	read := func() int64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return int64(sample[0].Value.Uint64())
	}
	base := read()
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
				if read()-base > limit {
					cancel(errMemory)
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
