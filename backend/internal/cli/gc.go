package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// A server's live heap is small (a few MB for a fresh one, tens with
// sessions loaded) and every prompt allocates, so with Go's default (a
// collection each time the heap doubles) it collects many times a
// second under load, and a lone session's prompt pays for the marking of
// a heap that hardly changes. The server sets the GC percent that lets
// the heap grow by gcHeadroom between collections, within gcMinPercent
// and gcMaxPercent: a heap under 16 MB grows by four times itself (a
// fresh server's goal is about 16 MB, not 4), and one of gcHeadroom or
// more collects as by default. An operator who sets GOGC keeps it.
const (
	gcHeadroom   = 64 << 20
	gcMaxPercent = 400
	gcMinPercent = 100
)

// gcPercentFor is the GC percent for a live heap of live bytes: what gives
// gcHeadroom over it, within [gcMinPercent, gcMaxPercent].
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	p := uint64(gcHeadroom) * 100 / live
	return int(max(min(p, gcMaxPercent), gcMinPercent))
}

// gcTuner sets the GC percent from the live heap after every collection.
type gcTuner struct {
	stopped atomic.Bool
	percent int
	sample  []metrics.Sample
}

// tuneGC starts setting the GC percent by the live heap, unless GOGC is
// set; stop puts the default back.
func tuneGC() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	t := &gcTuner{percent: gcMaxPercent, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	prev := debug.SetGCPercent(gcMaxPercent)
	t.arm()
	return func() {
		t.stopped.Store(true)
		debug.SetGCPercent(prev)
	}
}

// gcSentinel is garbage from the moment it is made: its finalizer runs
// after the next collection, once per cycle.
type gcSentinel struct{ _ *int }

// arm makes the sentinel whose finalizer, after the next collection,
// adjusts the percent and arms the next one. It runs on the runtime's
// finalizer goroutine.
func (t *gcTuner) arm() {
	s := &gcSentinel{}
	runtime.SetFinalizer(s, func(*gcSentinel) {
		if t.stopped.Load() {
			return
		}
		t.adjust()
		t.arm()
	})
}

func (t *gcTuner) adjust() {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := gcPercentFor(t.sample[0].Value.Uint64()); p != t.percent {
		t.percent = p
		debug.SetGCPercent(p)
	}
}
