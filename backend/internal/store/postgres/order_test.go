package postgres_test

import (
	"slices"

	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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
// for an n-1 committed after it. The positions are also total and dense
// (1 to N, each once), each session's events are in the order its
// commits made them, and the seq a commit reports is the log's.
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
	var mu sync.Mutex
	reported := map[string]uint64{} // body → the seq its commit reported
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
					c := &store.Change{Meta: &m, Events: []store.Event{
						{SessionID: id, Owner: "o", Kind: "k", Time: m.Updated, Body: fmt.Appendf(nil, "%s/%03d/a", id, n)},
						{SessionID: id, Owner: "o", Kind: "k", Time: m.Updated, Body: fmt.Appendf(nil, "%s/%03d/b", id, n)},
					}}
					if err := s.Commit(ctx, c); err != nil {
						errc <- err
						return
					}
					mu.Lock()
					for _, e := range c.Events {
						reported[string(e.Body)] = e.Seq
					}
					mu.Unlock()
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
			// A commit that could not wait for its positions left them
			// to the next numbering.
			pending, err := stores[0].NumberEvents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !pending {
				break
			}
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
	last := map[string]string{} // session → the body of its newest event so far
	unreported := 0
	for i, e := range all {
		if e.Seq != uint64(i+1) {
			t.Fatalf("position %d holds seq %d: positions are not dense", i+1, e.Seq)
		}
		body := string(e.Body)
		if prev := last[e.SessionID]; body <= prev {
			t.Fatalf("session %s: %s after %s, out of its commits' order", e.SessionID, body, prev)
		}
		last[e.SessionID] = body
		switch got := reported[body]; got {
		case e.Seq:
		case 0:
			unreported++
		default:
			t.Fatalf("%s: its commit reported seq %d, the log has it at %d", body, got, e.Seq)
		}
	}
	t.Logf("%d of %d events' commits returned before their positions were given", unreported, len(all))
}

// TestEventsLeftWithoutAPositionAreNumberedByAnyServer: a server that
// stops between its commit and the numbering of its events (killed, its
// connection lost) leaves them stored without a position. Any server's
// numbering gives them theirs, in commit order, before the events
// committed after them.
func TestEventsLeftWithoutAPositionAreNumberedByAnyServer(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// What a commit that stopped after it committed leaves.
	if _, err := admin.Exec(ctx, `INSERT INTO events (session_id, owner, kind, time, body)
		VALUES ('x', 'o', 'k', 1, 'stranded 1'), ('x', 'o', 'k', 1, 'stranded 2')`); err != nil {
		t.Fatal(err)
	}
	if pending, err := s.NumberEvents(ctx); err != nil || pending {
		t.Fatalf("NumberEvents = %v, %v; want the stranded events numbered", pending, err)
	}
	now := time.Unix(1700000000, 0).UTC()
	m := session.Meta{ID: "s", Agent: "a", Owner: "o", Status: session.StatusReady, Created: now, Updated: now}
	c := &store.Change{Create: true, Meta: &m, Events: []store.Event{{SessionID: "s", Owner: "o", Kind: "k", Time: now, Body: []byte("after")}}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	evs, err := s.EventsAfter(ctx, store.EventFilter{All: true}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, fmt.Sprintf("%d %s", e.Seq, e.Body))
	}
	if want := []string{"1 stranded 1", "2 stranded 2", "3 after"}; !slices.Equal(got, want) || c.Events[0].Seq != 3 {
		t.Fatalf("log %q (the commit said %d), want %q", got, c.Events[0].Seq, want)
	}
}

// TestAnOpenTransactionOfAnotherDatabaseHoldsNoPositionBack: positions
// wait only for this database's transactions. An application sharing the
// PostgreSQL server, with a long transaction open on a database of its
// own, must not hold the event log's positions back (a snapshot's xmin
// would: it counts every database's transactions).
func TestAnOpenTransactionOfAnotherDatabaseHoldsNoPositionBack(t *testing.T) {
	ctx := context.Background()
	dsn, otherDSN := pgtest.DSN(t), pgtest.DSN(t)
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := pgx.Connect(ctx, otherDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `CREATE TABLE busy (n INT); INSERT INTO busy VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1700000000, 0).UTC()
	m := session.Meta{ID: "s", Agent: "a", Owner: "o", Status: session.StatusReady, Created: now, Updated: now}
	c := &store.Change{Create: true, Meta: &m, Events: []store.Event{{SessionID: "s", Owner: "o", Kind: "k", Time: now, Body: []byte("e")}}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if c.Events[0].Seq != 1 {
		t.Fatalf("the commit's event has seq %d while another database's transaction is open, want 1", c.Events[0].Seq)
	}
}
