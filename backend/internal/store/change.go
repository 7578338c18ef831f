package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Change is one atomic write of the runner: a state change together with
// the events that describe it and whatever it triggers (mail to a watcher,
// an idempotency record), so that a client never observes half of it and
// an event is never lost or seen before what it reports is stored.
type Change struct {
	// Fence, when set, is the lease the change is written under: the
	// change fails alone with errs.FailedPrecondition (lease_lost) unless
	// the session's lease is still Holder's at Epoch. Servers sharing a
	// database set it on every write of a session they run; a single
	// server has no leases and leaves it nil.
	Fence *Fence
	// Create inserts Meta as a new session with NewTurns (indexed from 0).
	Create bool
	// Meta, when set, is the session's metadata after the change. Without
	// Create it is written as CommitStep writes it: guarded by the turn
	// count, with NewTurns as its last turns.
	Meta          *session.Meta
	NewTurns      []session.Turn
	DeliveredMail []string
	// NewMail is stored for any session (a watcher's mail goes out in the
	// same transaction as the status change that triggers it).
	NewMail     []session.Mail
	NewDeferred []session.DeferredCall
	// Completed answers calls of the session; a call that already has an
	// answer fails the change (call_completed).
	Completed []Completion
	// Approved are calls that waited for approval and now run: their
	// reason becomes Approved.Reason, so a restart takes them for calls
	// in flight, not for approvals still open.
	Approved    *Approved
	HelperCalls []HelperCall
	// Delete removes sessions with everything that belongs to them,
	// and the schedules that post to them.
	Delete      []string
	Idempotency *IdempotencyRecord
	// TreeBudget, when set, replaces the budget of the tree whose root is
	// Meta's session.
	TreeBudget *session.Budget
	// Spend settles a model call: its spend is added to its tree and
	// owner and its reservation released.
	Spend *SpendChange
	// Release drops the reservation of Meta's session without spending:
	// the call it was for ended with no answer.
	Release bool
	// Agent, when set, writes a stored agent (see AgentChange).
	Agent *AgentChange
	// Schedule, when set, creates a schedule (see Schedules.CreateSchedule).
	Schedule *Schedule
	// ScheduleChange, when set, changes or deletes a schedule.
	ScheduleChange *ScheduleChange
	// Firing, when set, records a schedule's firing the change does (see
	// FiringClaim); a firing claimed already fails the change.
	Firing *FiringClaim
	// RunOutcome, when set, records how a run stopped on the firings that
	// started it or posted to its session.
	RunOutcome *RunOutcome
	// Events are appended to the log. On success each gets its Seq, or,
	// where positions are given after the commit (PostgreSQL), 0 when it
	// could not be given in time: the event is stored, and the log has it
	// at its position once it has one (see EventLog.NumberEvents).
	Events []Event
}

// Fence is a lease a change is written under.
type Fence struct {
	SessionID, Holder string
	Epoch             int64
}

// Completion is the answer to one deferred call.
type Completion struct {
	Token  string
	Result session.ToolResult
	At     time.Time
	// Resume says the answer asks the run to go on once every call of
	// the round is answered.
	Resume bool
}

// Approved gives deferred calls that have no answer yet a new reason.
type Approved struct {
	Tokens []string
	Reason string
}

// HelperCall records the child session a helper call of a session runs.
type HelperCall struct {
	SessionID, CallID, ChildID string
	Created                    time.Time
}

// IdempotencyRecord is what a keyed request produced: Result is the
// operation's own small JSON summary (the ids it created).
type IdempotencyRecord struct {
	Owner, Key, Op, Result string
	Created                time.Time
}

// Event is one entry of the event log. Body is the encoded event; the
// store does not look inside it.
type Event struct {
	Seq       uint64
	SessionID string
	Owner     string
	Kind      string
	Time      time.Time
	Body      []byte
	// id is the row's insertion id where positions are given after the
	// commit (Dialect.PositionsAfterCommit).
	id int64
}

// Commit writes c in one transaction.
func (s *SQL) Commit(ctx context.Context, c *Change) error {
	return s.CommitAll(ctx, []*Change{c})[0]
}

