package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
)

// The event log. Positions are the log's seq: assigned by the database on
// insert, never reused, and committed in seq order (one writer on SQLite;
// an advisory lock around event inserts on PostgreSQL), so a reader that
// has seen seq n has seen every event up to n.

// EventLog reads and trims the log.
type EventLog interface {
	// EventsAfter returns up to limit events with a seq above after that
	// match f, oldest first.
	EventsAfter(ctx context.Context, f EventFilter, after uint64, limit int) ([]Event, error)
	// EventBounds returns the oldest seq still in the log and the newest
	// one; both are 0 when the log is empty.
	EventBounds(ctx context.Context) (oldest, newest uint64, err error)
	// PruneEvents removes events older than before and events beyond the
	// newest keep, but never the newest event, which carries the log's
	// position into the next start. It returns how many it removed. It
	// removes from the oldest end only, so the oldest seq never goes
	// down: a replay relies on that to read the events and the bounds
	// separately while the log is pruned (events.Log).
	PruneEvents(ctx context.Context, before time.Time, keep int) (int, error)
}

// EventFilter selects events by scope: one session, one owner (with the
// server-wide events, which have neither), or all of them.
type EventFilter struct {
	SessionID string
	Owner     string
	All       bool
}

// Events are appended up to eventBatch at a time, by one prepared INSERT
// per batch size. In SQLite the rows of one INSERT get consecutive seqs
// (AUTOINCREMENT, one writer), so the last insert id gives them all and
// no row has to come back; a dialect with ReturningSeq reads them back
// with RETURNING instead.
const (
	sqlAppendEvents = `INSERT INTO events (session_id, owner, kind, time, body) VALUES`
	eventWidth      = 5
	eventBatch      = 16
)

// appendEvents appends evs in order and gives each its seq.
func (s *SQL) appendEvents(ctx context.Context, tx *sqlx.Tx, evs []*Event) error {
	if len(evs) == 0 {
		return nil
	}
	if s.dialect.LockEvents != "" {
		if _, err := tx.ExecContext(ctx, s.dialect.LockEvents); err != nil {
			return s.translate(err, nil, "lock the event log")
		}
	}
	for start := 0; start < len(evs); start += eventBatch {
		batch := evs[start:min(start+eventBatch, len(evs))]
		args := make([]any, 0, len(batch)*eventWidth)
		for _, e := range batch {
			args = append(args, e.SessionID, e.Owner, e.Kind, nanos(e.Time), e.Body)
		}
		stmt := s.st.appendEvents[len(batch)-1].in(ctx, tx)
		if s.dialect.ReturningSeq {
			var seqs []int64
			if err := stmt.SelectContext(ctx, &seqs, args...); err != nil {
				return s.translate(err, nil, "append events")
			}
			slices.Sort(seqs)
			for i := range batch {
				batch[i].Seq = uint64(seqs[i])
			}
			continue
		}
		res, err := stmt.ExecContext(ctx, args...)
		if err != nil {
			return s.translate(err, nil, "append events")
		}
		last, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("append events: %w", err)
		}
		for i := range batch {
			batch[i].Seq = uint64(last - int64(len(batch)-1-i))
		}
	}
	return nil
}

// appendEventsSQL is the INSERT of n events. With NotifyEvents it also
// notifies the newest seq it appended, so appending more than eventBatch
// events notifies once per batch, each newer than the one before.
func (d Dialect) appendEventsSQL(n int) string {
	q := insertSQL(sqlAppendEvents, eventWidth, n)
	if d.ReturningSeq {
		q += " RETURNING seq"
	}
	if d.NotifyEvents != "" {
		q = `WITH appended AS (` + q + `)
			SELECT seq FROM appended,
				(SELECT pg_notify('` + d.NotifyEvents + `', CAST(MAX(seq) AS TEXT)) FROM appended) AS notified`
	}
	return q
}

