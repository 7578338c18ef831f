package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// CreateSession implements Sessions.
func (s *SQL) CreateSession(ctx context.Context, meta session.Meta, turns []session.Turn) error {
	return s.Commit(ctx, &Change{Create: true, Meta: &meta, NewTurns: turns})
}

const sqlInsertSession = `INSERT INTO sessions (
	id, agent, owner, title, status, status_reason, parent_id,
	forked_from, turn_count, usage_prompt, usage_completion,
	usage_cached, usage_reasoning, depth, created, updated, allowed_tools,
	agent_version, agent_generation, agent_pin, root_id, usage_cost)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// GetMeta implements Sessions.
func (s *SQL) GetMeta(ctx context.Context, id string) (session.Meta, error) {
	return s.getMeta(ctx, id)
}

const sqlGetMeta = `SELECT ` + metaColumns + ` FROM sessions s WHERE s.id = ?`

// getMeta reads a session's metadata.
func (s *SQL) getMeta(ctx context.Context, id string) (session.Meta, error) {
	var r metaRow
	err := s.st.getMeta.GetContext(ctx, &r, id)
	if err != nil {
		return session.Meta{}, s.translate(err, unknownSession(id), "get session %s", id)
	}
	return r.meta(), nil
}

// LoadSession implements Sessions. Turns are only ever appended, in the
// transaction that raises the turn count, and never changed after: the
// turns below the count the metadata says are the ones it had when it was
// read, whatever committed since. So the turns are read after the
// metadata, up to its count, with no transaction around the two (which on
// PostgreSQL would cost a BEGIN and a ROLLBACK, two more round trips, and
// REPEATABLE READ to make one snapshot of two statements). A session
// deleted between the two reads has fewer turns than its count: it is
// reported gone.
func (s *SQL) LoadSession(ctx context.Context, id string) (session.Meta, []session.Turn, error) {
	meta, err := s.getMeta(ctx, id)
	if err != nil {
		return session.Meta{}, nil, err
	}
	turns, err := s.LoadTurns(ctx, id, 0, meta.TurnCount)
	if err != nil {
		return session.Meta{}, nil, err
	}
	return meta, turns, nil
}

// LoadTurns implements Sessions.
func (s *SQL) LoadTurns(ctx context.Context, id string, from, to int) ([]session.Turn, error) {
	if from >= to {
		return nil, nil
	}
	var rows []turnRow
	if err := s.st.loadTurns.SelectContext(ctx, &rows, id, from, to); err != nil {
		return nil, s.translate(err, nil, "load turns of %s", id)
	}
	if len(rows) != to-from {
		return nil, unknownSession(id)
	}
	turns := make([]session.Turn, len(rows))
	for i, r := range rows {
		var err error
		if turns[i], err = r.turn(); err != nil {
			return nil, s.translate(err, nil, "load session %s", id)
		}
	}
	return turns, nil
}

const sqlLoadTurns = `SELECT idx, created, payload FROM turns WHERE session_id = ? AND idx >= ? AND idx < ? ORDER BY idx`

// ListSessions implements Sessions. Its text depends on the filter, so it
// is not prepared.
func (s *SQL) ListSessions(ctx context.Context, f ListFilter) ([]session.Meta, string, error) {
	var where []string
	var args []any
	add := func(cond string, a ...any) {
		where = append(where, cond)
		args = append(args, a...)
	}
	if f.Owner != "" {
		add("s.owner = ?", f.Owner)
	}
	if f.Agent != "" {
		add("s.agent = ?", f.Agent)
	}
	if f.Status != "" {
		add("s.status = ?", string(f.Status))
	}
	if f.ParentID != "" {
		add("s.parent_id = ?", f.ParentID)
	}
	if f.RootsOnly {
		add("s.parent_id = ''")
	}
	if f.Query != "" {
		if err := checkQuery(f.Query); err != nil {
			return nil, "", err
		}
		// Lowering both sides with the database's own LOWER keeps the
		// comparison consistent whatever that function folds.
		add(`LOWER(s.title) LIKE LOWER(?) ESCAPE '\'`, "%"+escapeLike(f.Query)+"%")
	}
	if f.PageToken != "" {
		c, err := decodeCursor(f.PageToken)
		if err != nil {
			return nil, "", err
		}
		// The first condition is a plain range an index can seek to; the
		// second breaks ties in created time by id.
		add("s.created <= ? AND (s.created < ? OR s.id < ?)", c.created, c.created, c.id)
	}
	q := `SELECT ` + metaColumns + ` FROM sessions s`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	size := pageSize(f.PageSize)
	// One row more than the page tells whether another page follows, so
	// the last page never hands out a token to an empty one.
	q += ` ORDER BY s.created DESC, s.id DESC LIMIT ?`
	args = append(args, size+1)

	var rows []metaRow
	if err := s.read.SelectContext(ctx, &rows, s.read.Rebind(q), args...); err != nil {
		return nil, "", s.translate(err, nil, "list sessions")
	}
	next := ""
	if len(rows) > size {
		rows = rows[:size]
		last := rows[size-1]
		next = cursor{created: last.Created, id: last.ID}.encode()
	}
	return metas(rows), next, nil
}