// CommitAll writes changes in one transaction (a group commit): a change
// that fails is rolled back alone and reports its error, the others
// commit together, in order. A failure of the transaction itself fails
// them all. errs[i] is changes[i]'s.
//
// Changes almost never fail, so the group is first written as one: each
// change's rows, then every change's events in as few INSERTs as they
// fit. Only when a change fails is the transaction rolled back and the
// group written again with each change's rows in a savepoint of its own,
// which costs two statements a change, and the events of the changes that
// did not fail at the end.
func (s *SQL) CommitAll(ctx context.Context, changes []*Change) []error {
	out := make([]error, len(changes))
	preps := make([]*encoded, len(changes))
	ok := 0
	for i, c := range changes {
		if preps[i], out[i] = s.prepare(c); out[i] == nil {
			ok++
		}
	}
	if ok == 0 {
		return out
	}
	inChange, err := s.commitTogether(ctx, changes, preps, out)
	if err != nil && inChange && ok > 1 {
		forgetSeqs(changes)
		err = s.commitEach(ctx, changes, preps, out)
	}
	if _, typed := errs.As(err); err != nil && !typed {
		// Beginning or committing the transaction failed (the database is
		// locked, say): a kind of its own, not a bare error.
		err = s.translate(err, nil, "commit change")
	}
	if err != nil {
		forgetSeqs(changes)
		for i := range out {
			if out[i] == nil {
				out[i] = err
			}
		}
		return out
	}
	if s.dialect.PositionsAfterCommit {
		s.positionCommitted(changes, out)
	}
	return out
}

// commitTogether writes the changes whose out is nil in one transaction
// with no savepoints. inChange reports that err came from writing a
// change, not from beginning or committing the transaction.
func (s *SQL) commitTogether(ctx context.Context, changes []*Change, preps []*encoded, out []error) (inChange bool, err error) {
	err = WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		var all []*Event // every change's events, in order
		var spends []*SpendChange
		for i, c := range changes {
			if out[i] != nil {
				continue
			}
			if err := s.applyRows(ctx, tx, c, preps[i]); err != nil {
				inChange = true
				return err
			}
			all = appendEventsOf(all, c)
			spends = appendSpend(spends, c)
		}
		if err := s.applySpends(ctx, tx, spends); err != nil {
			inChange = true
			return err
		}
		if err := s.appendEvents(ctx, tx, all); err != nil {
			inChange = true
			return err
		}
		return nil
	})
	return inChange, err
}

// appendSpend adds c's spend, if any.
func appendSpend(spends []*SpendChange, c *Change) []*SpendChange {
	if c.Spend != nil {
		spends = append(spends, c.Spend)
	}
	return spends
}

// commitEach writes the changes whose out is nil in one transaction, each
// in a savepoint, recording in out the error of each change that fails.
// The events of the changes that did not fail are appended last, in one
// go, as commitTogether does.
func (s *SQL) commitEach(ctx context.Context, changes []*Change, preps []*encoded, out []error) error {
	return WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		var all []*Event
		var spends []*SpendChange
		for i, c := range changes {
			if out[i] != nil {
				continue
			}
			if _, err := tx.ExecContext(ctx, "SAVEPOINT change"); err != nil {
				return s.translate(err, nil, "savepoint")
			}
			if out[i] = s.applyRows(ctx, tx, c, preps[i]); out[i] != nil {
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT change"); err != nil {
					return s.translate(err, nil, "roll back a change")
				}
			} else {
				all = appendEventsOf(all, c)
				spends = appendSpend(spends, c)
			}
			if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT change"); err != nil {
				return s.translate(err, nil, "release savepoint")
			}
		}
		if err := s.applySpends(ctx, tx, spends); err != nil {
			return err
		}
		return s.appendEvents(ctx, tx, all)
	})
}

// forgetSeqs clears the seqs a rolled-back write gave the changes' events.
func forgetSeqs(changes []*Change) {
	for _, c := range changes {
		for e := range c.Events {
			c.Events[e].Seq, c.Events[e].id = 0, 0
		}
	}
}

// encoded is a change checked and encoded before its transaction starts,
// so the write lock is held as briefly as possible.
type encoded struct {
	base                int
	turns               []turnRow
	deferred            []deferredInsert
	mailBodies, results []string
}

