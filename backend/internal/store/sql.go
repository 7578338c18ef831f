package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
)

// Dialect is what the shared SQL needs to know about one database family.
type Dialect struct {
	// Name names the family and its migration directory: "sqlite" or
	// "postgres".
	Name string
	// Classify tells which constraint, if any, a driver error reports.
	Classify func(error) Violation
	// LockName, when set, is the statement that takes a lock named by its
	// one argument until the transaction ends, so that admissions against
	// one budget, and creations of one stored agent's slug in any case,
	// happen one at a time when several servers share the database
	// (PostgreSQL: an advisory lock on the name's hash). SQLite's single
	// writer needs none.
	LockName string
	// ShareLock ends a SELECT that must hold the rows it read until the
	// transaction ends (PostgreSQL: " FOR SHARE"), so a fenced change and
	// a server taking the lease over are ordered; SQLite's single writer
	// needs none.
	ShareLock string
	// SkipLocked ends a SELECT whose rows one transaction takes to change,
	// leaving those another transaction holds to it (PostgreSQL: " FOR
	// UPDATE SKIP LOCKED"), so servers sharing a database claim different
	// rows; SQLite's single writer needs none.
	SkipLocked string
	// RowLock ends a SELECT whose rows the transaction will change, so a
	// second one waits for it (PostgreSQL: " FOR UPDATE"); SQLite's single
	// writer needs none.
	RowLock string
	// Notifies says a statement can send a notification to the servers
	// listening on the database (PostgreSQL: pg_notify), delivered only
	// if its transaction commits. See Commands.SendsNotifications.
	Notifies bool
	// StepStatement says the database runs data-modifying statements in
	// WITH (PostgreSQL): a change of a session's metadata with at most one
	// new turn, what a step writes, is then one statement, with its lease
	// check when it is fenced, instead of two or three, so one round trip
	// to the database. See stepSQL.
	StepStatement bool
	// Embedded says the database runs in the server's process (SQLite):
	// a statement costs no round trip, so running a prepared one-row
	// statement once per row is cheaper than compiling one of many rows.
	Embedded bool
	// PositionsAfterCommit says events are appended without a seq and
	// given one after their transaction commits, by the database's
	// number_events (PostgreSQL, several servers on one database: see
	// its migration 0010), which also notifies the other servers. Without
	// it the one writer (SQLite) gives seqs as it appends, from the last
	// insert id.
	PositionsAfterCommit bool
}

// SQL implements Store with queries shared by every dialect. Reads go to
// one pool and writes to another: a dialect that has no reason to split
// them (PostgreSQL) passes the same pool twice.
type SQL struct {
	read, write *sqlx.DB
	st          *statements
	dialect     Dialect
	// budgets is what an embedded database holds of budgets (rowsUnread,
	// rowsAbsent, rowsPresent): see budgetsInForce.
	budgets atomic.Int32
	// firings is what it holds of firings waiting for their run's
	// outcome: see outcomeWanted.
	firings   atomic.Int32
	closeOnce sync.Once
	closeErr  error
}

var _ Store = (*SQL)(nil)

// NewSQL returns a store over pools whose schema is already migrated; its
// statements are prepared in the background or on first use (see
// statements). The store owns the pools: Close closes them.
func NewSQL(ctx context.Context, read, write *sqlx.DB, d Dialect) *SQL {
	return &SQL{read: read, write: write, st: newStatements(ctx, read, write, d), dialect: d}
}

// Close closes the statements, then the pools, once; later calls return
// the first result.
func (s *SQL) Close() error {
	s.closeOnce.Do(func() {
		err := errors.Join(s.st.close(), s.write.Close())
		if s.read != s.write {
			err = errors.Join(err, s.read.Close())
		}
		s.closeErr = err
	})
	return s.closeErr
}
