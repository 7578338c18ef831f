package events

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// TestReplayWhilePublishing subscribes at a moving position while publishers
// run, then checks the subscriber got exactly the matching events after its
// starting point, in order: nothing missing, nothing twice.
func TestReplayWhilePublishing(t *testing.T) {
	const iterations = 200
	sessions := []string{"s0", "s1", "s2", "s3"}
	scopes := []Scope{AllScope(), SessionScope("s1"), OwnerScope("o1")}
	replays := 0

	for i := range iterations {
		h := New(Options{RingSize: 1024, QueueSize: 1 << 16})
		var mu sync.Mutex
		published := make(map[uint64]*struct{ session, owner string })
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for p := range 4 {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					sess, owner := sessions[(p+n)%len(sessions)], fmt.Sprintf("o%d", n%2)
					seq := h.Publish(event(sess, owner, "text.delta"))
					mu.Lock()
					published[seq] = &struct{ session, owner string }{sess, owner}
					mu.Unlock()
				}
			})
		}
		for h.Seq() < 64 {
			runtime.Gosched()
		}

		scope := scopes[i%len(scopes)]
		var after *uint64
		if i%4 != 0 {
			after = ptr(h.Seq() - uint64(i%64))
		}
		sub, mode := h.Subscribe(scope, after)
		for h.Seq() < sub.SnapshotSeq()+64 {
			runtime.Gosched()
		}
		close(stop)
		wg.Wait()

		from := sub.SnapshotSeq()
		if mode == ModeReplay {
			from = *after
			replays++
		}
		var want []uint64
		for seq := from + 1; seq <= h.Seq(); seq++ {
			e := published[seq]
			if scope.Matches(event(e.session, e.owner, "")) {
				want = append(want, seq)
			}
		}
		wantSeqs(t, fmt.Sprintf("iteration %d (%v, %v)", i, scope, mode), queued(sub), want)
		if sub.Err() != nil {
			t.Fatalf("iteration %d: subscription ended: %v", i, sub.Err())
		}
	}
	if replays == 0 {
		t.Fatal("no iteration exercised replay")
	}
}

// TestSlowSubscriberIsCut runs a publisher in lock step with a fast reader
// while a second subscriber never reads. The publisher can only finish if
// Publish never waits for the slow one.
func TestSlowSubscriberIsCut(t *testing.T) {
	const queue, total = 8, 1000
	h := New(Options{QueueSize: queue})
	slow, _ := h.Subscribe(AllScope(), nil)
	fast, _ := h.Subscribe(AllScope(), nil)

	read := make(chan uint64)
	go func() {
		for ev := range fast.C() {
			read <- ev.Seq
		}
		close(read)
	}()

	var got []uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range total {
			h.Publish(event("s", "o", "text.delta"))
			got = append(got, <-read)
		}
	}()
	<-done

	wantSeqs(t, "fast subscriber", got, seqRange(1, total))
	if fast.Err() != nil {
		t.Fatalf("fast subscriber ended: %v", fast.Err())
	}
	if lagged, last := slow.Lagged(); !lagged || last.Seq != queue {
		t.Fatalf("slow Lagged() = %v, %d; want true, %d", lagged, last, queue)
	}
	if !errors.Is(slow.Err(), ErrLagged) {
		t.Fatalf("slow Err() = %v, want ErrLagged", slow.Err())
	}
	wantSeqs(t, "slow subscriber keeps what was queued", queued(slow), seqRange(1, queue))
	if !isClosed(slow) {
		t.Fatal("slow subscriber's channel is not closed")
	}
	if n := h.Subscribers(); n != 1 {
		t.Fatalf("Subscribers() = %d after the cut, want 1", n)
	}
	fast.Close()
	for range read {
	}
}

// TestPublishNeverBlocks publishes far more than the queue holds to many
// subscribers that never read, from a goroutine that must finish.
func TestPublishNeverBlocks(t *testing.T) {
	const queue, subs = 4, 50
	h := New(Options{QueueSize: queue})
	var all []*Subscription
	for i := range subs {
		scope := AllScope()
		if i%2 == 1 {
			scope = SessionScope("s")
		}
		sub, _ := h.Subscribe(scope, nil)
		all = append(all, sub)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		publishN(h, 100*queue, "s", "o")
	}()
	<-done
	for i, sub := range all {
		if lagged, last := sub.Lagged(); !lagged || last.Seq != queue {
			t.Fatalf("subscriber %d: Lagged() = %v, %d; want true, %d", i, lagged, last, queue)
		}
	}
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("Subscribers() = %d, want 0", n)
	}
}