func (s *SQL) prepare(c *Change) (*encoded, error) {
	p := &encoded{}
	var err error
	if c.Meta != nil {
		p.base = c.Meta.TurnCount - len(c.NewTurns)
		if c.Create {
			p.base = 0
			if c.Meta.TurnCount != len(c.NewTurns) {
				return nil, errs.Invalid(errs.CodeInvalidTurns, "session %s: turn count %d but %d turns", c.Meta.ID, c.Meta.TurnCount, len(c.NewTurns))
			}
		}
		if p.base < 0 {
			return nil, errs.Invalid(errs.CodeInvalidTurns, "session %s: turn count %d is less than the %d new turns", c.Meta.ID, c.Meta.TurnCount, len(c.NewTurns))
		}
		if p.turns, err = encodeTurns(c.NewTurns, p.base); err != nil {
			return nil, err
		}
	} else if len(c.NewTurns) > 0 || len(c.DeliveredMail) > 0 || len(c.NewDeferred) > 0 {
		return nil, errs.Invalid(errs.CodeInvalidTurns, "a change with turns, delivered mail or deferred calls needs the session's metadata")
	}
	if len(c.NewDeferred) > 0 {
		if p.deferred, err = encodeDeferred(c.Meta.ID, c.NewDeferred); err != nil {
			return nil, err
		}
	}
	p.mailBodies = make([]string, len(c.NewMail))
	for i, m := range c.NewMail {
		if m.ID == "" {
			return nil, errs.Invalid(errs.CodeInvalidMail, "mail needs an id")
		}
		if p.mailBodies[i], err = encode(m.Body); err != nil {
			return nil, fmt.Errorf("add mail %s: %w", m.ID, err)
		}
	}
	p.results = make([]string, len(c.Completed))
	for i, cp := range c.Completed {
		if p.results[i], err = encode(cp.Result); err != nil {
			return nil, fmt.Errorf("complete call %s: %w", cp.Token, err)
		}
	}
	return p, nil
}

// appendEventsOf appends pointers to c's events to dst, so that
// appendEvents gives the change's own events their seqs.
func appendEventsOf(dst []*Event, c *Change) []*Event {
	for e := range c.Events {
		dst = append(dst, &c.Events[e])
	}
	return dst
}

// applyRows writes one prepared change inside tx, all but its events.
func (s *SQL) applyRows(ctx context.Context, tx *sqlx.Tx, c *Change, p *encoded) error {
	if s.oneStatementStep(c, p) {
		if err := s.writeStep(ctx, tx, c, p.base, p.turns); err != nil {
			return err
		}
	} else {
		if err := s.checkFence(ctx, tx, c.Fence); err != nil {
			return err
		}
		if c.Meta != nil {
			if err := s.writeMeta(ctx, tx, c, p.base, p.turns); err != nil {
				return err
			}
		}
	}
	if c.Meta != nil {
		if err := s.deliverAll(ctx, tx, c.Meta.ID, dedupe(c.DeliveredMail), nanos(c.Meta.Updated)); err != nil {
			return err
		}
		if err := s.insertDeferred(ctx, tx, p.deferred); err != nil {
			return err
		}
	}
	if c.Meta != nil && c.TreeBudget != nil {
		if err := s.putTreeBudget(ctx, tx, c.Meta.Root(), *c.TreeBudget, c.Meta.Updated); err != nil {
			return err
		}
	}
	if c.Meta != nil && c.Release {
		if err := s.releaseReservation(ctx, tx, c.Meta.ID); err != nil {
			return err
		}
	}
	for i, m := range c.NewMail {
		_, err := s.st.addMail.in(ctx, tx).ExecContext(ctx, m.ID, m.SessionID, string(m.Sender.Kind), m.Sender.Name,
			string(m.Priority), p.mailBodies[i], nanos(m.Created), nullNanos(m.Delivered))
		if err != nil {
			return s.translate(err, unknownSession(m.SessionID), "add mail %s", m.ID)
		}
	}
	for i, cp := range c.Completed {
		res, err := s.st.completePending.in(ctx, tx).ExecContext(ctx, p.results[i], nanos(cp.At), cp.Resume, cp.Token)
		if err != nil {
			return s.translate(err, nil, "complete deferred call %s", cp.Token)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("complete deferred call %s: %w", cp.Token, err)
		} else if n == 0 {
			return errs.FailedPrecondition(errs.CodeCallCompleted, "call %s was already completed", cp.Token)
		}
	}
	if a := c.Approved; a != nil {
		for _, token := range a.Tokens {
			res, err := s.st.approvePending.in(ctx, tx).ExecContext(ctx, a.Reason, token)
			if err != nil {
				return s.translate(err, nil, "approve deferred call %s", token)
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("approve deferred call %s: %w", token, err)
			} else if n == 0 {
				return errs.FailedPrecondition(errs.CodeCallCompleted, "call %s was already completed", token)
			}
		}
	}
	for _, h := range c.HelperCalls {
		if _, err := s.st.putHelperCall.in(ctx, tx).ExecContext(ctx, h.SessionID, h.CallID, h.ChildID, nanos(h.Created)); err != nil {
			return s.translate(err, unknownSession(h.SessionID), "record helper call %s", h.CallID)
		}
	}
	if len(c.Delete) > 0 {
		q, args, err := sqlx.In(`DELETE FROM sessions WHERE id IN (?)`, c.Delete)
		if err != nil {
			return fmt.Errorf("delete sessions: %w", err)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
			return s.translate(err, nil, "delete sessions")
		}
		if err := s.noOrphans(ctx, tx, c.Delete); err != nil {
			return err
		}
		if err := s.deleteSchedulesOf(ctx, tx, c.Delete); err != nil {
			return err
		}
	}
	if c.Agent != nil {
		if err := s.writeAgent(ctx, tx, c.Agent); err != nil {
			return err
		}
	}
	if c.Schedule != nil {
		if err := s.insertSchedule(ctx, tx, *c.Schedule); err != nil {
			return err
		}
	}
	if c.ScheduleChange != nil {
		if err := s.changeSchedule(ctx, tx, c.ScheduleChange); err != nil {
			return err
		}
	}
	if c.Firing != nil {
		// Before the write: from now on run outcomes are recorded.
		s.firings.Store(rowsPresent)
		if err := s.claimFiring(ctx, tx, c.Firing); err != nil {
			return err
		}
	}
	if c.RunOutcome != nil {
		if wanted, err := s.outcomeWanted(ctx, tx); err != nil {
			return err
		} else if wanted {
			if err := s.recordOutcome(ctx, tx, c.RunOutcome); err != nil {
				return err
			}
		}
	}
	if r := c.Idempotency; r != nil {
		if _, err := s.st.putIdempotency.in(ctx, tx).ExecContext(ctx, r.Owner, r.Key, r.Op, r.Result, nanos(r.Created)); err != nil {
			return s.translate(err, nil, "record idempotency key")
		}
	}
	return nil
}