type eventRow struct {
	Seq       int64  `db:"seq"`
	SessionID string `db:"session_id"`
	Owner     string `db:"owner"`
	Kind      string `db:"kind"`
	Time      int64  `db:"time"`
	Body      []byte `db:"body"`
}

// EventsAfter implements EventLog.
func (s *SQL) EventsAfter(ctx context.Context, f EventFilter, after uint64, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = 1000
	}
	var rows []eventRow
	var err error
	switch {
	case f.All:
		err = s.st.eventsAll.SelectContext(ctx, &rows, int64(after), limit)
	case f.SessionID != "":
		err = s.st.eventsSession.SelectContext(ctx, &rows, f.SessionID, int64(after), limit)
	default:
		err = s.st.eventsOwner.SelectContext(ctx, &rows, f.Owner, int64(after), limit)
	}
	if err != nil {
		return nil, s.translate(err, nil, "read events after %d", after)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = Event{Seq: uint64(r.Seq), SessionID: r.SessionID, Owner: r.Owner, Kind: r.Kind, Time: fromNanos(r.Time), Body: r.Body}
	}
	return out, nil
}

const (
	eventColumns     = `seq, session_id, owner, kind, time, body`
	sqlEventsAll     = `SELECT ` + eventColumns + ` FROM events WHERE seq > ? ORDER BY seq LIMIT ?`
	sqlEventsSession = `SELECT ` + eventColumns + ` FROM events
		WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`
	// An owner's events and the server-wide ones (no owner, no session).
	sqlEventsOwner = `SELECT ` + eventColumns + ` FROM events
		WHERE (owner = ? OR (owner = '' AND session_id = '')) AND seq > ? ORDER BY seq LIMIT ?`
)

// EventBounds implements EventLog.
func (s *SQL) EventBounds(ctx context.Context) (uint64, uint64, error) {
	var b struct {
		Oldest int64 `db:"oldest"`
		Newest int64 `db:"newest"`
	}
	if err := s.read.GetContext(ctx, &b, `SELECT COALESCE(MIN(seq), 0) AS oldest, COALESCE(MAX(seq), 0) AS newest FROM events`); err != nil {
		return 0, 0, s.translate(err, nil, "read event log bounds")
	}
	return uint64(b.Oldest), uint64(b.Newest), nil
}

// pruneBatch bounds the rows one DELETE of PruneEvents removes, so the
// writer is never held long.
const pruneBatch = 5000

// PruneEvents implements EventLog. Events are in seq order and, give or
// take clock steps, in time order too, so the cut is found by a scan from
// the oldest event that stops at the first one to keep, and the delete is
// a range of the primary key, in batches.
func (s *SQL) PruneEvents(ctx context.Context, before time.Time, keep int) (int, error) {
	oldest, newest, err := s.EventBounds(ctx)
	if err != nil || newest == 0 {
		return 0, err
	}
	cut := int64(0) // every seq below cut goes
	if keep > 0 {
		cut = int64(newest) - int64(keep) + 1
	}
	var recent []int64
	if err := s.read.SelectContext(ctx, &recent, s.read.Rebind(`SELECT seq FROM events WHERE seq >= ? AND time >= ? ORDER BY seq LIMIT 1`), int64(oldest), nanos(before)); err != nil {
		return 0, s.translate(err, nil, "find events to prune")
	}
	byTime := int64(newest)
	if len(recent) > 0 {
		byTime = recent[0]
	}
	// Never the newest event: it carries the position on.
	cut = min(max(cut, byTime), int64(newest))
	removed := 0
	for from := int64(oldest); from < cut; from += pruneBatch {
		res, err := s.write.ExecContext(ctx, s.write.Rebind(`DELETE FROM events WHERE seq < ?`), min(cut, from+pruneBatch))
		if err != nil {
			return removed, s.translate(err, nil, "prune events")
		}
		n, err := res.RowsAffected()
		if err != nil {
			return removed, fmt.Errorf("prune events: %w", err)
		}
		removed += int(n)
	}
	return removed, nil
}
