package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
)

// Each lease operation is one statement whose WHERE clause is the whole
// rule, so two servers racing for a lease are ordered by the database and
// exactly one wins.

// AcquireLease implements Leases.
func (s *SQL) AcquireLease(ctx context.Context, sessionID, holder string, now time.Time, ttl time.Duration) error {
	res, err := s.st.acquireLease.ExecContext(ctx, sessionID, holder, nanos(now.Add(ttl)), nanos(now))
	if err != nil {
		return s.translate(err, unknownSession(sessionID), "acquire lease on %s", sessionID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("acquire lease on %s: %w", sessionID, err)
	}
	if n == 0 {
		return errs.Conflict(CodeLeaseHeld, "session %s is run by another server", sessionID)
	}
	return nil
}

const sqlAcquireLease = `INSERT INTO run_leases (session_id, holder, expires) VALUES (?, ?, ?)
	ON CONFLICT (session_id) DO UPDATE
	SET holder = excluded.holder, expires = excluded.expires
	WHERE run_leases.holder = excluded.holder OR run_leases.expires <= ?`

// RenewLease implements Leases. An expired lease is not renewed even when
// nobody took it: its holder may already have been presumed dead, so it
// must acquire again and learn whether it still may run.
func (s *SQL) RenewLease(ctx context.Context, sessionID, holder string, now time.Time, ttl time.Duration) error {
	res, err := s.st.renewLease.ExecContext(ctx, nanos(now.Add(ttl)), sessionID, holder, nanos(now))
	if err != nil {
		return s.translate(err, nil, "renew lease on %s", sessionID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("renew lease on %s: %w", sessionID, err)
	}
	if n == 0 {
		return errs.FailedPrecondition(CodeLeaseLost, "lease on session %s was lost", sessionID)
	}
	return nil
}

const sqlRenewLease = `UPDATE run_leases SET expires = ?
	WHERE session_id = ? AND holder = ? AND expires > ?`

// ReleaseLease implements Leases.
func (s *SQL) ReleaseLease(ctx context.Context, sessionID, holder string) error {
	_, err := s.st.releaseLease.ExecContext(ctx, sessionID, holder)
	return s.translate(err, nil, "release lease on %s", sessionID)
}

const sqlReleaseLease = `DELETE FROM run_leases WHERE session_id = ? AND holder = ?`
