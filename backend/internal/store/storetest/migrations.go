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
	ms, err := store.Migrations(dialect)
	if err != nil {
		t.Fatal(err)
	}
	var thirteen *store.Migration
	for _, m := range ms {
		switch {
		case m.Version == 13:
			thirteen = &m
		case m.Version < 13:
			if _, err := db.ExecContext(ctx, m.SQL); err != nil {
				t.Fatalf("migration %s: %v", m.Name, err)
			}
		}
	}
	if thirteen == nil {
		t.Fatal("no migration 13")
	}
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
