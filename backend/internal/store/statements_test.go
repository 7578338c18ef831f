package store

import (
	"context"
	"testing"

	"github.com/agents-os/agents/backend/internal/session"
)

// TestReadStatementsArePreparedOnFirstUse: opening the store compiles the
// writer's statements only; a read compiles its own the first time it
// runs, one that failed to (its caller gave up) is compiled by the next,
// and CheckStatements compiles the rest.
func TestReadStatementsArePreparedOnFirstUse(t *testing.T) {
	ctx := context.Background()
	db := newSQLite(t, "agents.db")
	if err := Migrate(ctx, db, "sqlite"); err != nil {
		t.Fatal(err)
	}
	s, err := NewSQL(ctx, db, db, Dialect{Name: "sqlite", Classify: func(error) Violation { return ViolationNone }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prepared := func() (n int) {
		for _, r := range s.st.reads {
			if r.stmt.Load() != nil {
				n++
			}
		}
		return n
	}
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
