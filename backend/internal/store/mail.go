package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Mail is ordered by seq, a sequence the database assigns on insert, not by
// its created time: two pieces of mail may carry the same time, and the
// sender's clock is not the order the mailbox received them in.

// AddMail implements Mailbox.
func (s *SQL) AddMail(ctx context.Context, m session.Mail) error {
	if m.ID == "" {
		return errs.Invalid(errs.CodeInvalidMail, "mail needs an id")
	}
	body, err := encode(m.Body)
	if err != nil {
		return fmt.Errorf("add mail %s: %w", m.ID, err)
	}
	_, err = s.st.addMail.ExecContext(ctx, m.ID, m.SessionID, string(m.Sender.Kind), m.Sender.Name, string(m.Priority),
		body, nanos(m.Created), nullNanos(m.Delivered))
	if err != nil {
		return s.translate(err, unknownSession(m.SessionID), "add mail %s", m.ID)
	}
	return nil
}

const sqlAddMail = `INSERT INTO mail (` + mailColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// PendingMail implements Mailbox.
func (s *SQL) PendingMail(ctx context.Context, sessionID string) ([]session.Mail, error) {
	return s.selectMail(ctx, s.st.pendingMail, sessionID)
}

// ListMail implements Mailbox.
func (s *SQL) ListMail(ctx context.Context, sessionID string, pendingOnly bool) ([]session.Mail, error) {
	if pendingOnly {
		return s.selectMail(ctx, s.st.listPendingMail, sessionID)
	}
	return s.selectMail(ctx, s.st.listMail, sessionID)
}

const (
	sqlPendingMail = `SELECT ` + mailColumns + ` FROM mail
		WHERE session_id = ? AND delivered IS NULL ORDER BY seq`
	sqlListMail = `SELECT ` + mailColumns + ` FROM mail
		WHERE session_id = ? ORDER BY seq DESC`
	sqlListPendingMail = `SELECT ` + mailColumns + ` FROM mail
		WHERE session_id = ? AND delivered IS NULL ORDER BY seq DESC`
)

func (s *SQL) selectMail(ctx context.Context, stmt *readStmt, sessionID string) ([]session.Mail, error) {
	var rows []mailRow
	if err := stmt.SelectContext(ctx, &rows, sessionID); err != nil {
		return nil, s.translate(err, nil, "list mail of %s", sessionID)
	}
	return mails(rows)
}

// MarkDelivered implements Mailbox. One UPDATE … RETURNING both marks and
// reports: the database decides, row by row, which caller flips delivered
// from NULL, so racing callers can never both claim the same mail (a
// SELECT followed by an UPDATE could, under READ COMMITTED). Its IN list
// makes its text vary, so it is not prepared.
func (s *SQL) MarkDelivered(ctx context.Context, ids []string, at time.Time) ([]string, error) {
	ids = dedupe(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	q, args, err := sqlx.In(`UPDATE mail SET delivered = ?
		WHERE delivered IS NULL AND id IN (?) RETURNING id`, nanos(at), ids)
	if err != nil {
		return nil, fmt.Errorf("mark mail delivered: %w", err)
	}
	var marked []string
	if err := s.write.SelectContext(ctx, &marked, s.write.Rebind(q), args...); err != nil {
		return nil, s.translate(err, nil, "mark mail delivered")
	}
	// RETURNING has no defined order; answer in the caller's.
	newly := make(map[string]bool, len(marked))
	for _, id := range marked {
		newly[id] = true
	}
	out := make([]string, 0, len(marked))
	for _, id := range ids {
		if newly[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// SessionsWithPendingMail returns the sessions that have undelivered mail.
func (s *SQL) SessionsWithPendingMail(ctx context.Context) ([]string, error) {
	var ids []string
	if err := s.read.SelectContext(ctx, &ids, `SELECT DISTINCT session_id FROM mail WHERE delivered IS NULL`); err != nil {
		return nil, s.translate(err, nil, "list sessions with mail")
	}
	return ids, nil
}
