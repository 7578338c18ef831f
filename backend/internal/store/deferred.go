package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Deferred calls, like mail, are ordered by a database-assigned seq: the
// calls of one round share a created time but must come back in the order
// the model asked for them.

// GetDeferred implements DeferredCalls.
func (s *SQL) GetDeferred(ctx context.Context, token string) (session.DeferredCall, error) {
	var r deferredRow
	if err := s.st.getDeferred.GetContext(ctx, &r, token); err != nil {
		return session.DeferredCall{}, s.translate(err, unknownToken(token), "get deferred call %s", token)
	}
	return r.call()
}

// PendingDeferred implements DeferredCalls.
func (s *SQL) PendingDeferred(ctx context.Context, sessionID string) ([]session.DeferredCall, error) {
	return s.selectCalls(ctx, s.st.pendingDeferred, sessionID)
}

// DeferredRound implements DeferredCalls.
func (s *SQL) DeferredRound(ctx context.Context, sessionID string, round int) ([]session.DeferredCall, error) {
	return s.selectCalls(ctx, s.st.deferredRound, sessionID, round)
}

const (
	sqlGetDeferred     = `SELECT ` + deferredColumns + ` FROM deferred_calls WHERE token = ?`
	sqlPendingDeferred = `SELECT ` + deferredColumns + ` FROM deferred_calls
		WHERE session_id = ? AND completed IS NULL ORDER BY seq`
	sqlDeferredRound = `SELECT ` + deferredColumns + ` FROM deferred_calls
		WHERE session_id = ? AND round = ? ORDER BY seq`
)

func (s *SQL) selectCalls(ctx context.Context, stmt *readStmt, args ...any) ([]session.DeferredCall, error) {
	var rows []deferredRow
	if err := stmt.SelectContext(ctx, &rows, args...); err != nil {
		return nil, s.translate(err, nil, "list deferred calls")
	}
	return calls(rows)
}

// CompleteDeferred implements DeferredCalls. The guarded UPDATE is the
// whole decision: of two racing answers exactly one matches the row.
func (s *SQL) CompleteDeferred(ctx context.Context, token string, result session.ToolResult, at time.Time) (session.DeferredCall, error) {
	payload, err := encode(result)
	if err != nil {
		return session.DeferredCall{}, fmt.Errorf("complete deferred call %s: %w", token, err)
	}
	var rows []deferredRow
	if err := s.st.completeDeferred.SelectContext(ctx, &rows, payload, nanos(at), token); err != nil {
		return session.DeferredCall{}, s.translate(err, nil, "complete deferred call %s", token)
	}
	if len(rows) == 1 {
		return rows[0].call()
	}
	// Nothing matched: either there is no such call or it was answered.
	if _, err := s.GetDeferred(ctx, token); err != nil {
		return session.DeferredCall{}, err
	}
	return session.DeferredCall{}, errs.FailedPrecondition(errs.CodeCallCompleted, "call %s was already completed", token)
}

const sqlCompleteDeferred = `UPDATE deferred_calls
	SET result = ?, completed = ? WHERE token = ? AND completed IS NULL
	RETURNING ` + deferredColumns

// deferredInsert is a deferred call encoded for its INSERT.
type deferredInsert struct {
	token, sessionID, reason string
	round                    int
	call                     string
	created                  int64
}

// encodeDeferred checks that every call belongs to the committing session
// and encodes it. A call is stored unanswered: answers come through
// CompleteDeferred.
func encodeDeferred(sessionID string, cs []session.DeferredCall) ([]deferredInsert, error) {
	out := make([]deferredInsert, len(cs))
	for i, c := range cs {
		if c.Token == "" || c.SessionID != sessionID {
			return nil, errs.Invalid(errs.CodeInvalidCall, "deferred call %q must have a token and belong to session %s", c.Token, sessionID)
		}
		call, err := encode(c.Call)
		if err != nil {
			return nil, fmt.Errorf("deferred call %s: %w", c.Token, err)
		}
		out[i] = deferredInsert{token: c.Token, sessionID: c.SessionID, reason: c.Reason,
			round: c.Round, call: call, created: nanos(c.Created)}
	}
	return out, nil
}

// sqlInsertDeferred heads the INSERT of deferred calls;
// deferredInsertColumns is its width.
const (
	sqlInsertDeferred = `INSERT INTO deferred_calls
		(token, session_id, round, tool_call, reason, created) VALUES`
	deferredInsertColumns = 6
)

func (s *SQL) insertDeferred(ctx context.Context, tx *sqlx.Tx, cs []deferredInsert) error {
	if len(cs) == 0 {
		return nil
	}
	err := insertRows(ctx, tx, s.st.insertDeferred, sqlInsertDeferred, deferredInsertColumns, len(cs),
		func(i int) []any {
			c := cs[i]
			return []any{c.token, c.sessionID, c.round, c.call, c.reason, c.created}
		})
	if err != nil {
		return s.translate(err, unknownSession(cs[0].sessionID), "store deferred calls of %s", cs[0].sessionID)
	}
	return nil
}
