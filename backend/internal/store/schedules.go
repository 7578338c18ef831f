package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
)

// Schedules holds schedules and their firings. A firing is written by the
// Change that does what it does (the session it starts, the message it
// posts: Change.Firing), so that a firing is stored exactly when its
// effect is; see FiringClaim.
type Schedules interface {
	// CreateSchedule stores a new schedule; a duplicate id is
	// errs.Conflict. (A Change with Schedule does the same in its
	// transaction, with an idempotency record.)
	CreateSchedule(ctx context.Context, sc Schedule) error
	// UpdateSchedule writes every field of a schedule but its owner and
	// creation time; an unknown id is errs.NotFound (unknown_schedule).
	// (A Change with ScheduleChange does the same in its transaction.)
	UpdateSchedule(ctx context.Context, sc Schedule) error
	// GetSchedule returns a schedule with its last firing, errs.NotFound
	// (unknown_schedule) when there is none.
	GetSchedule(ctx context.Context, id string) (Schedule, error)
	// ListSchedules returns the schedules f selects, oldest first, each
	// with its last firing, in one query.
	ListSchedules(ctx context.Context, f ScheduleFilter) ([]Schedule, error)
	// DeleteSchedule removes a schedule and its firings; an unknown id is
	// errs.NotFound (unknown_schedule). (A Change with ScheduleChange does
	// the same in its transaction.)
	DeleteSchedule(ctx context.Context, id string) error
	// DueSchedules returns up to limit enabled schedules whose next time
	// is at or before now, the most overdue first.
	DueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error)
	// NextDue is the earliest next time of the enabled schedules; zero
	// when none will fire.
	NextDue(ctx context.Context) (time.Time, error)
	// AdvanceSchedule moves a schedule's next time from from to to,
	// firing nothing (the times between were missed and are skipped):
	// false when its next time is no longer from (another server
	// advanced it, or the schedule changed).
	AdvanceSchedule(ctx context.Context, id string, from, to time.Time) (bool, error)
	// ListFirings returns a schedule's firings, newest first, at most
	// limit.
	ListFirings(ctx context.Context, scheduleID string, limit int) ([]Firing, error)
}

// Schedule is a stored schedule. Spec is the runner's JSON document; the
// store does not read it.
type Schedule struct {
	ID, Owner string
	// Agent or SessionID is the schedule's target.
	Agent, SessionID string
	Spec             string
	Enabled          bool
	// NextDue is when it fires next; zero when it fires no more.
	NextDue          time.Time
	Created, Updated time.Time
	// Last is the newest firing, nil before the first. GetSchedule and
	// ListSchedules read it; the writes do not look at it.
	Last *Firing
}

// ScheduleChange changes or deletes a schedule in a Change, so the
// schedule.changed event that says so is stored with it. A session
// target is held as CreateSchedule holds it.
type ScheduleChange struct {
	// Update, when set, is written as UpdateSchedule writes it.
	Update *Schedule
	// Delete, when set, is the id of a schedule deleted with its
	// firings, as DeleteSchedule deletes it.
	Delete string
}

// ScheduleFilter selects schedules; zero fields select all.
type ScheduleFilter struct {
	// Owner restricts to one owner; "" lists every owner's.
	Owner     string
	Agent     string
	SessionID string
}

// Firing statuses.
const (
	FiringStarted = "started"
	FiringPosted  = "posted"
	FiringQueued  = "queued"
	FiringSkipped = "skipped"
	FiringFailed  = "failed"
)

// Firing is one firing of a schedule.
type Firing struct {
	ScheduleID string
	// FireTime is the time the firing stands for; a schedule has one
	// firing per FireTime.
	FireTime time.Time
	// Fired is when it was claimed.
	Fired     time.Time
	Status    string
	SessionID string
	Reason    string
	CatchUp   bool
	Manual    bool
	// Outcome is the status the session's run left it in, "" until the
	// run stopped (Finished).
	Outcome       string
	OutcomeReason string
	Finished      time.Time
}

