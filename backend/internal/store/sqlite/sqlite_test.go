package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/storetest"
)

// opener opens the database file at path.
func opener(path string) storetest.Opener {
	return func(t *testing.T) store.Store {
		t.Helper()
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		return s
	}
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		return opener(filepath.Join(t.TempDir(), "agents.db"))
	})
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m := session.Meta{ID: "s1", Agent: "a", Owner: "o", Status: session.StatusReady, Created: time.Unix(1, 0).UTC(), Updated: time.Unix(1, 0).UTC()}
	if err := s.CreateSession(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	// Reads and writes share the one connection that holds the database.
	if _, _, err := s.LoadSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	other, err := Open(ctx, Memory)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.GetMeta(ctx, "s1"); err == nil {
		t.Fatal("two in-memory stores share a database")
	}
}

func TestOpenRejectsParameters(t *testing.T) {
	for _, path := range []string{"", filepath.Join(t.TempDir(), "x.db?_pragma=foreign_keys(0)")} {
		if s, err := Open(context.Background(), path); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error", path)
		}
	}
}

func TestPragmas(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"synchronous", "1"}, // NORMAL
		{"busy_timeout", "5000"},
	}
	for _, tc := range tests {
		var got string
		if err := s.write.Get(&got, "PRAGMA "+tc.pragma); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("PRAGMA %s = %s, want %s", tc.pragma, got, tc.want)
		}
	}
}

// TestOpenTurnsARollbackJournalDatabaseToWAL: the reader pool connects
// while the writer sets the journal mode, and a database in another mode
// (made by the sqlite3 shell, or put back from a backup) still opens, in
// WAL mode, reads and writes.
func TestOpenTurnsARollbackJournalDatabaseToWAL(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agents.db")
	for i := range 20 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		var mode string
		if err := s.write.Get(&mode, "PRAGMA journal_mode"); err != nil || mode != "wal" {
			t.Fatalf("open %d: journal_mode = %q, %v; want wal", i, mode, err)
		}
		id := fmt.Sprintf("s%d", i)
		meta := session.Meta{ID: id, Agent: "a", Owner: "o", Status: session.StatusReady}
		if err := s.CreateSession(ctx, meta, nil); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if _, err := s.GetMeta(ctx, id); err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		shell := sqlx.MustOpen("sqlite", path)
		if _, err := shell.Exec("PRAGMA journal_mode=DELETE"); err != nil {
			t.Fatal(err)
		}
		shell.Close()
	}
}

func TestMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agents.db")
	for range 3 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := store.Migrations("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	db := sqlx.MustOpen("sqlite", path)
	defer db.Close()
	var versions []int
	if err := db.Select(&versions, `SELECT version FROM schema_migrations ORDER BY version`); err != nil {
		t.Fatal(err)
	}
	if len(versions) != len(ms) {
		t.Fatalf("schema_migrations has %v, want one row for each of %d migrations", versions, len(ms))
	}
	for i, m := range ms {
		if versions[i] != m.Version {
			t.Fatalf("schema_migrations has %v, want the versions of %v", versions, ms)
		}
	}

	// A database migrated by a newer binary is refused.
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied) VALUES (9999, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(ctx, path); err == nil {
		s.Close()
		t.Fatal("opened a database with a newer schema")
	}
}

// TestAnotherWriterOnTheFile writes through the store while another
// connection to the file writes at once, as the sqlite3 shell or a backup
// would (a second agents process is refused, see lock.go): busy_timeout
// and IMMEDIATE transactions must turn the contention into waiting, not
// errors.
func TestAnotherWriterOnTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agents.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`CREATE TABLE scratch (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const n = 40
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		for j := range n {
			created := time.Unix(int64(j), 0).UTC()
			m := session.Meta{ID: time.Duration(j).String(), Agent: "a", Owner: "o",
				Status: session.StatusReady, Created: created, Updated: created}
			if err := s.CreateSession(ctx, m, nil); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	})
	wg.Go(func() {
		for j := range n {
			tx, err := other.BeginTx(ctx, nil)
			if err == nil {
				_, err = tx.Exec(`INSERT INTO scratch (n) VALUES (?)`, j)
				if err == nil {
					err = tx.Commit()
				} else {
					_ = tx.Rollback()
				}
			}
			if err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	})
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := s.ListSessions(ctx, store.ListFilter{PageSize: store.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("listed %d sessions, want %d", len(got), n)
	}
}

func TestMigrationDialectsMatch(t *testing.T) {
	lite, err := store.Migrations("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := store.Migrations("postgres")
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) != len(pg) {
		t.Fatalf("%d sqlite migrations but %d postgres ones", len(lite), len(pg))
	}
	for i := range lite {
		if lite[i].Name != pg[i].Name {
			t.Errorf("migration %d is %s for sqlite but %s for postgres", i, lite[i].Name, pg[i].Name)
		}
	}
}

func TestMigration13RecordsPastModelCalls(t *testing.T) {
	db, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	storetest.MigrationRecordsPastModelCalls(t, db, "sqlite")
}

func TestMigration17TimesDeliveredAttempts(t *testing.T) {
	db, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	storetest.MigrationTimesDeliveredAttempts(t, db, "sqlite")
}

// TestMigration14KeepsTheEventLog: migration 14 copies the event log
// with its seqs, and the next event is positioned after the largest,
// also when older events were pruned.
func TestMigration14KeepsTheEventLog(t *testing.T) {
	ctx := context.Background()
	db, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	ms, err := store.Migrations("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	for _, m := range ms {
		if m.Version < 14 {
			exec(m.SQL)
		}
	}
	exec(`INSERT INTO events (session_id, owner, kind, time, body) VALUES
		('s', 'o', 'a', 1, x'01'), ('s', 'o', 'b', 2, x'02'), ('', '', 'c', 3, x'03'), ('t', 'p', 'd', 4, x'0404')`)
	exec(`DELETE FROM events WHERE seq < 3`)
	for _, m := range ms {
		if m.Version == 14 {
			exec(m.SQL)
		}
	}
	exec(`INSERT INTO events (session_id, owner, kind, time, body) VALUES ('t', 'p', 'e', 5, x'05')`)
	type event struct {
		Seq       int64  `db:"seq"`
		SessionID string `db:"session_id"`
		Owner     string `db:"owner"`
		Kind      string `db:"kind"`
		Time      int64  `db:"time"`
		Body      []byte `db:"body"`
	}
	var got []event
	if err := db.SelectContext(ctx, &got, `SELECT seq, session_id, owner, kind, time, body FROM events ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	want := []event{{3, "", "", "c", 3, []byte{3}}, {4, "t", "p", "d", 4, []byte{4, 4}}, {5, "t", "p", "e", 5, []byte{5}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events after migration 14:\n got %+v\nwant %+v", got, want)
	}
	var counters int
	if err := db.GetContext(ctx, &counters, `SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'events'`); err != nil {
		t.Fatal(err)
	}
	if counters != 0 {
		t.Fatal("the events' AUTOINCREMENT counter is still there")
	}
}