// outcomeWanted tells whether a run's outcome may have a firing to land
// on. Every run's stop records its outcome, and most servers have no
// schedule: on an embedded database every firing is claimed through this
// store (applyRows), so once it has read that none waits for an outcome,
// no stop writes one until a firing is claimed. A database other servers
// share is written every time.
func (s *SQL) outcomeWanted(ctx context.Context, tx *sqlx.Tx) (bool, error) {
	if !s.dialect.Embedded {
		return true, nil
	}
	switch s.firings.Load() {
	case rowsAbsent:
		return false, nil
	case rowsPresent:
		return true, nil
	}
	var some bool
	if err := tx.GetContext(ctx, &some, sqlOpenFirings); err != nil {
		return false, s.translate(err, nil, "look for firings waiting for a run")
	}
	if some {
		s.firings.Store(rowsPresent)
		return true, nil
	}
	// A firing claimed meanwhile has moved the state on: it stays.
	return !s.firings.CompareAndSwap(rowsUnread, rowsAbsent), nil
}

// sqlOpenFirings asks whether any firing waits for its run's outcome;
// run once a start, it is not prepared.
const sqlOpenFirings = `SELECT EXISTS (SELECT 1 FROM schedule_firings WHERE finished = 0 AND session_id <> '')`

// writeMeta inserts a new session or updates an existing one, guarded by
// its turn count, and appends the new turns.
func (s *SQL) writeMeta(ctx context.Context, tx *sqlx.Tx, c *Change, base int, turns []turnRow) error {
	m := c.Meta
	if c.Create {
		root := m.Root()
		if m.ParentID != "" {
			if err := s.holdParent(ctx, tx, m.ParentID); err != nil {
				return err
			}
			if m.RootID == "" {
				// A child spends its parent's tree's budget.
				if err := tx.GetContext(ctx, &root, tx.Rebind(`SELECT root_id FROM sessions WHERE id = ?`), m.ParentID); err != nil {
					return s.translate(err, unknownSession(m.ParentID), "read the root of %s", m.ParentID)
				}
			}
		}
		_, err := s.st.insertSession.in(ctx, tx).ExecContext(ctx,
			m.ID, m.Agent, m.Owner, m.Title, string(m.Status),
			m.StatusReason, m.ParentID, m.ForkedFrom, m.TurnCount,
			m.Usage.Prompt, m.Usage.Completion, m.Usage.Cached,
			m.Usage.Reasoning, m.Depth, nanos(m.Created), nanos(m.Updated),
			strings.Join(m.AllowedTools, "\n"), m.AgentVersion, m.AgentGen, m.AgentPin, root, nullCost(m.Usage.Cost))
		if err != nil {
			return s.translate(err, nil, "create session %s", m.ID)
		}
	} else {
		res, err := s.st.commitMeta.in(ctx, tx).ExecContext(ctx, append(metaArgs(*m), m.TurnCount, m.ID, base)...)
		if err != nil {
			return s.translate(err, nil, "commit change of %s", m.ID)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("commit change of %s: %w", m.ID, err)
		} else if n == 0 {
			return s.turnConflict(ctx, tx, m.ID, base)
		}
	}
	if len(turns) == 0 {
		return nil
	}
	return s.insertTurns(ctx, tx, m.ID, turns)
}

