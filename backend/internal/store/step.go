package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
)

// CommitStep implements Sessions: it is the Commit of a step's parts.
func (s *SQL) CommitStep(ctx context.Context, c StepCommit) error {
	return s.Commit(ctx, &Change{Meta: &c.Meta, NewTurns: c.NewTurns, DeliveredMail: c.DeliveredMail, NewDeferred: c.NewDeferred})
}

// sqlCommitMeta updates the metadata only if the session still has the
// turns the step started from: it is the guard against a second writer.
const sqlCommitMeta = `UPDATE sessions SET ` + metaSet + `, turn_count = ?
	WHERE id = ? AND turn_count = ?`

// turnConflict explains why the guarded update matched no row: the session
// is gone, or its history is not where the step thinks it is. It runs only
// after a failed commit, so its query is not prepared.
func (s *SQL) turnConflict(ctx context.Context, tx *sqlx.Tx, id string, base int) error {
	var count int
	err := tx.GetContext(ctx, &count, tx.Rebind(`SELECT turn_count FROM sessions WHERE id = ?`), id)
	if err != nil {
		return s.translate(err, unknownSession(id), "commit step of %s", id)
	}
	return errs.Conflict(errs.CodeTurnConflict, "session %s has %d turns; the step appends at %d", id, count, base)
}

// sqlDeliver marks mail delivered; its IN list makes its text vary with the
// number of ids. sqlDeliverOne does the same for one id, the usual case,
// with a fixed text, so it is prepared.
const (
	sqlDeliver = `UPDATE mail SET delivered = ?
		WHERE session_id = ? AND delivered IS NULL AND id IN (?)`
	sqlDeliverOne = `UPDATE mail SET delivered = ?
		WHERE session_id = ? AND delivered IS NULL AND id = ?`
)

// deliverAll marks every id delivered or fails, so the transaction rolls
// back and the mail stays pending: a commit never folds mail twice.
func (s *SQL) deliverAll(ctx context.Context, tx *sqlx.Tx, sessionID string, ids []string, at int64) error {
	var res sql.Result
	var err error
	switch len(ids) {
	case 0:
		return nil
	case 1:
		res, err = s.st.deliverOne.in(ctx, tx).ExecContext(ctx, at, sessionID, ids[0])
	default:
		q, args, inErr := sqlx.In(sqlDeliver, at, sessionID, ids)
		if inErr != nil {
			return fmt.Errorf("deliver mail: %w", inErr)
		}
		res, err = tx.ExecContext(ctx, tx.Rebind(q), args...)
	}
	if err != nil {
		return s.translate(err, nil, "deliver mail to %s", sessionID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("deliver mail to %s: %w", sessionID, err)
	}
	if int(n) == len(ids) {
		return nil
	}
	// Something was not deliverable: find out what, for the message.
	q, args, err := sqlx.In(`SELECT id FROM mail WHERE session_id = ? AND id IN (?)`, sessionID, ids)
	if err != nil {
		return fmt.Errorf("deliver mail: %w", err)
	}
	var known []string
	if err := tx.SelectContext(ctx, &known, tx.Rebind(q), args...); err != nil {
		return s.translate(err, nil, "deliver mail to %s", sessionID)
	}
	for _, id := range ids {
		if !slices.Contains(known, id) {
			return errs.NotFound(errs.CodeUnknownMail, "session %s has no mail %s", sessionID, id)
		}
	}
	return errs.FailedPrecondition(errs.CodeMailDelivered, "mail to session %s was already delivered", sessionID)
}

// dedupe drops repeated ids, keeping the first of each.
func dedupe(ids []string) []string {
	if len(ids) < 2 {
		return ids
	}
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
