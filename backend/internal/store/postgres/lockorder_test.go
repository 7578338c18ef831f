package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
)

// TestGroupCommitTakesTheEventLockLast writes a group in which one change
// fails, so the group is written again change by change, while another
// server's transaction holds a row of the group and then waits for the
// event log's lock. The event lock must be taken after every row lock of
// the transaction: a group that took it with its first change's events,
// then waited for the other's row, would deadlock with it.
func TestGroupCommitTakesTheEventLockLast(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Unix(1700000000, 0).UTC()
	metas := map[string]session.Meta{}
	for _, id := range []string{"x", "y"} {
		metas[id] = session.Meta{ID: id, Agent: "a", Owner: "o", Status: session.StatusReady, Created: now, Updated: now}
		if err := s.CreateSession(ctx, metas[id], nil); err != nil {
			t.Fatal(err)
		}
	}

	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `UPDATE sessions SET updated = updated WHERE id = 'x'`); err != nil {
		t.Fatal(err)
	}

	change := func(id string) *store.Change {
		m := metas[id]
		m.Status = session.StatusRunning
		return &store.Change{Meta: &m, Events: []store.Event{{SessionID: id, Owner: "o", Kind: "session.status", Time: now, Body: []byte(id)}}}
	}
	missing := session.Meta{ID: "missing", Agent: "a", Owner: "o", Status: session.StatusRunning, Created: now, Updated: now}
	done := make(chan []error, 1)
	go func() {
		done <- s.CommitAll(ctx, []*store.Change{{Meta: &missing}, change("y"), change("x")})
	}()
	waitForRowLock(t, other)
	// The other transaction now wants the event lock, as a commit of
	// another server does after its rows.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, postgres.EventLogLockKey); err != nil {
		t.Fatalf("the other transaction's event lock: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var got []error
	select {
	case got = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the group commit did not finish")
	}
	if errs.CodeOf(got[0]) != store.CodeUnknownSession || got[1] != nil || got[2] != nil {
		t.Fatalf("group commit: %v, want the missing session's change alone to fail", got)
	}
	for _, id := range []string{"x", "y"} {
		if m, err := s.GetMeta(ctx, id); err != nil || m.Status != session.StatusRunning {
			t.Fatalf("%s after the group: %+v %v", id, m, err)
		}
	}
}

// waitForRowLock waits until a backend waits for a row lock: the group
// commit, for the row the other transaction holds.
func waitForRowLock(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := admin.QueryRow(context.Background(), `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the group commit never waited for the row")
}

// TestLeaseRenewalsAndFencedCommitsDoNotDeadlock renews two leases, x then
// y, while another server's fenced commit holds y's lease row (a fence's
// share lock) and then wants x's: a renewal that kept each lease it
// renewed locked until it had renewed them all would hold x, wait for y,
// and deadlock with the commit. Each renewal commits on its own.
func TestLeaseRenewalsAndFencedCommitsDoNotDeadlock(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	var leases []store.Lease
	for _, id := range []string{"x", "y"} {
		m := session.Meta{ID: id, Agent: "a", Owner: "o", Status: session.StatusReady, Created: now, Updated: now}
		if err := s.CreateSession(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
		l, err := s.AcquireLease(ctx, id, "h1", now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}

	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	fence := `SELECT 1 FROM run_leases WHERE session_id = $1 FOR SHARE`
	if _, err := tx.Exec(ctx, fence, "y"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.RenewLeases(ctx, "h1", leases, now, time.Minute)
		done <- err
	}()
	waitForRowLock(t, other)
	if _, err := tx.Exec(ctx, fence, "x"); err != nil {
		t.Fatalf("the fenced commit's second lease: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("renew: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the renewal did not finish")
	}
}
