package storetest

import (
	"context"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/store"
)

// MigrationRecordsPastModelCalls runs dialect's migrations up to 12 on
// the empty database db, stores a session with an answer, a summary and a
// user turn, then runs migration 13: the answer and the summary become
// model calls of the usage series, at their turns' times, and the user
// turn none.
func MigrationRecordsPastModelCalls(t *testing.T, db *sqlx.DB, dialect string) {
	t.Helper()
	ctx := context.Background()
	thirteen := migrateUpTo(t, db, dialect, 13)
	for _, q := range []string{
		`INSERT INTO sessions (id, agent, owner, status, created, updated) VALUES ('s', 'coder', 'alice', 'ready', 100, 400)`,
		`INSERT INTO turns (session_id, idx, created, payload) VALUES
			('s', 0, 100, '{"user":{"text":"hi"}}'),
			('s', 1, 200, '{"llm":{"text":"hello","model":"small","usage":{"prompt":10,"completion":3,"cost":70}}}'),
			('s', 2, 300, '{"llm":{"text":"unpriced","usage":{"prompt":4}}}'),
			('s', 3, 400, '{"compaction":{"reason":"window","model":"large","usage":{"prompt":50,"completion":5,"cost":9},"tokens_before":60,"tokens_after":5}}')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.ExecContext(ctx, thirteen.SQL); err != nil {
		t.Fatalf("migration 13: %v", err)
	}
	type call struct {
		At         int64  `db:"at"`
		Owner      string `db:"owner"`
		Agent      string `db:"agent"`
		Model      string `db:"model"`
		SessionID  string `db:"session_id"`
		Prompt     int64  `db:"prompt"`
		Completion int64  `db:"completion"`
		Cost       int64  `db:"cost"`
	}
	var got []call
	if err := db.SelectContext(ctx, &got, `SELECT at, owner, agent, model, session_id, prompt, completion, cost FROM model_calls ORDER BY at`); err != nil {
		t.Fatal(err)
	}
	equal(t, "model calls", got, []call{
		{200, "alice", "coder", "small", "s", 10, 3, 70},
		{300, "alice", "coder", "", "s", 4, 0, 0},
		{400, "alice", "coder", "large", "s", 50, 5, 9},
	})
}

// migrateUpTo runs dialect's migrations before version on the empty
// database db and returns migration version, for a test to run once it
// stored what the migration changes.
func migrateUpTo(t *testing.T, db *sqlx.DB, dialect string, version int) store.Migration {
	t.Helper()
	ms, err := store.Migrations(dialect)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		switch {
		case m.Version == version:
			return m
		case m.Version < version:
			if _, err := db.ExecContext(context.Background(), m.SQL); err != nil {
				t.Fatalf("migration %s: %v", m.Name, err)
			}
		}
	}
	t.Fatalf("no migration %d", version)
	return store.Migration{}
}

// MigrationTimesDeliveredAttempts runs dialect's migrations up to 16 on
// the empty database db, stores a delivered, a pending and a failed
// webhook delivery, then runs migration 17: the delivered one was last
// tried when it was delivered; the others' attempts were not timed and
// keep no time.
func MigrationTimesDeliveredAttempts(t *testing.T, db *sqlx.DB, dialect string) {
	t.Helper()
	ctx := context.Background()
	seventeen := migrateUpTo(t, db, dialect, 17)
	if _, err := db.ExecContext(ctx, `INSERT INTO webhooks (id, owner, url, events, secret, after_seq, created, updated)
		VALUES ('wh', 'alice', 'https://example.com/', '[]', 's', 0, 100, 100)`); err != nil {
		t.Fatal(err)
	}
	insert := db.Rebind(`INSERT INTO webhook_deliveries (id, webhook_id, seq, kind, session_id, body, status, attempts, next_attempt, created, delivered)
		VALUES (?, 'wh', ?, 'run.stopped', 's', ?, ?, ?, ?, ?, ?)`)
	for _, d := range []struct {
		id                    string
		seq                   int
		status                string
		attempts              int
		next, created, landed int64
	}{
		{"msg_delivered", 1, "delivered", 2, 0, 100, 500},
		{"msg_pending", 2, "pending", 1, 900, 200, 0},
		{"msg_failed", 3, "failed", 9, 0, 300, 0},
	} {
		if _, err := db.ExecContext(ctx, insert, d.id, d.seq, []byte("{}"), d.status, d.attempts, d.next, d.created, d.landed); err != nil {
			t.Fatalf("queue %s: %v", d.id, err)
		}
	}
	if _, err := db.ExecContext(ctx, seventeen.SQL); err != nil {
		t.Fatalf("migration 17: %v", err)
	}
	type delivery struct {
		ID          string `db:"id"`
		LastAttempt int64  `db:"last_attempt"`
	}
	var got []delivery
	if err := db.SelectContext(ctx, &got, `SELECT id, last_attempt FROM webhook_deliveries ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	equal(t, "last attempts", got, []delivery{{"msg_delivered", 500}, {"msg_pending", 0}, {"msg_failed", 0}})
}
