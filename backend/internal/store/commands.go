package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
)

// AddCommand implements Commands.
func (s *SQL) AddCommand(ctx context.Context, c Command) error {
	var err error
	if c.Wake.Channel != "" && s.dialect.Notifies {
		_, err = s.write.ExecContext(ctx, s.write.Rebind(sqlAddCommandAndNotify),
			c.ID, c.SessionID, c.Owner, c.Kind, c.Body, nanos(c.Created), c.Wake.Channel, c.Wake.Payload)
	} else {
		_, err = s.st.addCommand.ExecContext(ctx, c.ID, c.SessionID, c.Owner, c.Kind, c.Body, nanos(c.Created))
	}
	return s.translate(err, nil, "add command %s", c.ID)
}

const sqlAddCommand = `INSERT INTO commands (id, session_id, owner, kind, body, created) VALUES (?, ?, ?, ?, ?, ?)`

// sqlAddCommandAndNotify is sqlAddCommand sending a notification as it
// commits (PostgreSQL).
const sqlAddCommandAndNotify = `WITH added AS (` + sqlAddCommand + ` RETURNING id)
	SELECT CAST(pg_notify(?, ?) AS TEXT) FROM added`

// SendsNotifications implements Commands.
func (s *SQL) SendsNotifications() bool { return s.dialect.Notifies }

// PendingCommands implements Commands.
func (s *SQL) PendingCommands(ctx context.Context, holder string) ([]Command, error) {
	var rows []commandRow
	if err := s.st.pendingCommands.SelectContext(ctx, &rows, holder); err != nil {
		return nil, s.translate(err, nil, "list pending commands")
	}
	out := make([]Command, len(rows))
	for i, r := range rows {
		out[i] = r.command()
	}
	return out, nil
}

const sqlPendingCommands = `SELECT c.id, c.session_id, c.owner, c.kind, c.body, c.created, c.result, c.done
	FROM commands c JOIN run_leases l ON l.session_id = c.session_id
	WHERE c.done IS NULL AND l.holder = ?
	ORDER BY c.created, c.id`

// HasPendingCommands implements Commands.
func (s *SQL) HasPendingCommands(ctx context.Context, sessionID string) (bool, error) {
	var ids []string
	if err := s.st.waitingCommands.SelectContext(ctx, &ids, sessionID); err != nil {
		return false, s.translate(err, nil, "look for the pending commands of %s", sessionID)
	}
	return len(ids) > 0, nil
}

const sqlWaitingCommands = `SELECT id FROM commands WHERE session_id = ? AND done IS NULL LIMIT 1`

// FinishCommand implements Commands.
func (s *SQL) FinishCommand(ctx context.Context, id, result string, at time.Time) (bool, error) {
	res, err := s.st.finishCommand.ExecContext(ctx, result, nanos(at), id)
	if err != nil {
		return false, s.translate(err, nil, "finish command %s", id)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("finish command %s: %w", id, err)
	}
	return n > 0, nil
}

const sqlFinishCommand = `UPDATE commands SET result = ?, done = ?, body = '' WHERE id = ? AND done IS NULL`

// FinishCommandAndNotify implements Commands.
func (s *SQL) FinishCommandAndNotify(ctx context.Context, id, result string, at time.Time, won, lost Notification) (bool, error) {
	if !s.dialect.Notifies {
		return false, fmt.Errorf("finish command %s: this database sends no notifications", id)
	}
	if won.Channel != lost.Channel {
		return false, fmt.Errorf("finish command %s: the notifications are for two channels", id)
	}
	var n int
	var sent string
	err := s.write.QueryRowxContext(ctx, s.write.Rebind(sqlFinishCommandAndNotify), result, nanos(at), id, won.Channel, won.Payload, lost.Payload).Scan(&n, &sent)
	if err != nil {
		return false, s.translate(err, nil, "finish command %s", id)
	}
	return n > 0, nil
}

// sqlFinishCommandAndNotify is sqlFinishCommand sending one notification
// or the other as it commits, as it finished the command or found it
// finished (PostgreSQL).
const sqlFinishCommandAndNotify = `WITH finished AS (` + sqlFinishCommand + ` RETURNING id)
	SELECT (SELECT count(*) FROM finished),
		CAST(pg_notify(?, CASE WHEN EXISTS (SELECT 1 FROM finished) THEN ? ELSE ? END) AS TEXT)`

// GetCommand implements Commands.
func (s *SQL) GetCommand(ctx context.Context, id string) (Command, error) {
	var r commandRow
	if err := s.st.getCommand.GetContext(ctx, &r, id); err != nil {
		return Command{}, s.translate(err, errs.NotFound(errs.CodeUnknownCommand, "unknown command %s", id), "read command %s", id)
	}
	return r.command(), nil
}

const sqlGetCommand = `SELECT id, session_id, owner, kind, body, created, result, done FROM commands WHERE id = ?`

// PruneCommands implements Commands.
func (s *SQL) PruneCommands(ctx context.Context, before time.Time) (int, error) {
	res, err := s.st.pruneCommands.ExecContext(ctx, nanos(before))
	if err != nil {
		return 0, s.translate(err, nil, "prune commands")
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// sqlPruneCommands keeps every command a holder may still apply: one not
// finished is pending however old it is (its servers may both have died,
// and the next holder applies it), unless its session is gone, which no
// server will hold again.
const sqlPruneCommands = `DELETE FROM commands WHERE created < ?
	AND (done IS NOT NULL OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = commands.session_id))`

type commandRow struct {
	ID        string  `db:"id"`
	SessionID string  `db:"session_id"`
	Owner     string  `db:"owner"`
	Kind      string  `db:"kind"`
	Body      string  `db:"body"`
	Created   int64   `db:"created"`
	Result    *string `db:"result"`
	Done      *int64  `db:"done"`
}

func (r commandRow) command() Command {
	c := Command{ID: r.ID, SessionID: r.SessionID, Owner: r.Owner, Kind: r.Kind, Body: r.Body, Created: fromNanos(r.Created)}
	if r.Result != nil {
		c.Result = *r.Result
	}
	if r.Done != nil {
		c.Done = fromNanos(*r.Done)
	}
	return c
}
