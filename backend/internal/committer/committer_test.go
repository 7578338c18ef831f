package committer_test

import (
	"context"
	"path/filepath"
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
