package rounds_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/events/rounds"
)

// counter is a cut that moves on each time a round takes it.
type counter struct{ seq atomic.Uint64 }

func (c *counter) cut() events.Position { return events.Position{Seq: c.seq.Add(1)} }

func window(d time.Duration) func() time.Duration { return func() time.Duration { return d } }

func TestEverySubscriberWaitingGetsACutBeforeTheNextRounds(t *testing.T) {
	t.Parallel()
	var cuts counter
	c := rounds.New(window(time.Millisecond), cuts.cut)
	ctx := t.Context()

	// Many subscribers ask at once: each is released by a round, with
	// its cut.
	const n = 50
	got := make([]events.Position, n)
	var wg sync.WaitGroup
	var asked sync.WaitGroup
	asked.Add(n)
	release := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			asked.Done()
			<-release
			p, err := c.Wait(ctx)
			if err != nil {
				t.Error(err)
			}
			got[i] = p
		})
	}
	asked.Wait()
	close(release)
	wg.Wait()
	for i, p := range got {
		if p.Seq == 0 {
			t.Fatalf("subscriber %d got no cut", i)
		}
	}

	// A round asked for later has a later cut.
	p, err := c.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range got {
		if !q.Before(p) {
			t.Errorf("subscriber %d got cut %v, not before the next round's %v", i, q, p)
		}
	}
}

func TestARoundsCutComesAfterTheWait(t *testing.T) {
	t.Parallel()
	var cuts counter
	c := rounds.New(window(0), cuts.cut)
	for range 100 {
		before := cuts.seq.Load()
		p, err := c.Wait(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if p.Seq <= before {
			t.Fatalf("cut %v taken before the wait (the hub was at %d)", p, before)
		}
	}
}

func TestAWaitEndsWithItsContext(t *testing.T) {
	t.Parallel()
	var cuts counter
	c := rounds.New(window(time.Hour), cuts.cut)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		_, err := c.Wait(ctx)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with its context cancelled: %v, want context.Canceled", err)
	}
}

// TestSubscribersThatComeAndGoEachSeeTheirCutsInOrder has subscribers
// wait round after round while others give up theirs (run it with
// -race): every cut a subscriber gets is later than its last.
func TestSubscribersThatComeAndGoEachSeeTheirCutsInOrder(t *testing.T) {
	t.Parallel()
	var cuts counter
	c := rounds.New(window(100*time.Microsecond), cuts.cut)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			var last events.Position
			for j := range 100 {
				ctx, cancel := context.WithCancel(t.Context())
				if (i+j)%7 == 0 {
					cancel()
				}
				p, err := c.Wait(ctx)
				cancel()
				if err != nil {
					continue
				}
				if !last.Before(p) {
					t.Errorf("cut %v after %v", p, last)
					return
				}
				last = p
			}
		})
	}
	wg.Wait()
}