// FiringClaim is a firing claimed by the change that does it. Its row is
// inserted with the change; a second claim of the same (schedule, fire
// time) fails the whole change with errs.Conflict (firing_claimed), on
// one server or on several sharing a database. With Advance, the
// schedule's next time moves in the same change from Advance.From to
// Advance.To, and the change fails the same way unless the next time
// still is From: of two servers that found the schedule due, one fires.
type FiringClaim struct {
	Firing  Firing
	Advance *Advance
}

// Advance moves a schedule's next time.
type Advance struct {
	From, To time.Time
}

// RunOutcome records how a session's run stopped on the firings that
// started it or posted to it and have no outcome yet.
type RunOutcome struct {
	SessionID, Status, Reason string
	At                        time.Time
}

func unknownSchedule(id string) *errs.Error {
	return errs.NotFound(errs.CodeUnknownSchedule, "unknown schedule %s", id)
}

func firingClaimed(f Firing) *errs.Error {
	return errs.Conflict(errs.CodeFiringClaimed, "schedule %s already fired for %s", f.ScheduleID, f.FireTime.Format(time.RFC3339Nano))
}

// scheduleRow is a schedules row.
type scheduleRow struct {
	ID        string `db:"id"`
	Owner     string `db:"owner"`
	Agent     string `db:"agent"`
	SessionID string `db:"session_id"`
	Spec      string `db:"spec"`
	Enabled   bool   `db:"enabled"`
	NextDue   int64  `db:"next_due"`
	Created   int64  `db:"created"`
	Updated   int64  `db:"updated"`
}

func (r scheduleRow) schedule() Schedule {
	sc := Schedule{ID: r.ID, Owner: r.Owner, Agent: r.Agent, SessionID: r.SessionID, Spec: r.Spec,
		Enabled: r.Enabled, Created: fromNanos(r.Created), Updated: fromNanos(r.Updated)}
	if r.NextDue > 0 {
		sc.NextDue = fromNanos(r.NextDue)
	}
	return sc
}

const scheduleColumns = `id, owner, agent, session_id, spec, enabled, next_due, created, updated`

// dueNanos is a next time as stored: 0 for none.
func dueNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return nanos(t)
}

func (s *SQL) CreateSchedule(ctx context.Context, sc Schedule) error {
	return WithTx(ctx, s.write, func(tx *sqlx.Tx) error { return s.insertSchedule(ctx, tx, sc) })
}

// insertSchedule writes a new schedule inside tx.
func (s *SQL) insertSchedule(ctx context.Context, tx *sqlx.Tx, sc Schedule) error {
	if err := s.holdTarget(ctx, tx, sc.SessionID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO schedules (`+scheduleColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		sc.ID, sc.Owner, sc.Agent, sc.SessionID, sc.Spec, sc.Enabled, dueNanos(sc.NextDue), nanos(sc.Created), nanos(sc.Updated))
	return s.translate(err, nil, "create schedule %s", sc.ID)
}

// holdTarget locks the row of the session a schedule posts to ("" for
// none) until tx ends, or fails with unknown_session when it is gone. A
// schedule is deleted with its session (deleteSchedulesOf): a delete
// that commits first leaves no row to hold, and one that comes later
// waits for tx and finds the schedule, so none is left behind.
func (s *SQL) holdTarget(ctx context.Context, tx *sqlx.Tx, sessionID string) error {
	if sessionID == "" {
		return nil
	}
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE sessions SET updated = updated WHERE id = ?`), sessionID)
	if err != nil {
		return s.translate(err, nil, "hold session %s", sessionID)
	}
	return oneRow(res, unknownSession(sessionID), "hold session %s", sessionID)
}

func (s *SQL) UpdateSchedule(ctx context.Context, sc Schedule) error {
	return WithTx(ctx, s.write, func(tx *sqlx.Tx) error { return s.updateSchedule(ctx, tx, sc) })
}

