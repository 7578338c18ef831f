package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
)

// TestEventsCommitInSeqOrderAcrossServers has three stores on one
// database, as three servers, commit events at once while a reader
// follows the log by seq, as each server follows it: the reader must see
// every event. A sequence alone hands out seqs in one order and commits
// them in another, and a reader that passed seq n would never come back
// for an n-1 committed after it.
func TestEventsCommitInSeqOrderAcrossServers(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	const servers, writers, commits = 3, 3, 40
	var stores []*postgres.Store
	for range servers {
		s, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores = append(stores, s)
	}
	now := time.Unix(1700000000, 0).UTC()

	var wg sync.WaitGroup
	errc := make(chan error, servers*writers)
	for i, s := range stores {
		for w := range writers {
			wg.Go(func() {
				id := fmt.Sprintf("s%d-%d", i, w)
				m := session.Meta{ID: id, Agent: "a", Owner: "o", Status: session.StatusReady, Created: now, Updated: now}
				if err := s.CreateSession(ctx, m, nil); err != nil {
					errc <- err
					return
				}
				for n := range commits {
					m.Updated = now.Add(time.Duration(n+1) * time.Millisecond)
					err := s.Commit(ctx, &store.Change{Meta: &m, Events: []store.Event{
						{SessionID: id, Owner: "o", Kind: "k", Time: m.Updated, Body: []byte("a")},
						{SessionID: id, Owner: "o", Kind: "k", Time: m.Updated, Body: []byte("b")},
					}})
					if err != nil {
						errc <- err
						return
					}
				}
			})
		}
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()

	// The reader follows the log until the writers are done and it has
	// read to the end.
	seen := map[uint64]bool{}
	var after uint64
	for done := false; ; {
		select {
		case <-writing:
			done = true
		default:
		}
		evs, err := stores[0].EventsAfter(ctx, store.EventFilter{All: true}, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			seen[e.Seq] = true
			after = e.Seq
		}
		if done && len(evs) == 0 {
			break
		}
	}
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	all, err := stores[1].EventsAfter(ctx, store.EventFilter{All: true}, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if want := servers * writers * commits * 2; len(all) != want {
		t.Fatalf("the log holds %d events, want %d", len(all), want)
	}
	var missed []uint64
	for _, e := range all {
		if !seen[e.Seq] {
			missed = append(missed, e.Seq)
		}
	}
	if len(missed) > 0 {
		t.Fatalf("the reader following the log by seq missed %d events: %v", len(missed), missed)
	}
}
