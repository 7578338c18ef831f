package postgres_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
)

// TestLostConnectionMidCommit loses the store's connection while a commit
// is inside its transaction: the server ends the backend
// (pg_terminate_backend, as a restart or an operator does), or the
// network between them is cut. The commit must fail as the database being
// unavailable (a retry may succeed) and leave nothing behind; the same
// commit retried must then store everything once, at its first try.
func TestLostConnectionMidCommit(t *testing.T) {
	tests := []struct {
		name string
		cut  func(t *testing.T, admin *pgx.Conn, p *pgtest.Proxy, pid int)
	}{
		{"terminated backend", func(t *testing.T, admin *pgx.Conn, _ *pgtest.Proxy, pid int) {
			var ok bool
			if err := admin.QueryRow(context.Background(), `SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
				t.Fatalf("terminate backend %d: %v %v", pid, ok, err)
			}
		}},
		{"network cut", func(t *testing.T, _ *pgx.Conn, p *pgtest.Proxy, _ int) { p.Cut() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := pgtest.DSN(t)
			p := pgtest.NewProxy(t, dsn, nil)
			s, err := postgres.Open(ctx, p.DSN(), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			now := time.Unix(1700000000, 0).UTC()
			meta := session.Meta{ID: "s1", Agent: "a", Owner: "o", Status: session.StatusReady, Created: now, Updated: now}
			if err := s.CreateSession(ctx, meta, nil); err != nil {
				t.Fatal(err)
			}

			// Another connection holds the event log's lock, so the commit
			// stops inside its transaction, its rows written, waiting to
			// append its events.
			admin, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(ctx)
			if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1)`, postgres.EventLogLockKey); err != nil {
				t.Fatal(err)
			}
			step := func() *store.Change {
				m := meta
				m.Status, m.TurnCount, m.Updated = session.StatusRunning, 1, now.Add(time.Second)
				return &store.Change{
					Meta:     &m,
					NewTurns: []session.Turn{{Index: 0, Created: m.Updated, User: &session.UserTurn{Text: "hello"}}},
					Events:   []store.Event{{SessionID: "s1", Owner: "o", Kind: "session.turn", Time: m.Updated, Body: []byte("turn 0")}},
				}
			}
			done := make(chan error, 1)
			go func() { done <- s.Commit(ctx, step()) }()
			tc.cut(t, admin, p, waitingOnTheLock(t, admin))
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the commit did not return after its connection was lost")
			}
			wantUnavailable(t, "commit on a lost connection", err)
			if _, err := admin.Exec(ctx, `SELECT pg_advisory_unlock($1)`, postgres.EventLogLockKey); err != nil {
				t.Fatal(err)
			}

			// Nothing of the lost commit is stored. The store's other
			// connections may be lost too: the pool finds them dead
			// before it uses them, so the next requests do not fail.
			got, turns, err := s.LoadSession(ctx, "s1")
			if err != nil {
				t.Fatalf("load after the lost commit: %v", err)
			}
			if got.Status != session.StatusReady || len(turns) != 0 {
				t.Fatalf("after the lost commit: status %s, %d turns; want ready with none", got.Status, len(turns))
			}

			// Retried, it stores everything once.
			c := step()
			if err := s.Commit(ctx, c); err != nil {
				t.Fatalf("retried commit: %v", err)
			}
			got, turns, err = s.LoadSession(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != session.StatusRunning || len(turns) != 1 || turns[0].User.Text != "hello" {
				t.Fatalf("after the retry: status %s, turns %+v", got.Status, turns)
			}
			evs, err := s.EventsAfter(ctx, store.EventFilter{All: true}, 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || string(evs[0].Body) != "turn 0" || evs[0].Seq != c.Events[0].Seq {
				t.Fatalf("event log after the retry: %+v, want the one event of the retried commit (seq %d)", evs, c.Events[0].Seq)
			}
		})
	}
}

// wantUnavailable fails t unless err is the store's "unavailable, retry"
// error.
func wantUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	if errs.KindOf(err) != errs.KindUnavailable || errs.CodeOf(err) != store.CodeStoreUnavailable {
		t.Fatalf("%s: %v (kind %d, code %q), want unavailable %s",
			what, err, errs.KindOf(err), errs.CodeOf(err), store.CodeStoreUnavailable)
	}
}

