package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	"github.com/jackc/pgx/v5"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
)

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
	waitForRowLock(t, dsn)
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

// waitForRowLock waits until a backend waits for a row lock. It reads
// on a connection of its own, outside any transaction: inside one,
// pg_stat_activity lists the backends of its first read until the
// transaction ends, and one that connected later is never seen.
func waitForRowLock(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	watch, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	eventually.Within(t, 30*time.Second, "a backend waits for a row", func() bool {
		var n int
		if err := watch.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event IN ('transactionid', 'tuple')`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
}