// ListByStatus implements Sessions.
func (s *SQL) ListByStatus(ctx context.Context, statuses ...session.Status) ([]session.Meta, error) {
	if len(statuses) == 0 {
		return nil, nil
	}
	names := make([]string, len(statuses))
	for i, st := range statuses {
		names[i] = string(st)
	}
	q, args, err := sqlx.In(`SELECT `+metaColumns+` FROM sessions s
		WHERE s.status IN (?) ORDER BY s.created, s.id`, names)
	if err != nil {
		return nil, fmt.Errorf("list sessions by status: %w", err)
	}
	var rows []metaRow
	if err := s.read.SelectContext(ctx, &rows, s.read.Rebind(q), args...); err != nil {
		return nil, s.translate(err, nil, "list sessions by status")
	}
	return metas(rows), nil
}

// CountByStatus implements Sessions.
func (s *SQL) CountByStatus(ctx context.Context) (map[session.Status]int, error) {
	var rows []struct {
		Status string `db:"status"`
		N      int    `db:"n"`
	}
	if err := s.st.countByStatus.SelectContext(ctx, &rows); err != nil {
		return nil, s.translate(err, nil, "count sessions by status")
	}
	counts := make(map[session.Status]int, len(rows))
	for _, r := range rows {
		counts[session.Status(r.Status)] = r.N
	}
	return counts, nil
}

const sqlCountByStatus = `SELECT status, COUNT(*) AS n FROM sessions GROUP BY status`

// Children implements Sessions.
func (s *SQL) Children(ctx context.Context, id string) ([]session.Meta, error) {
	var rows []metaRow
	if err := s.st.children.SelectContext(ctx, &rows, id); err != nil {
		return nil, s.translate(err, nil, "list children of %s", id)
	}
	return metas(rows), nil
}

const sqlChildren = `SELECT ` + metaColumns + `
	FROM sessions s WHERE s.parent_id = ? ORDER BY s.created, s.id`

// metaSet assigns the mutable metadata; metaArgs gives its arguments.
const metaSet = `agent = ?, title = ?, status = ?, status_reason = ?,
	usage_prompt = ?, usage_completion = ?, usage_cached = ?,
	usage_reasoning = ?, updated = ?, allowed_tools = ?, agent_version = ?,
	usage_cost = ?`

func metaArgs(m session.Meta) []any {
	return []any{m.Agent, m.Title, string(m.Status), m.StatusReason,
		m.Usage.Prompt, m.Usage.Completion, m.Usage.Cached,
		m.Usage.Reasoning, nanos(m.Updated), strings.Join(m.AllowedTools, "\n"), m.AgentVersion,
		nullCost(m.Usage.Cost)}
}

// nullCost is a cost column's value: NULL when no price was known.
func nullCost(c *session.Nanos) any {
	if c == nil {
		return nil
	}
	return int64(*c)
}

