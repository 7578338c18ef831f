package store

import (
	"context"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
)

// TestReadStatementsArePreparedOnFirstUse: opening the store compiles no
// reader statement; a read compiles its own the first time it runs, one that failed to (its caller gave up) is compiled by the next,
// and CheckStatements compiles the rest.
func TestReadStatementsArePreparedOnFirstUse(t *testing.T) {
	ctx := context.Background()
	db := newSQLite(t, "agents.db")
	if err := Migrate(ctx, db, "sqlite"); err != nil {
		t.Fatal(err)
	}
	s := NewSQL(ctx, db, db, testDialect)
	defer s.Close()
	prepared := func() int { return countPrepared(s.st.reads, func(r *readStmt) bool { return r.stmt.Load() != nil }) }
	if n := prepared(); n != 0 {
		t.Errorf("%d read statements prepared at open, want none", n)
	}

	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.GetMeta(gone, "s1"); err == nil {
		t.Fatal("a read with a cancelled context succeeded")
	}
	if n := prepared(); n != 0 {
		t.Errorf("a failed preparation was kept: %d prepared", n)
	}
	if err := s.CreateSession(ctx, session.Meta{ID: "s1", Agent: "a", Owner: "o", Status: session.StatusReady}, nil); err != nil {
		t.Fatal(err)
	}
	if m, err := s.GetMeta(ctx, "s1"); err != nil || m.ID != "s1" {
		t.Fatalf("GetMeta = %+v, %v", m, err)
	}
	if n := prepared(); n != 1 {
		t.Errorf("after one read %d statements prepared, want 1", n)
	}
	if err := s.CheckStatements(ctx); err != nil {
		t.Fatal(err)
	}
	if n := prepared(); n != len(s.st.reads) {
		t.Errorf("after CheckStatements %d of %d prepared", n, len(s.st.reads))
	}
}

var testDialect = Dialect{Name: "sqlite", Classify: func(error) Violation { return ViolationNone }}

// TestWritesDoNotWaitForTheirStatements: the writer's statements are
// prepared after the store opens, and until they are, writes in and out
// of transactions run from the statements' text on the one connection.
func TestWritesDoNotWaitForTheirStatements(t *testing.T) {
	ctx := context.Background()
	db := newSQLite(t, "agents.db")
	if err := Migrate(ctx, db, "sqlite"); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	testHookPrepareWrites = func() { <-release }
	t.Cleanup(func() { testHookPrepareWrites = nil })

	opened := make(chan *SQL, 1)
	go func() { opened <- NewSQL(ctx, db, db, testDialect) }()
	var s *SQL
	select {
	case s = <-opened:
	case <-time.After(10 * time.Second):
		t.Fatal("NewSQL waited for the writer's statements to be prepared")
	}
	defer s.Close()
	prepared := func() int { return countPrepared(s.st.writes, func(w *writeStmt) bool { return w.stmt.Load() != nil }) }
	write := func(id string) {
		t.Helper()
		meta := session.Meta{ID: id, Agent: "a", Owner: "o", Status: session.StatusReady}
		if err := s.CreateSession(ctx, meta, nil); err != nil { // a transaction
			t.Fatal(err)
		}
		if err := s.PutWatch(ctx, session.Watch{WatcherID: id, TargetID: id, Expires: time.Now().Add(time.Hour)}); err != nil { // no transaction
			t.Fatal(err)
		}
		if watchers, err := s.WatchersOf(ctx, id); err != nil || len(watchers) != 1 {
			t.Fatalf("WatchersOf(%s) = %v, %v; want one", id, watchers, err)
		}
	}
	write("s1")
	if n := prepared(); n != 0 {
		t.Fatalf("%d writer statements prepared while the preparation was held back", n)
	}

	close(release)
	if err := s.CheckStatements(ctx); err != nil {
		t.Fatal(err)
	}
	if n := prepared(); n != len(s.st.writes) {
		t.Fatalf("%d of %d writer statements prepared", n, len(s.st.writes))
	}
	write("s2")
}

// countPrepared counts the statements of list that are prepared.
func countPrepared[S any](list []S, prepared func(S) bool) (n int) {
	for _, stmt := range list {
		if prepared(stmt) {
			n++
		}
	}
	return n
}