// updateSchedule writes a schedule inside tx.
func (s *SQL) updateSchedule(ctx context.Context, tx *sqlx.Tx, sc Schedule) error {
	if err := s.holdTarget(ctx, tx, sc.SessionID); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE schedules SET agent = ?, session_id = ?, spec = ?, enabled = ?, next_due = ?, updated = ? WHERE id = ?`),
		sc.Agent, sc.SessionID, sc.Spec, sc.Enabled, dueNanos(sc.NextDue), nanos(sc.Updated), sc.ID)
	if err != nil {
		return s.translate(err, nil, "update schedule %s", sc.ID)
	}
	return oneRow(res, unknownSchedule(sc.ID), "update schedule %s", sc.ID)
}

// changeSchedule writes a change's ScheduleChange inside tx.
func (s *SQL) changeSchedule(ctx context.Context, tx *sqlx.Tx, c *ScheduleChange) error {
	if c.Update != nil {
		if err := s.updateSchedule(ctx, tx, *c.Update); err != nil {
			return err
		}
	}
	if c.Delete != "" {
		return s.deleteSchedule(ctx, tx, c.Delete)
	}
	return nil
}

// sqlSchedulesWithLast reads schedules with their newest firing, which
// the primary key of the firings finds for each: one query for a list,
// however long. The firing's columns are read as "last.…" (see
// scheduleLastRow), their zero values when it has none.
const sqlSchedulesWithLast = `SELECT s.id, s.owner, s.agent, s.session_id, s.spec, s.enabled, s.next_due, s.created, s.updated,
	COALESCE(f.schedule_id, '') AS "last.schedule_id", COALESCE(f.fire_time, 0) AS "last.fire_time",
	COALESCE(f.fired, 0) AS "last.fired", COALESCE(f.status, '') AS "last.status",
	COALESCE(f.session_id, '') AS "last.session_id", COALESCE(f.reason, '') AS "last.reason",
	COALESCE(f.catch_up, FALSE) AS "last.catch_up", COALESCE(f.manual, FALSE) AS "last.manual",
	COALESCE(f.outcome, '') AS "last.outcome", COALESCE(f.outcome_reason, '') AS "last.outcome_reason",
	COALESCE(f.finished, 0) AS "last.finished"
	FROM schedules s LEFT JOIN schedule_firings f ON f.schedule_id = s.id
	AND f.fire_time = (SELECT MAX(fire_time) FROM schedule_firings WHERE schedule_id = s.id)`

// scheduleLastRow is a row of sqlSchedulesWithLast.
type scheduleLastRow struct {
	scheduleRow
	Last firingRow `db:"last"`
}

func (r scheduleLastRow) schedule() Schedule {
	sc := r.scheduleRow.schedule()
	if r.Last.ScheduleID != "" {
		f := r.Last.firing()
		sc.Last = &f
	}
	return sc
}

func (s *SQL) GetSchedule(ctx context.Context, id string) (Schedule, error) {
	var rows []scheduleLastRow
	if err := s.read.SelectContext(ctx, &rows, s.read.Rebind(sqlSchedulesWithLast+` WHERE s.id = ?`), id); err != nil {
		return Schedule{}, s.translate(err, nil, "read schedule %s", id)
	}
	if len(rows) == 0 {
		return Schedule{}, unknownSchedule(id)
	}
	return rows[0].schedule(), nil
}

func (s *SQL) ListSchedules(ctx context.Context, f ScheduleFilter) ([]Schedule, error) {
	q := sqlSchedulesWithLast + ` WHERE 1 = 1`
	var args []any
	for _, c := range []struct{ col, v string }{{"s.owner", f.Owner}, {"s.agent", f.Agent}, {"s.session_id", f.SessionID}} {
		if c.v != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	var rows []scheduleLastRow
	if err := s.read.SelectContext(ctx, &rows, s.read.Rebind(q+` ORDER BY s.created, s.id`), args...); err != nil {
		return nil, s.translate(err, nil, "list schedules")
	}
	out := make([]Schedule, len(rows))
	for i, r := range rows {
		out[i] = r.schedule()
	}
	return out, nil
}

func schedulesOf(rows []scheduleRow) []Schedule {
	out := make([]Schedule, len(rows))
	for i, r := range rows {
		out[i] = r.schedule()
	}
	return out
}

func (s *SQL) DeleteSchedule(ctx context.Context, id string) error {
	return WithTx(ctx, s.write, func(tx *sqlx.Tx) error { return s.deleteSchedule(ctx, tx, id) })
}

// deleteSchedule deletes a schedule and its firings inside tx.
func (s *SQL) deleteSchedule(ctx context.Context, tx *sqlx.Tx, id string) error {
	// The firings go first: SQLite's foreign keys may be off.
	if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM schedule_firings WHERE schedule_id = ?`), id); err != nil {
		return s.translate(err, nil, "delete the firings of schedule %s", id)
	}
	res, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM schedules WHERE id = ?`), id)
	if err != nil {
		return s.translate(err, nil, "delete schedule %s", id)
	}
	return oneRow(res, unknownSchedule(id), "delete schedule %s", id)
}

// deleteSchedulesOf deletes, with their firings, the schedules that post
// to sessions a change deletes: a schedule whose session is gone could
// only fail.
func (s *SQL) deleteSchedulesOf(ctx context.Context, tx *sqlx.Tx, sessionIDs []string) error {
	q, args, err := sqlx.In(`DELETE FROM schedule_firings WHERE schedule_id IN (SELECT id FROM schedules WHERE session_id IN (?))`, sessionIDs)
	if err != nil {
		return fmt.Errorf("delete the schedules of deleted sessions: %w", err)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
		return s.translate(err, nil, "delete the firings of the schedules of deleted sessions")
	}
	q, args, err = sqlx.In(`DELETE FROM schedules WHERE session_id IN (?)`, sessionIDs)
	if err != nil {
		return fmt.Errorf("delete the schedules of deleted sessions: %w", err)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
		return s.translate(err, nil, "delete the schedules of deleted sessions")
	}
	return nil
}

func (s *SQL) DueSchedules(ctx context.Context, now time.Time, limit int) ([]Schedule, error) {
	var rows []scheduleRow
	err := s.read.SelectContext(ctx, &rows, s.read.Rebind(`SELECT `+scheduleColumns+` FROM schedules
		WHERE next_due > 0 AND next_due <= ? AND enabled ORDER BY next_due, id LIMIT ?`), nanos(now), limit)
	if err != nil {
		return nil, s.translate(err, nil, "read due schedules")
	}
	return schedulesOf(rows), nil
}

func (s *SQL) NextDue(ctx context.Context) (time.Time, error) {
	var next []int64
	if err := s.read.SelectContext(ctx, &next, `SELECT COALESCE(MIN(next_due), 0) FROM schedules WHERE next_due > 0 AND enabled`); err != nil {
		return time.Time{}, s.translate(err, nil, "read the next due schedule")
	}
	if len(next) == 0 || next[0] == 0 {
		return time.Time{}, nil
	}
	return fromNanos(next[0]), nil
}

func (s *SQL) AdvanceSchedule(ctx context.Context, id string, from, to time.Time) (bool, error) {
	res, err := s.write.ExecContext(ctx, s.write.Rebind(sqlAdvanceSchedule), dueNanos(to), id, dueNanos(from))
	if err != nil {
		return false, s.translate(err, nil, "advance schedule %s", id)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("advance schedule %s: %w", id, err)
	}
	return n == 1, nil
}

// sqlAdvanceSchedule moves a schedule's next time, only from the one the
// caller read: on PostgreSQL the second of two racing updates waits for
// the first, then finds the next time moved and changes nothing.
const sqlAdvanceSchedule = `UPDATE schedules SET next_due = ? WHERE id = ? AND next_due = ? AND enabled`

// firingRow is a schedule_firings row.
type firingRow struct {
	ScheduleID    string `db:"schedule_id"`
	FireTime      int64  `db:"fire_time"`
	Fired         int64  `db:"fired"`
	Status        string `db:"status"`
	SessionID     string `db:"session_id"`
	Reason        string `db:"reason"`
	CatchUp       bool   `db:"catch_up"`
	Manual        bool   `db:"manual"`
	Outcome       string `db:"outcome"`
	OutcomeReason string `db:"outcome_reason"`
	Finished      int64  `db:"finished"`
}

func (s *SQL) ListFirings(ctx context.Context, scheduleID string, limit int) ([]Firing, error) {
	var rows []firingRow
	err := s.read.SelectContext(ctx, &rows, s.read.Rebind(`SELECT schedule_id, fire_time, fired, status, session_id, reason,
		catch_up, manual, outcome, outcome_reason, finished FROM schedule_firings
		WHERE schedule_id = ? ORDER BY fire_time DESC LIMIT ?`), scheduleID, limit)
	if err != nil {
		return nil, s.translate(err, nil, "list the firings of schedule %s", scheduleID)
	}
	out := make([]Firing, len(rows))
	for i, r := range rows {
		out[i] = r.firing()
	}
	return out, nil
}

func (r firingRow) firing() Firing {
	f := Firing{ScheduleID: r.ScheduleID, FireTime: fromNanos(r.FireTime), Fired: fromNanos(r.Fired),
		Status: r.Status, SessionID: r.SessionID, Reason: r.Reason, CatchUp: r.CatchUp, Manual: r.Manual,
		Outcome: r.Outcome, OutcomeReason: r.OutcomeReason}
	if r.Finished > 0 {
		f.Finished = fromNanos(r.Finished)
	}
	return f
}

// claimFiring writes a change's firing inside its transaction.
func (s *SQL) claimFiring(ctx context.Context, tx *sqlx.Tx, c *FiringClaim) error {
	f := c.Firing
	if a := c.Advance; a != nil {
		res, err := tx.ExecContext(ctx, tx.Rebind(sqlAdvanceSchedule), dueNanos(a.To), f.ScheduleID, dueNanos(a.From))
		if err != nil {
			return s.translate(err, nil, "advance schedule %s", f.ScheduleID)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("advance schedule %s: %w", f.ScheduleID, err)
		} else if n == 0 {
			return firingClaimed(f)
		}
	}
	_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO schedule_firings (schedule_id, fire_time, fired, status,
		session_id, reason, catch_up, manual) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		f.ScheduleID, nanos(f.FireTime), nanos(f.Fired), f.Status, f.SessionID, f.Reason, f.CatchUp, f.Manual)
	if err != nil {
		err = s.translate(err, unknownSchedule(f.ScheduleID), "record the firing of schedule %s", f.ScheduleID)
		if errs.KindOf(err) == errs.KindConflict {
			return firingClaimed(f)
		}
	}
	return err
}

// sqlRecordOutcome writes how a run stopped on the firings that wait
// for it; prepared, since every run's stop runs it.
const sqlRecordOutcome = `UPDATE schedule_firings SET outcome = ?, outcome_reason = ?, finished = ?
	WHERE session_id = ? AND finished = 0 AND session_id <> '' AND status IN ('started', 'posted', 'queued')`

// recordOutcome writes how a run stopped on the firings that wait for it.
func (s *SQL) recordOutcome(ctx context.Context, tx *sqlx.Tx, o *RunOutcome) error {
	_, err := s.st.recordOutcome.in(ctx, tx).ExecContext(ctx, o.Status, o.Reason, nanos(o.At), o.SessionID)
	return s.translate(err, nil, "record the run outcome of %s on its firings", o.SessionID)
}

// oneRow turns an update or delete that touched no row into missing.
func oneRow(res interface{ RowsAffected() (int64, error) }, missing error, format string, args ...any) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	if n == 0 {
		return missing
	}
	return nil
}
