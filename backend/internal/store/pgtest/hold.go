package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// HoldEventAppends stops every transaction that appends events, on the
// database admin is connected to, at its append, inside the transaction,
// until release is called: admin takes a lock on the events table that
// lets reads through. It is how tests hold a commit midway, as a
// database under a long lock or a stalled disk would.
func HoldEventAppends(t testing.TB, admin *pgx.Conn) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE events IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Error(err)
		}
	}
}

// AppendWaiter waits, up to 30 s, until a backend waits at its append
// while HoldEventAppends holds it, and returns that backend's pid; with
// more than one waiting, any of them.
func AppendWaiter(t testing.TB, admin *pgx.Conn) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var pids []int
		rows, err := admin.Query(context.Background(), `SELECT pid FROM pg_locks
			WHERE locktype = 'relation' AND relation = 'events'::regclass AND NOT granted`)
		if err == nil {
			pids, err = pgx.CollectRows(rows, pgx.RowTo[int])
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) > 0 {
			return pids[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no commit waited at its append of events")
	return 0
}
