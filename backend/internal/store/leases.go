package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Each lease operation is one statement whose WHERE clause is the whole
// rule, so two servers racing for a lease are ordered by the database and
// exactly one wins.

// AcquireLease implements Leases.
func (s *SQL) AcquireLease(ctx context.Context, sessionID, holder string, now time.Time, ttl time.Duration) (Lease, error) {
	var l leaseRow
	err := s.st.acquireLease.GetContext(ctx, &l, sessionID, holder, nanos(now.Add(ttl)), nanos(now), nanos(now))
	if errors.Is(err, sql.ErrNoRows) {
		return Lease{}, errs.Conflict(errs.CodeLeaseHeld, "session %s is run by another server", sessionID)
	}
	if err != nil {
		return Lease{}, s.translate(err, unknownSession(sessionID), "acquire lease on %s", sessionID)
	}
	return l.lease(), nil
}

// The epoch grows whenever the lease is taken anew: from nobody (the
// insert starts at 1), from an expired lease, or from another holder. A
// holder taking its own live lease again keeps the epoch, so its fenced
// writes in flight stay valid.
const sqlAcquireLease = `INSERT INTO run_leases (session_id, holder, expires, epoch) VALUES (?, ?, ?, 1)
	ON CONFLICT (session_id) DO UPDATE
	SET holder = excluded.holder, expires = excluded.expires,
		epoch = CASE WHEN run_leases.holder = excluded.holder AND run_leases.expires > ?
			THEN run_leases.epoch ELSE run_leases.epoch + 1 END
	WHERE run_leases.holder = excluded.holder OR run_leases.expires <= ?
	RETURNING session_id, holder, epoch, expires`

// RenewLeases implements Leases: one statement a lease, each committed
// on its own. One transaction for them all would keep every lease it
// renewed locked until the last, while a fenced commit of another server
// share-locks the leases of its group's sessions in its own order: the
// two would deadlock (PostgreSQL detects it and fails one). A renewal that
// holds one row at a time never waits while holding another.
func (s *SQL) RenewLeases(ctx context.Context, holder string, leases []Lease, now time.Time, ttl time.Duration) ([]string, error) {
	var lost []string
	for _, l := range leases {
		res, err := s.st.renewLease.ExecContext(ctx, nanos(now.Add(ttl)), l.SessionID, holder, l.Epoch)
		if err != nil {
			return nil, s.translate(err, nil, "renew lease on %s", l.SessionID)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return nil, fmt.Errorf("renew lease on %s: %w", l.SessionID, err)
		}
		if n == 0 {
			lost = append(lost, l.SessionID)
		}
	}
	return lost, nil
}

const sqlRenewLease = `UPDATE run_leases SET expires = ?
	WHERE session_id = ? AND holder = ? AND epoch = ?`

// ReleaseLease implements Leases.
func (s *SQL) ReleaseLease(ctx context.Context, sessionID, holder string, epoch int64) error {
	_, err := s.st.releaseLease.ExecContext(ctx, sessionID, holder, epoch)
	return s.translate(err, nil, "release lease on %s", sessionID)
}

const sqlReleaseLease = `DELETE FROM run_leases WHERE session_id = ? AND holder = ? AND epoch = ?`

// ExpireLeases implements Leases.
func (s *SQL) ExpireLeases(ctx context.Context, holder string, now time.Time) (int, error) {
	res, err := s.write.ExecContext(ctx, s.write.Rebind(sqlExpireLeases), nanos(now), holder, nanos(now))
	if err != nil {
		return 0, s.translate(err, nil, "expire the leases of %s", holder)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("expire the leases of %s: %w", holder, err)
	}
	return int(n), nil
}

const sqlExpireLeases = `UPDATE run_leases SET expires = ? WHERE holder = ? AND expires > ?`

// GetLease implements Leases.
func (s *SQL) GetLease(ctx context.Context, sessionID string) (Lease, error) {
	var l leaseRow
	err := s.st.getLease.GetContext(ctx, &l, sessionID)
	if err != nil {
		return Lease{}, s.translate(err, errs.NotFound(errs.CodeNoLease, "session %s has no lease", sessionID), "read lease of %s", sessionID)
	}
	return l.lease(), nil
}

const sqlGetLease = `SELECT session_id, holder, epoch, expires FROM run_leases WHERE session_id = ?`

// Orphans implements Leases.
func (s *SQL) Orphans(ctx context.Context, now time.Time, limit int) ([]string, error) {
	var ids []string
	err := s.st.orphans.SelectContext(ctx, &ids, string(session.StatusRunning), string(session.StatusReady), nanos(now), limit)
	if err != nil {
		return nil, s.translate(err, nil, "list sessions without a server")
	}
	return ids, nil
}

const sqlOrphans = `SELECT s.id FROM sessions s
	LEFT JOIN run_leases l ON l.session_id = s.id
	WHERE (s.status = ? OR (s.status = ? AND EXISTS (SELECT 1 FROM mail m WHERE m.session_id = s.id AND m.delivered IS NULL))
			OR EXISTS (SELECT 1 FROM commands c WHERE c.session_id = s.id AND c.done IS NULL))
		AND (l.session_id IS NULL OR l.expires <= ?)
	ORDER BY s.created, s.id
	LIMIT ?`

// checkFence fails a change written under a lease its writer no longer
// holds. On PostgreSQL the lease row stays share-locked until the
// transaction ends, so a server taking the lease over waits for the
// change to commit, and the change cannot commit after the takeover.
func (s *SQL) checkFence(ctx context.Context, tx *sqlx.Tx, f *Fence) error {
	if f == nil {
		return nil
	}
	var n int
	err := s.st.checkFence.in(ctx, tx).GetContext(ctx, &n, f.SessionID, f.Holder, f.Epoch)
	if err != nil {
		return s.translate(err, nil, "check the lease of %s", f.SessionID)
	}
	if n == 0 {
		return errs.FailedPrecondition(errs.CodeLeaseLost, "lease on session %s was lost", f.SessionID)
	}
	return nil
}

// sqlCheckFence counts the lease rows that match; the dialect's share
// lock is appended when the statement is prepared.
const sqlCheckFence = `SELECT COUNT(*) FROM (SELECT 1 FROM run_leases
	WHERE session_id = ? AND holder = ? AND epoch = ?%s) AS fence`

type leaseRow struct {
	SessionID string `db:"session_id"`
	Holder    string `db:"holder"`
	Epoch     int64  `db:"epoch"`
	Expires   int64  `db:"expires"`
}

func (l leaseRow) lease() Lease {
	return Lease{SessionID: l.SessionID, Holder: l.Holder, Epoch: l.Epoch, Expires: fromNanos(l.Expires)}
}