// oneStatementStep says whether c's lease check, metadata and turns are
// written by one statement (Dialect.StepStatement): an update, fenced or
// not, with at most one new turn, what every step commits.
func (s *SQL) oneStatementStep(c *Change, p *encoded) bool {
	return s.dialect.StepStatement && c.Meta != nil && !c.Create && len(p.turns) <= 1 &&
		(c.Fence == nil || c.Fence.SessionID == c.Meta.ID)
}

// writeStep is checkFence and writeMeta in one statement. The lease row
// is share-locked first, as checkFence does, and the session's row is
// updated only if the lease matched, so the locks are taken in the same
// order, and a change that fails writes nothing.
func (s *SQL) writeStep(ctx context.Context, tx *sqlx.Tx, c *Change, base int, turns []turnRow) error {
	m, f := c.Meta, c.Fence
	var args []any
	fenced := 0
	if f != nil {
		fenced = 1
		args = append(args, f.SessionID, f.Holder, f.Epoch)
	}
	args = append(args, metaArgs(*m)...)
	args = append(args, m.TurnCount, m.ID, base)
	for _, t := range turns {
		args = append(args, t.Idx, t.Created, t.Payload)
	}
	var out struct {
		Fenced  bool `db:"fenced"`
		Written bool `db:"written"`
	}
	if err := s.st.step[fenced][len(turns)].in(ctx, tx).GetContext(ctx, &out, args...); err != nil {
		return s.translate(err, unknownSession(m.ID), "commit change of %s", m.ID)
	}
	switch {
	case !out.Fenced:
		return errs.FailedPrecondition(errs.CodeLeaseLost, "lease on session %s was lost", f.SessionID)
	case !out.Written:
		return s.turnConflict(ctx, tx, m.ID, base)
	}
	return nil
}

// stepSQL is the statement of writeStep, with the lease check or without,
// with the insert of one turn or none. The CTEs run on one snapshot;
// fence is read (and its row locked) once, when the update's condition
// first asks for it, and the turn is inserted from the update's result,
// so only when the update matched. Every data-modifying CTE runs to its
// end whether or not the final SELECT reads it.
func stepSQL(fenced, withTurn bool) string {
	q := `WITH `
	guard, isFenced := ``, `TRUE`
	if fenced {
		q += `fence AS (
		SELECT 1 FROM run_leases WHERE session_id = ? AND holder = ? AND epoch = ? FOR SHARE
	), `
		guard, isFenced = ` AND EXISTS (SELECT 1 FROM fence)`, `EXISTS (SELECT 1 FROM fence)`
	}
	q += `meta AS (
		UPDATE sessions SET ` + metaSet + `, turn_count = ?
		WHERE id = ? AND turn_count = ?` + guard + `
		RETURNING id
	)`
	if withTurn {
		q += `, turn AS (
		INSERT INTO turns (session_id, idx, created, payload)
		SELECT id, CAST(? AS INTEGER), CAST(? AS BIGINT), CAST(? AS TEXT) FROM meta
	)`
	}
	return q + `
	SELECT ` + isFenced + ` AS fenced, EXISTS (SELECT 1 FROM meta) AS written`
}