// waitingOnTheLock returns the backend that waits for the event log's
// lock.
func waitingOnTheLock(t *testing.T, admin *pgx.Conn) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var pids []int
		rows, err := admin.Query(context.Background(), `SELECT pid FROM pg_locks
			WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
		if err == nil {
			pids, err = pgx.CollectRows(rows, pgx.RowTo[int])
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) == 1 {
			return pids[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no commit waits for the event log's lock")
	return 0
}

// TestAWriterFrozenInsideItsTransactionHoldsTheOthersUpOnlyBriefly is
// issue 33, item 1, at the store: a server that stops talking inside a
// commit, once it holds the event log's lock (a SIGSTOP, a long pause;
// here its connection stops carrying what it sends), holds the other
// servers' commits up only until the database ends its transaction, idle
// for IdleInTransactionTimeout. Its own commit then fails as the database
// being unavailable, having stored nothing, and retried stores everything
// once.
func TestAWriterFrozenInsideItsTransactionHoldsTheOthersUpOnlyBriefly(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var armed atomic.Bool
	frozen, thaw := make(chan struct{}), make(chan struct{})
	p := pgtest.NewProxy(t, dsn, func() pgtest.Hook {
		locked := false
		return func(m pgtest.Message) pgtest.Verdict {
			if locked {
				// The message after the lock is not sent while frozen.
				locked = false
				close(frozen)
				<-thaw
				return pgtest.Forward
			}
			// One commit, the first to take the lock once armed, freezes.
			locked = strings.HasPrefix(m.Query(), "select pg_advisory_xact_lock") && armed.CompareAndSwap(true, false)
			return pgtest.Forward
		}
	})
	a, err := postgres.Open(ctx, p.DSN(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// Before the stores close, which waits for the frozen commit.
	defer close(thaw)
	now := time.Unix(1700000000, 0).UTC()
	step := func(id string) *store.Change {
		m := session.Meta{ID: id, Agent: "a", Owner: "o", Status: session.StatusRunning, TurnCount: 1, Created: now, Updated: now.Add(time.Second)}
		return &store.Change{
			Meta:     &m,
			NewTurns: []session.Turn{{Index: 0, Created: m.Updated, User: &session.UserTurn{Text: "hello " + id}}},
			Events:   []store.Event{{SessionID: id, Owner: "o", Kind: "session.turn", Time: m.Updated, Body: []byte(id)}},
		}
	}
	for _, id := range []string{"on-a", "on-b"} {
		meta := session.Meta{ID: id, Agent: "a", Owner: "o", Status: session.StatusReady, Created: now, Updated: now}
		if err := b.CreateSession(ctx, meta, nil); err != nil {
			t.Fatal(err)
		}
	}

	armed.Store(true)
	done := make(chan error, 1)
	go func() { done <- a.Commit(ctx, step("on-a")) }()
	<-frozen

	// The other server's commit waits for the lock, and gets it once the
	// frozen transaction has been idle for the timeout: within the bound.
	bound := postgres.IdleInTransactionTimeout + 10*time.Second
	bctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if err := b.Commit(bctx, step("on-b")); err != nil {
		t.Fatalf("a commit while another server is frozen holding the lock, bounded by %s: %v", bound, err)
	}
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the frozen server's commit did not end after its transaction was")
	}
	wantUnavailable(t, "the frozen server's commit", err)

	if _, turns, err := b.LoadSession(ctx, "on-a"); err != nil || len(turns) != 0 {
		t.Fatalf("the frozen server's commit left %d turns (%v), want none", len(turns), err)
	}
	if err := a.Commit(ctx, step("on-a")); err != nil {
		t.Fatalf("the frozen server's commit, retried: %v", err)
	}
	evs, err := b.EventsAfter(ctx, store.EventFilter{All: true}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || string(evs[0].Body) != "on-b" || string(evs[1].Body) != "on-a" {
		t.Fatalf("event log: %+v, want the other server's commit, then the retried one, once each", evs)
	}
}
