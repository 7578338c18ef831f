package committer_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/backend/internal/store/storefault"
)

// Every write gets the truth, even when the committer closes under it:
// nil for a write that is in the log, ErrClosing for one that is not.
func TestEveryWriteIsAnsweredWithItsOutcomeAcrossClose(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	faults := &storefault.Faults{}
	faults.SlowWrites(2 * time.Millisecond)
	hub := events.New(events.Options{})
	hub.Start(0)
	defer hub.Shutdown()
	c := committer.New(storefault.Wrap(db, faults), hub, committer.Options{})

	const writers = 200
	outcomes := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			ev := &agentsv1.Event{Kind: "agents.changed", Owner: "o", SessionId: string(rune('a' + i%26))}
			outcomes[i] = c.Write(ctx, &store.Change{}, []*agentsv1.Event{ev})
		})
		if i == writers/2 {
			go c.Close()
		}
	}
	wg.Wait()
	c.Close()
	stored, err := db.EventsAfter(ctx, store.EventFilter{All: true}, 0, 10*writers)
	if err != nil {
		t.Fatal(err)
	}
	ok := 0
	for i, err := range outcomes {
		switch err {
		case nil:
			ok++
		case committer.ErrClosing:
		default:
			t.Errorf("write %d: %v", i, err)
		}
	}
	if ok != len(stored) {
		t.Errorf("%d writes answered nil, %d are stored", ok, len(stored))
	}
	if err := c.Write(ctx, &store.Change{}, nil); err != committer.ErrClosing {
		t.Errorf("a write after Close = %v, want ErrClosing", err)
	}
}

// With Options.Publish the committed events go to it, with their seqs and
// encodings, in commit order, and not to the hub.
func TestPublishTakesTheCommittedEvents(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hub := events.New(events.Options{})
	hub.Start(0)
	defer hub.Shutdown()
	var got []uint64
	c := committer.New(db, hub, committer.Options{Publish: func(ev *agentsv1.Event, body []byte) error {
		if len(body) == 0 {
			t.Errorf("event %d published without its encoding", ev.Seq)
		}
		got = append(got, ev.Seq)
		return nil
	}})
	for range 3 {
		evs := []*agentsv1.Event{{Kind: "agents.changed"}, {Kind: "agents.changed"}}
		if err := c.Write(ctx, &store.Change{}, evs); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	if want := []uint64{1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("Publish got seqs %v, want %v", got, want)
	}
	if hub.Seq() != 0 {
		t.Errorf("the hub got events up to %d besides", hub.Seq())
	}
}

// Writers that commit their own write and the groups the loop commits
// take turns: the events go out in seq order, each once.
func TestConcurrentWritesPublishInSeqOrder(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hub := events.New(events.Options{})
	hub.Start(0)
	defer hub.Shutdown()
	var (
		mu  sync.Mutex
		got []uint64
	)
	c := committer.New(db, hub, committer.Options{Publish: func(ev *agentsv1.Event, _ []byte) error {
		time.Sleep(50 * time.Microsecond) // a commit that publishes slowly, for another to overtake
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev.Seq)
		return nil
	}})
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				evs := []*agentsv1.Event{{Kind: "agents.changed"}, {Kind: "agents.changed"}}
				if err := c.Write(ctx, &store.Change{}, evs); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	c.Close()
	if len(got) != 2*writers*each {
		t.Fatalf("published %d events, want %d", len(got), 2*writers*each)
	}
	for i, seq := range got {
		if seq != uint64(i+1) {
			t.Fatalf("event %d published with seq %d, want %d: %v", i, seq, i+1, got)
		}
	}
}
