package store

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Handle runs queries; both *sqlx.DB and *sqlx.Tx satisfy it, so the same
// helpers serve inside and outside a transaction.
type Handle interface {
	sqlx.ExtContext
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

var (
	_ Handle = (*sqlx.DB)(nil)
	_ Handle = (*sqlx.Tx)(nil)
)

// WithTx runs fn in a transaction on db. It commits when fn returns nil and
// rolls back when fn fails or panics, so fn never has to clean up.
func WithTx(ctx context.Context, db *sqlx.DB, fn func(tx Handle) error) (err error) {
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