// A child is never left pointing at a parent that is gone: a session is
// created under a parent only while the parent exists, and a session is
// deleted only with every child it has. Each side takes the parent's row
// (the create's update, the delete's delete) before it looks, so two
// transactions that race serialise on it, on PostgreSQL's row locks as on
// SQLite's single writer.

// holdParent checks, in the transaction that creates a child, that its
// parent exists, and keeps its row from being deleted until the
// transaction ends.
func (s *SQL) holdParent(ctx context.Context, tx *sqlx.Tx, parentID string) error {
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE sessions SET updated = updated WHERE id = ?`), parentID)
	if err != nil {
		return s.translate(err, nil, "hold parent %s", parentID)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("hold parent %s: %w", parentID, err)
	} else if n == 0 {
		return unknownSession(parentID)
	}
	return nil
}

// noOrphans fails a transaction that deleted sessions when a session it
// did not delete is the child of one it did.
func (s *SQL) noOrphans(ctx context.Context, tx *sqlx.Tx, deleted []string) error {
	q, args, err := sqlx.In(`SELECT id, parent_id FROM sessions WHERE parent_id IN (?) LIMIT 1`, deleted)
	if err != nil {
		return fmt.Errorf("look for children: %w", err)
	}
	var left []struct {
		ID       string `db:"id"`
		ParentID string `db:"parent_id"`
	}
	if err := tx.SelectContext(ctx, &left, tx.Rebind(q), args...); err != nil {
		return s.translate(err, nil, "look for children")
	}
	if len(left) > 0 {
		return errs.FailedPrecondition(errs.CodeSessionHasChildren, "session %s has a child session %s", left[0].ParentID, left[0].ID)
	}
	return nil
}

// sqlApprovePending changes the reason of a call that has no answer yet.
const sqlApprovePending = `UPDATE deferred_calls SET reason = ? WHERE token = ? AND completed IS NULL`

// sqlCompletePending answers a call that has no answer yet.
const sqlCompletePending = `UPDATE deferred_calls SET result = ?, completed = ?, resume = ?
	WHERE token = ? AND completed IS NULL`

const sqlPutHelperCall = `INSERT INTO helper_calls (session_id, call_id, child_id, created)
	VALUES (?, ?, ?, ?) ON CONFLICT (session_id, call_id) DO UPDATE SET child_id = excluded.child_id`

const sqlPutIdempotency = `INSERT INTO idempotency_keys (owner, key, op, result, created) VALUES (?, ?, ?, ?, ?)`

// HelperChild returns the child session a helper call runs, "" when none
// was recorded.
func (s *SQL) HelperChild(ctx context.Context, sessionID, callID string) (string, error) {
	var ids []string
	if err := s.st.helperChild.SelectContext(ctx, &ids, sessionID, callID); err != nil {
		return "", s.translate(err, nil, "read helper call %s", callID)
	}
	if len(ids) == 0 {
		return "", nil
	}
	return ids[0], nil
}

const sqlHelperChild = `SELECT child_id FROM helper_calls WHERE session_id = ? AND call_id = ?`

// Idempotent returns the record of a key, errs.NotFound when there is none.
func (s *SQL) Idempotent(ctx context.Context, owner, key string) (IdempotencyRecord, error) {
	var rows []struct {
		Op      string `db:"op"`
		Result  string `db:"result"`
		Created int64  `db:"created"`
	}
	if err := s.st.getIdempotency.SelectContext(ctx, &rows, owner, key); err != nil {
		return IdempotencyRecord{}, s.translate(err, nil, "read idempotency key")
	}
	if len(rows) == 0 {
		return IdempotencyRecord{}, errs.NotFound(errs.CodeUnknownKey, "no request with this idempotency key")
	}
	r := rows[0]
	return IdempotencyRecord{Owner: owner, Key: key, Op: r.Op, Result: r.Result, Created: fromNanos(r.Created)}, nil
}

const sqlGetIdempotency = `SELECT op, result, created FROM idempotency_keys WHERE owner = ? AND key = ?`

// PruneIdempotency forgets the keys recorded before a time.
func (s *SQL) PruneIdempotency(ctx context.Context, before time.Time) (int, error) {
	res, err := s.write.ExecContext(ctx, s.write.Rebind(`DELETE FROM idempotency_keys WHERE created < ?`), nanos(before))
	if err != nil {
		return 0, s.translate(err, nil, "prune idempotency keys")
	}
	n, err := res.RowsAffected()
	return int(n), err
}