// UpdateMeta implements Sessions.
func (s *SQL) UpdateMeta(ctx context.Context, meta session.Meta) error {
	res, err := s.st.updateMeta.ExecContext(ctx, append(metaArgs(meta), meta.ID)...)
	if err != nil {
		return s.translate(err, nil, "update session %s", meta.ID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update session %s: %w", meta.ID, err)
	}
	if n == 0 {
		return unknownSession(meta.ID)
	}
	return nil
}

const sqlUpdateMeta = `UPDATE sessions SET ` + metaSet + ` WHERE id = ?`

// DeleteSessions implements Sessions. The rows that belong to a session go
// with it through ON DELETE CASCADE; the schedules that post to it, in
// the same transaction (deleteSchedulesOf), as a change's Delete does.
func (s *SQL) DeleteSessions(ctx context.Context, ids ...string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	q, args, err := sqlx.In(`DELETE FROM sessions WHERE id IN (?)`, ids)
	if err != nil {
		return 0, fmt.Errorf("delete sessions: %w", err)
	}
	var n int64
	err = WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, tx.Rebind(q), args...)
		if err != nil {
			return s.translate(err, nil, "delete sessions")
		}
		if n, err = res.RowsAffected(); err != nil {
			return fmt.Errorf("delete sessions: %w", err)
		}
		return s.deleteSchedulesOf(ctx, tx, ids)
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// encodeTurns checks that turns are indexed base, base+1, … and each holds
// exactly one side, and encodes them before any transaction starts so the
// write lock is held as briefly as possible.
func encodeTurns(turns []session.Turn, base int) ([]turnRow, error) {
	rows := make([]turnRow, len(turns))
	for i, t := range turns {
		if t.Index != base+i {
			return nil, errs.Invalid(errs.CodeInvalidTurns, "turn %d at position %d, want index %d", t.Index, i, base+i)
		}
		if t.Sides() != 1 {
			return nil, errs.Invalid(errs.CodeInvalidTurns, "turn %d must be one of a user turn, an LLM turn and a compaction", t.Index)
		}
		payload, err := encode(turnPayload{User: t.User, LLM: t.LLM, Compaction: t.Compaction})
		if err != nil {
			return nil, fmt.Errorf("turn %d: %w", t.Index, err)
		}
		rows[i] = turnRow{Idx: t.Index, Created: nanos(t.Created), Payload: payload}
	}
	return rows, nil
}

// sqlInsertTurns heads the INSERT of turns; turnColumns is its width.
// stepTurns is the most turns a step appends (a model's answer with tool
// calls, then the user turn with their results): the INSERTs of up to
// that many are prepared.
const (
	sqlInsertTurns = `INSERT INTO turns (session_id, idx, created, payload) VALUES`
	turnColumns    = 4
	stepTurns      = 2
)

func (s *SQL) insertTurns(ctx context.Context, tx *sqlx.Tx, sessionID string, rows []turnRow) error {
	var err error
	if len(rows) <= stepTurns {
		args := make([]any, 0, turnColumns*len(rows))
		for _, r := range rows {
			args = append(args, sessionID, r.Idx, r.Created, r.Payload)
		}
		err = execRows(ctx, tx, s.st.insertTurns[:], turnColumns, args)
	} else {
		err = insertRows(ctx, tx, s.st.insertTurns[1], sqlInsertTurns, turnColumns, len(rows),
			func(i int) []any { return []any{sessionID, rows[i].Idx, rows[i].Created, rows[i].Payload} })
	}
	if err != nil {
		return s.translate(err, unknownSession(sessionID), "append turns to %s", sessionID)
	}
	return nil
}

// insertBatch bounds the rows of one INSERT, far below the bind-parameter
// limits of SQLite (32766) and PostgreSQL (65535).
const insertBatch = 200

// insertRows inserts n rows of width columns. A single row, all a step
// writes, runs one, the prepared one-row INSERT. More rows run one
// multi-row statement per batch, which costs one statement rather than one
// per row; its text varies with the count, so it is compiled each time:
// forks and multi-row commits are rare, and a statement per count would
// keep up to insertBatch of them per table on every connection.
func insertRows(ctx context.Context, tx *sqlx.Tx, one *writeStmt, head string, width, n int, row func(i int) []any) error {
	if n == 1 {
		_, err := one.in(ctx, tx).ExecContext(ctx, row(0)...)
		return err
	}
	for start := 0; start < n; start += insertBatch {
		end := min(start+insertBatch, n)
		args := make([]any, 0, (end-start)*width)
		for i := start; i < end; i++ {
			args = append(args, row(i)...)
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(insertSQL(head, width, end-start)), args...); err != nil {
			return err
		}
	}
	return nil
}
