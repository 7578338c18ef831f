package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

type watchRow struct {
	WatcherID string `db:"watcher_id"`
	TargetID  string `db:"target_id"`
	Expires   int64  `db:"expires"`
}

// PutWatch implements Watches.
func (s *SQL) PutWatch(ctx context.Context, w session.Watch) error {
	_, err := s.st.putWatch.ExecContext(ctx, w.WatcherID, w.TargetID, nanos(w.Expires))
	missing := errs.NotFound(errs.CodeUnknownSession, "unknown session %s or %s", w.WatcherID, w.TargetID)
	return s.translate(err, missing, "put watch %s on %s", w.WatcherID, w.TargetID)
}

const sqlPutWatch = `INSERT INTO watches (watcher_id, target_id, expires) VALUES (?, ?, ?)
	ON CONFLICT (watcher_id, target_id) DO UPDATE SET expires = excluded.expires`

// DeleteWatch implements Watches.
func (s *SQL) DeleteWatch(ctx context.Context, watcherID, targetID string) error {
	_, err := s.st.deleteWatch.ExecContext(ctx, watcherID, targetID)
	return s.translate(err, nil, "delete watch %s on %s", watcherID, targetID)
}

const sqlDeleteWatch = `DELETE FROM watches WHERE watcher_id = ? AND target_id = ?`

// ListWatches implements Watches.
func (s *SQL) ListWatches(ctx context.Context) ([]session.Watch, error) {
	var rows []watchRow
	if err := s.st.listWatches.SelectContext(ctx, &rows); err != nil {
		return nil, s.translate(err, nil, "list watches")
	}
	out := make([]session.Watch, len(rows))
	for i, r := range rows {
		out[i] = session.Watch{WatcherID: r.WatcherID, TargetID: r.TargetID, Expires: fromNanos(r.Expires)}
	}
	return out, nil
}

const sqlListWatches = `SELECT watcher_id, target_id, expires FROM watches ORDER BY watcher_id, target_id`

// WatchersOf implements Watches.
func (s *SQL) WatchersOf(ctx context.Context, targetID string) ([]session.Watch, error) {
	var rows []watchRow
	if err := s.st.watchersOf.SelectContext(ctx, &rows, targetID); err != nil {
		return nil, s.translate(err, nil, "list the watchers of %s", targetID)
	}
	out := make([]session.Watch, len(rows))
	for i, r := range rows {
		out[i] = session.Watch{WatcherID: r.WatcherID, TargetID: r.TargetID, Expires: fromNanos(r.Expires)}
	}
	return out, nil
}

const sqlWatchersOf = `SELECT watcher_id, target_id, expires FROM watches WHERE target_id = ? ORDER BY watcher_id`

// DeleteExpiredWatches implements Watches.
func (s *SQL) DeleteExpiredWatches(ctx context.Context, now time.Time) (int, error) {
	res, err := s.st.deleteExpiredWatches.ExecContext(ctx, nanos(now))
	if err != nil {
		return 0, s.translate(err, nil, "delete expired watches")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete expired watches: %w", err)
	}
	return int(n), nil
}

const sqlDeleteExpiredWatches = `DELETE FROM watches WHERE expires <= ?`
