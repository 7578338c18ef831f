package events

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// benchScopes returns n scopes: all-scope (every subscriber matches every
// event, the worst case), one session each (an event matches one
// subscriber, the common case), or all-scope of another kind than the
// events published (every subscriber is in the bucket, none wants them).
func benchScopes(layout string, n int) []Scope {
	scopes := make([]Scope, n)
	for i := range scopes {
		scopes[i] = AllScope()
		switch layout {
		case "sessions":
			scopes[i] = SessionScope(fmt.Sprintf("s%d", i))
		case "otherkinds":
			scopes[i], _ = AllScope().OfKinds(KindRunStopped)
		}
	}
	return scopes
}

// BenchmarkPublish measures the cost of Publish itself, which is the length
// of the hub's critical section: the subscribers do not read while the clock
// runs, and their queues are drained with the clock stopped before they can
// fill, so nobody is cut and every send is a plain buffered send.
func BenchmarkPublish(b *testing.B) {
	const queue = 4096
	for _, layout := range []string{"all", "sessions", "otherkinds"} {
		for _, n := range []int{0, 1, 64, 512} {
			if layout != "all" && n == 0 {
				continue
			}
			b.Run(fmt.Sprintf("%s/subs=%d", layout, n), func(b *testing.B) {
				h := New(Options{QueueSize: queue})
				var subs []*Subscription
				for _, scope := range benchScopes(layout, n) {
					sub, _ := h.Subscribe(scope, nil)
					subs = append(subs, sub)
				}
				ids := make([]string, max(n, 1))
				for i := range ids {
					ids[i] = fmt.Sprintf("s%d", i)
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					h.Publish(event(ids[i%len(ids)], "o", "text.delta"))
					if i++; i%queue == 0 {
						b.StopTimer()
						for _, sub := range subs {
							queued(sub)
						}
						b.StartTimer()
					}
				}
				for _, sub := range subs {
					if sub.Err() != nil {
						b.Fatalf("subscriber ended: %v", sub.Err())
					}
				}
			})
		}
	}
}

// BenchmarkPublishParallel measures publishers contending for the hub, as
// the runners of many sessions do. The idle subscribers watch sessions
// nobody publishes to: they sit in the index but cost no sends.
func BenchmarkPublishParallel(b *testing.B) {
	for _, idle := range []int{0, 512} {
		b.Run(fmt.Sprintf("idle=%d", idle), func(b *testing.B) {
			h := New(Options{})
			for i := range idle {
				h.Subscribe(SessionScope(fmt.Sprintf("idle%d", i)), nil)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					h.Publish(event("s", "o", "text.delta"))
				}
			})
		})
	}
}

// BenchmarkDelivery measures events end to end, with a goroutine reading
// each subscription as the server's streams do: the publisher sends a batch
// and waits until every subscriber has read it. ns/op is per event, so
// 1e9/ns is the rate of events per second this machine sustains with that
// many all-scope subscribers. A batch is far below the queue size, so no
// subscriber is ever cut.
func BenchmarkDelivery(b *testing.B) {
	const batch = 64
	for _, n := range []int{1, 64, 512} {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			h := New(Options{})
			var batchDone, readers sync.WaitGroup
			for range n {
				sub, _ := h.Subscribe(AllScope(), nil)
				readers.Go(func() {
					for ev := range sub.C() {
						if ev.Seq%batch == 0 {
							batchDone.Done()
						}
					}
				})
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%batch == 0 {
					batchDone.Wait()
					batchDone.Add(n)
				}
				h.Publish(event("s", "o", "text.delta"))
				i++
			}
			for ; i%batch != 0; i++ { // complete the last batch
				h.Publish(event("s", "o", "text.delta"))
			}
			batchDone.Wait()
			h.Shutdown()
			readers.Wait()
		})
	}
}

// BenchmarkSubscribeReplay measures the longest critical section Subscribe
// holds: replaying a full ring.
func BenchmarkSubscribeReplay(b *testing.B) {
	h := New(Options{})
	last := publishN(h, DefaultRingSize, "s", "o")
	b.ReportAllocs()
	for b.Loop() {
		sub, mode := h.Subscribe(AllScope(), ptr(last-DefaultRingSize))
		if mode != ModeReplay {
			b.Fatalf("mode %v", mode)
		}
		sub.Close()
	}
}

// BenchmarkHeldAfterDeletingSessions publishes 40 sessions' events of
// 2 MiB in all each into a ring large enough to keep them, deletes the
// sessions, and reports the heap still in use: what the rings keep of
// deleted sessions (issue 33: 7 MB each until newer events pushed them
// out).
func BenchmarkHeldAfterDeletingSessions(b *testing.B) {
	body := strings.Repeat("x", 256<<10)
	var held uint64
	for b.Loop() {
		heap := func() uint64 {
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			return m.HeapAlloc
		}
		h := New(Options{RingSize: 4096, RingBytes: 256 << 20})
		before := heap()
		for s := range 40 {
			id := fmt.Sprintf("s%d", s)
			for range 8 {
				h.Publish(&agentsv1.Event{SessionId: id, Owner: "o", Kind: "session.updated",
					Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Reason: body}}})
			}
		}
		for s := range 40 {
			h.Publish(event(fmt.Sprintf("s%d", s), "o", KindSessionDeleted))
		}
		if after := heap(); after > before {
			held = after - before
		} else {
			held = 0
		}
		runtime.KeepAlive(h)
	}
	b.ReportMetric(float64(held), "B-held")
}