func TestLaggedReportsTheLastMatchingSeq(t *testing.T) {
	h := New(Options{QueueSize: 2})
	sub, _ := h.Subscribe(SessionScope("mine"), nil)
	h.Publish(event("other", "o", "text.delta")) // 1
	h.Publish(event("mine", "o", "text.delta"))  // 2
	h.Publish(event("other", "o", "text.delta")) // 3
	h.Publish(event("mine", "o", "text.delta"))  // 4
	h.Publish(event("other", "o", "text.delta")) // 5
	h.Publish(event("mine", "o", "text.delta"))  // 6: the queue is full
	if lagged, last := sub.Lagged(); !lagged || last.Seq != 4 {
		t.Fatalf("Lagged() = %v, %d; want true, 4", lagged, last)
	}
	wantSeqs(t, "queued", queued(sub), []uint64{2, 4})
}

func TestCloseIsIdempotent(t *testing.T) {
	h := New(Options{})
	sub, _ := h.Subscribe(OwnerScope("o"), nil)
	h.Publish(event("s", "o", "text.delta"))

	var wg sync.WaitGroup
	for range 10 {
		wg.Go(sub.Close)
	}
	wg.Wait()
	sub.Close()

	if !errors.Is(sub.Err(), ErrClosed) {
		t.Fatalf("Err() = %v, want ErrClosed", sub.Err())
	}
	if lagged, _ := sub.Lagged(); lagged {
		t.Fatal("a closed subscription reports lagged")
	}
	wantSeqs(t, "queued before Close", queued(sub), []uint64{1})
	if !isClosed(sub) {
		t.Fatal("channel not closed")
	}
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("Subscribers() = %d, want 0", n)
	}
	// Would panic (send on closed channel) if Close left it registered.
	h.Publish(event("s", "o", "text.delta"))
}

// TestCloseRacesLaggedCut ends subscriptions from both sides at once; the
// race detector checks the handover, the assertions check the outcome.
func TestCloseRacesLaggedCut(t *testing.T) {
	for i := range 500 {
		h := New(Options{QueueSize: 1})
		sub, _ := h.Subscribe(AllScope(), nil)
		var wg sync.WaitGroup
		wg.Go(func() { publishN(h, 3, "s", "o") })
		wg.Go(sub.Close)
		wg.Wait()

		err := sub.Err()
		if !errors.Is(err, ErrClosed) && !errors.Is(err, ErrLagged) {
			t.Fatalf("iteration %d: Err() = %v, want ErrClosed or ErrLagged", i, err)
		}
		for range sub.C() { // terminates only if the channel is closed
		}
		sub.Close()
		if sub.Err() != err {
			t.Fatalf("iteration %d: a later Close changed Err from %v to %v", i, err, sub.Err())
		}
		if n := h.Subscribers(); n != 0 {
			t.Fatalf("iteration %d: Subscribers() = %d, want 0", i, n)
		}
	}
}

func TestShutdown(t *testing.T) {
	h := New(Options{})
	subs := []*Subscription{}
	for _, scope := range []Scope{AllScope(), OwnerScope("o"), SessionScope("s"), {}} {
		sub, _ := h.Subscribe(scope, nil)
		subs = append(subs, sub)
	}
	h.Publish(event("s", "o", "text.delta"))
	h.Shutdown()
	h.Shutdown()

	for i, sub := range subs {
		if !errors.Is(sub.Err(), ErrShutdown) {
			t.Fatalf("subscriber %d: Err() = %v, want ErrShutdown", i, sub.Err())
		}
		sub.Close()
		if !errors.Is(sub.Err(), ErrShutdown) {
			t.Fatalf("subscriber %d: Close after Shutdown changed Err to %v", i, sub.Err())
		}
		queued(sub)
		if !isClosed(sub) {
			t.Fatalf("subscriber %d: channel not closed", i)
		}
	}
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("Subscribers() = %d, want 0", n)
	}

	if seq := h.Publish(event("s", "o", "text.delta")); seq != 2 {
		t.Fatalf("Publish after Shutdown returned %d, want 2", seq)
	}
	late, mode := h.Subscribe(AllScope(), ptr(0))
	if mode != ModeReplay || !errors.Is(late.Err(), ErrShutdown) || !isClosed(late) {
		t.Fatalf("Subscribe after Shutdown: mode %v, Err %v; want replay, ErrShutdown, closed", mode, late.Err())
	}
}
