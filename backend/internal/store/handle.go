package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// WithTx runs fn in a transaction on db. It commits when fn returns nil and
// rolls back when fn fails or panics, so fn never has to clean up. fn runs
// prepared statements with tx.StmtxContext and must not use db itself: the
// writer pool has one connection, which the transaction holds.
func WithTx(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) (err error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// The rollback error is dropped: the cause is fn's error (or
			// its panic), and a failed rollback leaves nothing committed.
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	return nil
}
