package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
)

// The event log. Positions are the log's seq, never reused, and become
// visible in seq order, so a reader that has seen seq n has seen every
// event up to n. SQLite's one writer gives them as it appends, in commit
// order. On PostgreSQL, where several servers commit at once with no lock
// between them, events are appended without one and numbered after their
// commit (number_events, migration 0010): in the order of their
// transaction ids, once every transaction before theirs has ended.

// EventLog reads and trims the log.
type EventLog interface {
	// EventsAfter returns up to limit events with a seq above after that
	// match f, oldest first.
	EventsAfter(ctx context.Context, f EventFilter, after uint64, limit int) ([]Event, error)
	// EventBounds returns the oldest seq still in the log and the newest
	// one; both are 0 when the log is empty.
	EventBounds(ctx context.Context) (oldest, newest uint64, err error)
	// NumberEvents gives positions to committed events that have none yet
	// and may have one (a no-op where seqs are given on append), and
	// reports whether any event is still waiting for its position: one
	// whose commit could not wait for it, or whose server stopped between
	// its commit and its numbering, or one behind a transaction still
	// running.
	NumberEvents(ctx context.Context) (pending bool, err error)
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
// (the rowid, one writer), so the last insert id gives them all and
// no row has to come back; where positions are given after the commit,
// the rows' ids come back with RETURNING, for positionCommitted.
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
	for start := 0; start < len(evs); start += eventBatch {
		batch := evs[start:min(start+eventBatch, len(evs))]
		args := make([]any, 0, len(batch)*eventWidth)
		for _, e := range batch {
			args = append(args, e.SessionID, e.Owner, e.Kind, nanos(e.Time), e.Body)
		}
		stmt := s.st.appendEvents[len(batch)-1].in(ctx, tx)
		if s.dialect.PositionsAfterCommit {
			var ids []int64
			if err := stmt.SelectContext(ctx, &ids, args...); err != nil {
				return s.translate(err, nil, "append events")
			}
			slices.Sort(ids)
			for i := range batch {
				batch[i].id = ids[i]
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

// appendEventsSQL is the INSERT of n events.
func (d Dialect) appendEventsSQL(n int) string {
	q := insertSQL(sqlAppendEvents, eventWidth, n)
	if d.PositionsAfterCommit {
		q += " RETURNING id"
	}
	return q
}

// How long a commit waits for its events' positions (positionCommitted):
// the transactions that began before it must end first, which takes about
// one commit of theirs. Past it the commit returns without them, and the
// events reach readers from the log once they are numbered. Meanwhile it
// looks whether they have them, which costs a read: the server whose
// commit held them back numbers them as it numbers its own. It numbers
// them itself only every renumberAfter, for a transaction that numbers
// nothing (a lease's renewal, say).
const (
	positionWait      = 50 * time.Millisecond
	positionFirstWait = 200 * time.Microsecond
	positionMaxWait   = 5 * time.Millisecond
	renumberAfter     = 5 * time.Millisecond
)

// positionCommitted gives the events of the changes that committed (out[i]
// nil) their seqs, numbering every event that may have one. Whatever goes
// wrong here leaves the changes committed: an event without its seq (0) is
// stored all the same, and numbered by the next call of anyone's.
func (s *SQL) positionCommitted(changes []*Change, out []error) {
	var evs []*Event
	for i, c := range changes {
		if out[i] == nil {
			evs = appendEventsOf(evs, c)
		}
	}
	if len(evs) == 0 {
		return
	}
	ids := make([]int64, len(evs))
	byID := make(map[int64]*Event, len(evs))
	for i, e := range evs {
		ids[i] = e.id
		byID[e.id] = e
	}
	ctx := context.Background()
	start := time.Now()
	deadline, numbered := start.Add(positionWait), start
	missing, err := s.numberEvents(ctx, s.st.numberEvents, ids, byID)
	for wait := positionFirstWait; err == nil && missing > 0; wait = min(2*wait, positionMaxWait) {
		if time.Now().Add(wait).After(deadline) {
			return
		}
		time.Sleep(wait)
		if now := time.Now(); now.Sub(numbered) >= renumberAfter || now.Add(wait).After(deadline) {
			numbered = now
			missing, err = s.numberEvents(ctx, s.st.numberEvents, ids, byID)
		} else {
			missing, err = s.numberEvents(ctx, s.st.eventSeqs, ids, byID)
		}
	}
}

// numberEvents runs stmt, number_events or a read of the seqs, for the
// events byID holds (ids their keys) and gives each the seq it has; it
// returns how many have none yet.
func (s *SQL) numberEvents(ctx context.Context, stmt *readStmt, ids []int64, byID map[int64]*Event) (missing int, err error) {
	var rows []struct {
		ID  int64         `db:"id"`
		Seq sql.NullInt64 `db:"seq"`
	}
	if err := stmt.SelectContext(ctx, &rows, ids); err != nil {
		return 0, s.translate(err, nil, "number events")
	}
	missing = len(ids)
	for _, r := range rows {
		if e := byID[r.ID]; e != nil && r.Seq.Valid {
			e.Seq = uint64(r.Seq.Int64)
			missing--
		}
	}
	return missing, nil
}

// NumberEvents implements EventLog.
func (s *SQL) NumberEvents(ctx context.Context) (pending bool, err error) {
	if !s.dialect.PositionsAfterCommit {
		return false, nil
	}
	if _, err := s.numberEvents(ctx, s.st.numberEvents, []int64{}, nil); err != nil {
		return true, err
	}
	if err := s.st.eventsPending.GetContext(ctx, &pending); err != nil {
		return true, s.translate(err, nil, "look for events waiting for a position")
	}
	return pending, nil
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

// Numbering (PostgreSQL only, its migration 0010).
const (
	sqlNumberEvents  = `SELECT id, seq FROM number_events($1)`
	sqlEventSeqs     = `SELECT id, seq FROM events WHERE id = ANY ($1)`
	sqlEventsPending = `SELECT EXISTS (SELECT 1 FROM events WHERE seq IS NULL)`
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
	// Never the newest event: it carries the position on, and on SQLite
	// it is what keeps a seq from being given twice (the next is one
	// more than the largest; its migration 0014).
	cut = min(max(cut, byTime), int64(newest))
	// Nor one an enabled webhook may still have to be sent: the
	// webhooks' fan-out has not read it yet (see FanOut).
	var fanned []int64
	if err := s.read.SelectContext(ctx, &fanned, `SELECT seq FROM webhook_cursor WHERE EXISTS (SELECT 1 FROM webhooks WHERE enabled)`); err != nil {
		return 0, s.translate(err, nil, "read the webhook cursor")
	}
	if len(fanned) > 0 {
		cut = min(cut, fanned[0]+1)
	}
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
