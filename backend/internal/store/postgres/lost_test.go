package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/eventually"
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

			// Another connection holds appends of events, so the commit
			// stops inside its transaction, its rows written, waiting to
			// append its events.
			admin, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(ctx)
			release := pgtest.HoldEventAppends(t, admin)
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
			tc.cut(t, admin, p, pgtest.AppendWaiter(t, admin))
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the commit did not return after its connection was lost")
			}
			wantUnavailable(t, "commit on a lost connection", err)
			release()

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
	if errs.KindOf(err) != errs.KindUnavailable || errs.CodeOf(err) != errs.CodeStoreUnavailable {
		t.Fatalf("%s: %v (kind %d, code %q), want unavailable %s",
			what, err, errs.KindOf(err), errs.CodeOf(err), errs.CodeStoreUnavailable)
	}
}

// TestAWriterFrozenInsideItsTransactionHoldsNoOtherCommit is issue 33,
// item 1, at the store, as issue 34 item 5 leaves it: a server that stops
// talking inside a commit (a SIGSTOP, a long pause; here its connection
// stops carrying what it sends) holds no lock the other servers' commits
// need. They commit at once; only the positions of their events wait, as
// they must, until the database ends the frozen transaction, idle for
// IdleInTransactionTimeout: it began first, and could still commit
// events ahead of theirs. The frozen commit then fails as the database
// being unavailable, having stored nothing, and retried stores everything
// once.
func TestAWriterFrozenInsideItsTransactionHoldsNoOtherCommit(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var armed atomic.Bool
	frozen, thaw := make(chan struct{}), make(chan struct{})
	p := pgtest.NewProxy(t, dsn, func() pgtest.Hook {
		return func(m pgtest.Message) pgtest.Verdict {
			// One commit, the first once armed, freezes with everything
			// written, its events too, before it says COMMIT.
			if m.Query() == "commit" && armed.CompareAndSwap(true, false) {
				close(frozen)
				<-thaw
			}
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

	// The other server commits while the frozen transaction is open.
	onB := step("on-b")
	if err := b.Commit(ctx, onB); err != nil {
		t.Fatalf("a commit while another server is frozen inside its transaction: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("the frozen commit ended (%v) before the other server's commit returned: that one waited for it", err)
	default:
	}
	// Its event is stored, without a position while the frozen
	// transaction could still commit ahead of it.
	if onB.Events[0].Seq != 0 {
		t.Fatalf("the other server's event got seq %d while an older transaction was open", onB.Events[0].Seq)
	}
	if pending, err := b.NumberEvents(ctx); err != nil || !pending {
		t.Fatalf("NumberEvents while the frozen transaction is open = %v, %v; want its event pending", pending, err)
	}
	if evs, err := b.EventsAfter(ctx, store.EventFilter{All: true}, 0, 100); err != nil || len(evs) != 0 {
		t.Fatalf("the log while the frozen transaction is open: %+v %v, want no positioned event", evs, err)
	}

	select {
	case err = <-done:
	case <-time.After(postgres.IdleInTransactionTimeout + 30*time.Second):
		t.Fatal("the frozen server's commit did not end after its transaction was")
	}
	wantUnavailable(t, "the frozen server's commit", err)
	// The frozen server hears its transaction ended a moment before the
	// database's backend has gone: until then it is still a transaction
	// that could commit ahead, and the event waits.
	var pending bool
	if !eventually.Holds(eventually.Patience, func() bool {
		pending, err = b.NumberEvents(ctx)
		return err == nil && !pending
	}) {
		t.Fatalf("NumberEvents once the frozen transaction ended = %v, %v; want none pending", pending, err)
	}

	if _, turns, err := b.LoadSession(ctx, "on-a"); err != nil || len(turns) != 0 {
		t.Fatalf("the frozen server's commit left %d turns (%v), want none", len(turns), err)
	}
	onA := step("on-a")
	if err := a.Commit(ctx, onA); err != nil {
		t.Fatalf("the frozen server's commit, retried: %v", err)
	}
	// The retried commit numbers its event, or leaves it to the next
	// numbering when a transaction of the busy database was open just
	// then (the first under load): either way it comes second.
	var evs []store.Event
	if !eventually.Holds(eventually.Patience, func() bool {
		if _, err = b.NumberEvents(ctx); err != nil {
			return false
		}
		evs, err = b.EventsAfter(ctx, store.EventFilter{All: true}, 0, 100)
		return err == nil && len(evs) == 2
	}) {
		t.Fatalf("event log: %+v (%v), want two events", evs, err)
	}
	if string(evs[0].Body) != "on-b" || string(evs[1].Body) != "on-a" || evs[0].Seq != 1 || evs[1].Seq != 2 || (onA.Events[0].Seq != 0 && onA.Events[0].Seq != 2) {
		t.Fatalf("event log: %+v, want the other server's commit at 1, then the retried one at 2 (its commit said %d)", evs, onA.Events[0].Seq)
	}
}
