package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/agents-os/agents/backend/internal/errs"
)

// Violation is the kind of constraint a driver error reports.
type Violation int

// The violations a dialect tells apart; everything else is ViolationNone.
const (
	ViolationNone Violation = iota
	ViolationUnique
	ViolationForeignKey
	// ViolationUnavailable is a database that refuses work for now
	// (locked, busy, disk full, read-only): a retry may succeed.
	ViolationUnavailable
)

func unknownSession(id string) *errs.Error {
	return errs.NotFound(errs.CodeUnknownSession, "unknown session %s", id)
}

func unknownToken(token string) *errs.Error {
	return errs.NotFound(errs.CodeUnknownToken, "unknown continuation token %s", token)
}

// translate is the one place where an error from the database becomes an
// error kind. missing is what a missing row means to the caller: it is
// returned for sql.ErrNoRows and for a foreign-key violation (every foreign
// key points at a session, so it means "no such session"); with missing nil
// those stay internal. A unique violation is errs.Conflict. Everything else
// is wrapped with what was being done and stays internal, so its text (SQL,
// paths) reaches the log and never a client.
func (s *SQL) translate(err error, missing *errs.Error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if missing != nil && errors.Is(err, sql.ErrNoRows) {
		return missing
	}
	switch s.dialect.Classify(err) {
	case ViolationForeignKey:
		if missing != nil {
			e := *missing
			e.Err = err
			return &e
		}
	case ViolationUnique:
		e := errs.Conflict(errs.CodeAlreadyExists, "%s: already exists", what)
		e.Err = err
		return e
	case ViolationUnavailable:
		e := errs.Unavailable(errs.CodeStoreUnavailable, "the database refused the request for now; retry shortly")
		e.Err = fmt.Errorf("%s: %w", what, err)
		return e
	}
	return fmt.Errorf("%s: %w", what, err)
}
