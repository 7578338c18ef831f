package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/eventually"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/storetest"
)

// opener opens the database at dsn.
func opener(dsn string) storetest.Opener {
	return func(t *testing.T) store.Store {
		t.Helper()
		s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return s
	}
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		return opener(pgtest.DSN(t))
	})
}

// TestServersStartingTogetherMigrateOnce opens three stores at once on an
// empty database, as three servers started together do: each must open,
// and the schema must be made exactly once.
func TestServersStartingTogetherMigrateOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	const n = 3
	stores := make([]*postgres.Store, n)
	errc := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errc[i] = postgres.Open(ctx, dsn, postgres.Options{})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errc {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		defer stores[i].Close()
	}
	ms, err := store.Migrations("postgres")
	if err != nil {
		t.Fatal(err)
	}
	db := sqlx.MustOpen("pgx", dsn)
	defer db.Close()
	var versions []int
	if err := db.Select(&versions, `SELECT version FROM schema_migrations ORDER BY version`); err != nil {
		t.Fatal(err)
	}
	want := make([]int, len(ms))
	for i, m := range ms {
		want[i] = m.Version
	}
	if !slices.Equal(versions, want) {
		t.Fatalf("schema_migrations has %v, want each of %v once", versions, want)
	}
	// Every store works on the one schema.
	for i, s := range stores {
		m := session.Meta{ID: fmt.Sprintf("s%d", i), Agent: "a", Owner: "o", Status: session.StatusReady,
			Created: time.Unix(int64(i+1), 0).UTC(), Updated: time.Unix(int64(i+1), 0).UTC()}
		if err := s.CreateSession(ctx, m, nil); err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
	}
	got, _, err := stores[0].ListSessions(ctx, store.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("listed %d sessions, want %d", len(got), n)
	}

	// A database migrated by a newer binary is refused.
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied) VALUES (9999, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	if s, err := postgres.Open(ctx, dsn, postgres.Options{}); err == nil {
		s.Close()
		t.Fatal("opened a database with a newer schema")
	}
}

func TestOpenRejectsABadDSN(t *testing.T) {
	for _, dsn := range []string{"postgres://user@host:notaport/db", "postgres://127.0.0.1:1/none?connect_timeout=2"} {
		if s, err := postgres.Open(context.Background(), dsn, postgres.Options{}); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error", dsn)
		}
	}
}

func TestOpenWithAOneConnectionPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, pgtest.DSN(t), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestTitleSearchFoldsCaseBeyondASCII: on PostgreSQL the title search
// ignores the case of every letter, not only ASCII ones as on SQLite.
func TestTitleSearchFoldsCaseBeyondASCII(t *testing.T) {
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgtest.DSN(t), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i, title := range []string{"Élan vital", "ÜBER 50%", "other"} {
		at := time.Unix(int64(i+1), 0).UTC()
		m := session.Meta{ID: fmt.Sprintf("s%d", i), Agent: "a", Owner: "o", Title: title, Status: session.StatusReady, Created: at, Updated: at}
		if err := s.CreateSession(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	for query, want := range map[string]string{"élan": "s0", "über 5": "s1", "50%": "s1", "R 5": "s1"} {
		got, _, err := s.ListSessions(ctx, store.ListFilter{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != want {
			t.Errorf("query %q found %v, want %s", query, got, want)
		}
	}
}

// Servers sharing a database admit the calls of one owner one at a time:
// of the sessions that ask, through several stores at once, for the last
// of the owner's budget, exactly one finds it free.
func TestServersAdmitAnOwnersLastTokensOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	const servers, each = 3, 4
	stores := make([]*postgres.Store, servers)
	for i := range stores {
		s, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	limit := int64(100)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := stores[0].SetOwnerBudget(ctx, session.OwnerBudget{Owner: "alice", Budget: session.Budget{Tokens: &limit}, Period: session.PeriodDay}, at); err != nil {
		t.Fatal(err)
	}
	for i := range servers * each {
		m := session.Meta{ID: fmt.Sprintf("s%d", i), Agent: "a", Owner: "alice", Status: session.StatusReady, Created: at, Updated: at}
		if err := stores[0].CreateSession(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var admitted []string
	start := make(chan struct{})
	for i := range servers * each {
		wg.Go(func() {
			<-start
			id := fmt.Sprintf("s%d", i)
			adm, err := stores[i%servers].Reserve(ctx, store.Reservation{SessionID: id, RootID: id, Owner: "alice", Input: 50, Output: 50, MinOutput: 10, Now: at, Expires: at.Add(time.Hour)})
			if err != nil {
				t.Errorf("reserve %s: %v", id, err)
				return
			}
			if adm.Exceeded == "" {
				mu.Lock()
				admitted = append(admitted, id)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(admitted) != 1 {
		t.Fatalf("admitted %v, want exactly one", admitted)
	}
}

func TestMigration13RecordsPastModelCalls(t *testing.T) {
	cfg, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	db := sqlx.NewDb(stdlib.OpenDB(*cfg), "pgx")
	t.Cleanup(func() { db.Close() })
	storetest.MigrationRecordsPastModelCalls(t, db, "postgres")
}

func TestMigration17TimesDeliveredAttempts(t *testing.T) {
	cfg, err := pgx.ParseConfig(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	db := sqlx.NewDb(stdlib.OpenDB(*cfg), "pgx")
	t.Cleanup(func() { db.Close() })
	storetest.MigrationTimesDeliveredAttempts(t, db, "postgres")
}

// Servers sharing a database fold each model call once, however their
// folds interleave.
func TestServersFoldModelCallsAtOnce(t *testing.T) {
	dsn := pgtest.DSN(t)
	stores := make([]store.Store, 3)
	for i := range stores {
		s, err := postgres.Open(context.Background(), dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	storetest.ConcurrentFolds(t, stores...)
}

// Two servers fold the same calls at once, the first held up before it
// adds them to their hours (another transaction holds the table of
// hours) until the second has started: each call is folded once, the
// second finding gone those the first folded.
func TestServersFoldingTheSameCallsFoldEachOnce(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	// The folds wait for the lock as long as the test holds it, not the
	// store's lock_timeout, which a loaded machine may reach.
	waitLong, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := waitLong.Query()
	q.Set("lock_timeout", "5min")
	waitLong.RawQuery = q.Encode()
	var stores [2]*postgres.Store
	for i := range stores {
		s, err := postgres.Open(ctx, waitLong.String(), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	hour := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := session.Meta{ID: "s", Agent: "coder", Owner: "alice", Status: session.StatusReady, Created: hour, Updated: hour}
	if err := stores[0].CreateSession(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	const calls = 10
	for i := range calls {
		c := &store.Change{Spend: &store.SpendChange{SessionID: "s", RootID: "s", Owner: "alice", Spend: session.Spend{Tokens: 3, Cost: 5},
			At: hour.Add(time.Duration(i) * time.Minute), Agent: "coder", Model: "m", Prompt: 2, Completion: 1}}
		if err := stores[0].Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE model_call_hours IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, len(stores))
	// The first fold waits for the hours' table; the second for the fold
	// lock, so their transactions overlap. The waits are read on a
	// connection of their own: in admin's transaction pg_stat_activity
	// lists the backends of its first read only (PostgreSQL keeps that
	// list until the transaction ends), and a fold that opened a
	// connection after it would never be seen waiting.
	watch, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	locked := func() int {
		var got int
		if err := watch.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i, s := range stores {
		go func() {
			n, err := s.FoldModelCalls(ctx, hour.Add(time.Hour))
			done <- result{n, err}
		}()
		eventually.Within(t, 30*time.Second, fmt.Sprintf("fold %d waits for a lock", i+1), func() bool { return locked() >= i+1 })
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	folded := 0
	for range stores {
		r := <-done
		if r.err != nil {
			t.Fatalf("fold: %v", r.err)
		}
		folded += r.n
	}
	if folded != calls {
		t.Fatalf("folded %d calls, want %d", folded, calls)
	}
	series, err := stores[1].UsageSeries(ctx, store.UsageQuery{Since: hour, Until: hour.Add(time.Hour), Bucket: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := []store.UsagePoint{{Start: hour, Owner: "alice", Agent: "coder", Model: "m", Calls: calls, Prompt: 2 * calls, Completion: calls, Cost: 5 * calls}}
	if !reflect.DeepEqual(series, want) {
		t.Fatalf("series %+v, want %+v", series, want)
	}
}
