package loadgen

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"

	_ "modernc.org/sqlite" // the driver the server uses
)

// Seeded sessions are written straight into the SQLite file while no
// server runs: creating 100,000 sessions through the API would take
// minutes. Each one is a copy of a template session the server itself
// created and ran — its row with a new id and an older creation time, and
// its turns — so the rows are exactly what the server writes. Their ids
// share seedIDPrefix, which no random (version 4) UUID the server makes
// could produce by chance in practice.
const seedIDPrefix = "5eed0000-0000-4000-8000-"

// SeedSessions adds n copies of the newest session in the SQLite file at
// path (which must have one) in one transaction, then checkpoints the
// write-ahead log so the file can be copied alone.
func SeedSessions(ctx context.Context, path string, n int) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	var template string
	var created int64
	err = db.QueryRowContext(ctx, `SELECT id, created FROM sessions ORDER BY created DESC LIMIT 1`).Scan(&template, &created)
	if err != nil {
		return fmt.Errorf("find the template session in %s: %w", path, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Copy i is created i ms before the template, so the template stays
	// the newest and listing order is the ids' order.
	res, err := tx.ExecContext(ctx, `
		WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO sessions (id, agent, owner, title, status, status_reason, parent_id, forked_from,
			turn_count, usage_prompt, usage_completion, usage_cached, usage_reasoning, depth, created, updated)
		SELECT ? || printf('%012x', n.i), t.agent, t.owner, t.title, t.status, t.status_reason, '', '',
			t.turn_count, t.usage_prompt, t.usage_completion, t.usage_cached, t.usage_reasoning, 0,
			t.created - n.i * 1000000, t.updated - n.i * 1000000
		FROM n, sessions t WHERE t.id = ?`, n, seedIDPrefix, template)
	if err != nil {
		return fmt.Errorf("seed %d sessions: %w", n, err)
	}
	if got, err := res.RowsAffected(); err != nil || got != int64(n) {
		return fmt.Errorf("seed %d sessions: %d rows written (%v)", n, got, err)
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO turns (session_id, idx, created, payload)
		SELECT s.id, t.idx, s.created + (t.created - ?), t.payload
		FROM sessions s, turns t
		WHERE s.id >= ? AND s.id < ? AND t.session_id = ?`, created, seedIDPrefix, seedIDPrefix+"g", template)
	if err != nil {
		return fmt.Errorf("seed the turns of %d sessions: %w", n, err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return nil
}

// copyFile copies the SQLite file src to dst (a checkpointed file has no
// write-ahead log to copy with it).
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
