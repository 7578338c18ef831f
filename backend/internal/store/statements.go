package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
)

// Prepared statements.
//
// Running a statement from its text compiles it every time (the SQLite
// driver does so on each call, and compiling was 14% of the kernel
// benchmark's CPU); a prepared one is compiled once per connection and
// only bound and run after that. So every statement whose text is fixed is
// prepared once and kept until the store closes.
//
// Statements whose text varies (IN lists, multi-row inserts, listing
// filters) are not cached: a cache keyed by text would need a bound and an
// eviction that may close a statement another goroutine is binding. Where
// such a statement is on the hot path, its one-row form (fixed text) is
// prepared and used whenever the count is one, which is what a step writes.
//
// The writer's statements (writeStmt) are prepared in the background once
// the store has opened: preparing the 38 of them (42 on PostgreSQL) was 7%
// of the CPU a server spent before it could answer its first request, and
// a start writes next to nothing. Until a statement is prepared it runs
// from its text. No write waits for the preparation, and none may: the
// writer's pool has one connection, and a write that waited for a
// statement to be prepared on the pool while its own transaction held
// that connection would wait forever. Inside a transaction a prepared
// statement is bound with Tx.StmtxContext, which reuses the statement
// already compiled on the transaction's connection (or compiles it there)
// and never asks the pool for a connection. A statement belongs to the
// pool it was prepared on: bound into a transaction of the other pool it
// fails.
//
// The reader's statements are prepared on first use (readStmt): a read
// runs on the pool, never inside a transaction, and holds no connection
// while it prepares, so it cannot wait on itself. Preparing the 22 of
// them at open was a tenth of a server's start-up CPU, most of it for
// statements a start never runs. CheckStatements prepares them all, for
// the tests: a statement naming a missing table or column fails there.
//
// database/sql keeps one compiled copy per connection and compiles it on a
// connection the first time it runs there, so the same design serves the
// reader pool of SQLite and a single pgx pool of PostgreSQL.
type statements struct {
	// On the write pool, prepared in the background (prepareWrites).
	insertSession, commitMeta, updateMeta                 *writeStmt
	deliverOne, insertDeferred, addMail, completeDeferred *writeStmt
	acquireLease, renewLease, releaseLease                *writeStmt
	putWatch, deleteWatch, deleteExpiredWatches           *writeStmt
	completePending, putHelperCall, putIdempotency        *writeStmt
	approvePending, checkFence                            *writeStmt
	addCommand, finishCommand, pruneCommands              *writeStmt
	admissionLocked, putReservation, releaseReservation   *writeStmt
	// insertTurns[n] appends n turns (1 to stepTurns).
	insertTurns [stepTurns + 1]*writeStmt
	// addSpend[n] adds n spend rows (1 or spendRows).
	addSpend [spendRows + 1]*writeStmt
	// addModelCall[n] records n model calls for the usage series (1 or
	// modelCallRows).
	addModelCall [modelCallRows + 1]*writeStmt
	// recordOutcome writes a run's end on the firings that wait for it,
	// at every run's stop.
	recordOutcome *writeStmt
	// appendEvents[n-1] appends n events.
	appendEvents [eventBatch]*writeStmt
	// step[f][n] writes a change of a session's metadata with n new turns
	// (0 or 1), fenced when f is 1, when the dialect has StepStatement.
	step   [2][2]*writeStmt
	writes []*writeStmt
	// stopPreparing ends prepareWrites early (the store closes);
	// writesPrepared is closed when it has returned, with writesErr
	// holding what it could not prepare.
	stopPreparing  context.CancelFunc
	writesPrepared chan struct{}
	writesErr      error

	// On the read pool, prepared on first use.
	getMeta, loadTurns, children, countByStatus *readStmt
	pendingMail, listMail, listPendingMail      *readStmt
	getDeferred, pendingDeferred, deferredRound *readStmt
	listWatches, helperChild, getIdempotency    *readStmt
	eventsAll, eventsSession, eventsOwner       *readStmt
	getLease, orphans, pendingCommands          *readStmt
	getCommand, watchersOf                      *readStmt
	anyBudget, budgetsInForce, admission        *readStmt
	treeBudget                                  *readStmt
	waitingCommands                             *readStmt
	// numberEvents, eventSeqs and eventsPending, only where positions are
	// given after the commit (Dialect.PositionsAfterCommit); numberEvents
	// writes but runs as a read does, on the pool, outside any
	// transaction.
	numberEvents, eventSeqs, eventsPending *readStmt
	reads                                  []*readStmt
}

// newStatements sets up every fixed statement on its pool and starts
// preparing the writer's. The schema must be migrated.
func newStatements(ctx context.Context, read, write *sqlx.DB, d Dialect) *statements {
	st := &statements{}
	w := func(dst **writeStmt, query string) {
		*dst = &writeStmt{db: write, query: write.Rebind(query)}
		st.writes = append(st.writes, *dst)
	}
	for _, ws := range []struct {
		dst   **writeStmt
		query string
	}{
		{&st.insertSession, sqlInsertSession},
		{&st.insertTurns[1], insertSQL(sqlInsertTurns, turnColumns, 1)},
		{&st.insertTurns[2], insertSQL(sqlInsertTurns, turnColumns, 2)},
		{&st.commitMeta, sqlCommitMeta},
		{&st.updateMeta, sqlUpdateMeta},
		{&st.deliverOne, sqlDeliverOne},
		{&st.insertDeferred, insertSQL(sqlInsertDeferred, deferredInsertColumns, 1)},
		{&st.addMail, sqlAddMail},
		{&st.completeDeferred, sqlCompleteDeferred},
		{&st.acquireLease, sqlAcquireLease},
		{&st.renewLease, sqlRenewLease},
		{&st.releaseLease, sqlReleaseLease},
		{&st.putWatch, sqlPutWatch},
		{&st.deleteWatch, sqlDeleteWatch},
		{&st.deleteExpiredWatches, sqlDeleteExpiredWatches},
		{&st.completePending, sqlCompletePending},
		{&st.approvePending, sqlApprovePending},
		{&st.putHelperCall, sqlPutHelperCall},
		{&st.putIdempotency, sqlPutIdempotency},
		{&st.checkFence, fmt.Sprintf(sqlCheckFence, d.ShareLock)},
		{&st.addCommand, sqlAddCommand},
		{&st.finishCommand, sqlFinishCommand},
		{&st.pruneCommands, sqlPruneCommands},
		{&st.admissionLocked, sqlAdmission},
		{&st.putReservation, sqlPutReservation},
		{&st.releaseReservation, sqlReleaseReservation},
		{&st.addSpend[1], insertSQL(sqlAddSpend, 5, 1) + sqlAddSpendConflict},
		{&st.addSpend[spendRows], insertSQL(sqlAddSpend, 5, spendRows) + sqlAddSpendConflict},
		{&st.addModelCall[1], insertSQL(sqlAddModelCalls, modelCallColumns, 1)},
		{&st.addModelCall[modelCallRows], insertSQL(sqlAddModelCalls, modelCallColumns, modelCallRows)},
		{&st.recordOutcome, sqlRecordOutcome},
	} {
		w(ws.dst, ws.query)
	}
	for n := 1; n <= eventBatch; n++ {
		w(&st.appendEvents[n-1], d.appendEventsSQL(n))
	}
	if d.StepStatement {
		for f := range st.step {
			for n := range st.step[f] {
				w(&st.step[f][n], stepSQL(f == 1, n == 1))
			}
		}
	}
	for _, r := range []struct {
		dst   **readStmt
		query string
	}{
		{&st.getMeta, sqlGetMeta},
		{&st.loadTurns, sqlLoadTurns},
		{&st.children, sqlChildren},
		{&st.countByStatus, sqlCountByStatus},
		{&st.pendingMail, sqlPendingMail},
		{&st.listMail, sqlListMail},
		{&st.listPendingMail, sqlListPendingMail},
		{&st.getDeferred, sqlGetDeferred},
		{&st.pendingDeferred, sqlPendingDeferred},
		{&st.deferredRound, sqlDeferredRound},
		{&st.listWatches, sqlListWatches},
		{&st.watchersOf, sqlWatchersOf},
		{&st.helperChild, sqlHelperChild},
		{&st.getIdempotency, sqlGetIdempotency},
		{&st.eventsAll, sqlEventsAll},
		{&st.eventsSession, sqlEventsSession},
		{&st.eventsOwner, sqlEventsOwner},
		{&st.getLease, sqlGetLease},
		{&st.orphans, sqlOrphans},
		{&st.pendingCommands, sqlPendingCommands},
		{&st.waitingCommands, sqlWaitingCommands},
		{&st.getCommand, sqlGetCommand},
		{&st.anyBudget, sqlAnyBudget},
		{&st.budgetsInForce, sqlBudgetsInForce},
		{&st.admission, sqlAdmission},
		{&st.treeBudget, sqlTreeBudget},
	} {
		*r.dst = &readStmt{db: read, query: read.Rebind(r.query)}
		st.reads = append(st.reads, *r.dst)
	}
	if d.PositionsAfterCommit {
		st.numberEvents = &readStmt{db: write, query: sqlNumberEvents}
		st.eventSeqs = &readStmt{db: write, query: sqlEventSeqs}
		st.eventsPending = &readStmt{db: write, query: sqlEventsPending}
		st.reads = append(st.reads, st.numberEvents, st.eventSeqs, st.eventsPending)
	}
	prepCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	st.stopPreparing, st.writesPrepared = stop, make(chan struct{})
	go st.prepareWrites(prepCtx)
	return st
}

// testHookPrepareWrites, when set, runs before the writer's statements are
// prepared: a test holds the preparation back with it.
var testHookPrepareWrites func()

// prepareWrites prepares the writer's statements one at a time, each
// taking the pool's connection only while it compiles, so writes go on in
// between. What it cannot prepare keeps running from its text.
func (st *statements) prepareWrites(ctx context.Context) {
	defer close(st.writesPrepared)
	if testHookPrepareWrites != nil {
		testHookPrepareWrites()
	}
	var errs []error
	for _, w := range st.writes {
		if err := w.prepare(ctx); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	st.writesErr = errors.Join(errs...)
}

// close closes every statement. database/sql defers closing a statement's
// compiled copy on a connection until the connection is no longer in use,
// so this is safe while calls are still running; they then fail.
func (st *statements) close() error {
	st.stopPreparing()
	<-st.writesPrepared
	var err error
	for _, w := range st.writes {
		if stmt := w.stmt.Swap(nil); stmt != nil {
			err = errors.Join(err, stmt.Close())
		}
	}
	for _, r := range st.reads {
		err = errors.Join(err, r.close())
	}
	return err
}

// stmtRunner runs one statement with its arguments: a prepared statement
// (*sqlx.Stmt) or the statement's text on a pool or a transaction.
type stmtRunner interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
	GetContext(ctx context.Context, dest any, args ...any) error
	SelectContext(ctx context.Context, dest any, args ...any) error
}

// writeStmt is a statement of the writer pool, prepared in the background
// after open; until then it runs from its text.
type writeStmt struct {
	db    *sqlx.DB
	query string
	stmt  atomic.Pointer[sqlx.Stmt]
}

func (w *writeStmt) prepare(ctx context.Context) error {
	stmt, err := prepareOn(ctx, w.db, w.query)
	if err != nil {
		return err
	}
	w.stmt.Store(stmt)
	return nil
}

// prepareOn prepares query on db, naming the statement when it fails.
func prepareOn(ctx context.Context, db *sqlx.DB, query string) (*sqlx.Stmt, error) {
	stmt, err := db.PreparexContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", oneLine(query), err)
	}
	return stmt, nil
}

// onPool runs the statement on the pool, outside any transaction.
func (w *writeStmt) onPool() stmtRunner {
	if stmt := w.stmt.Load(); stmt != nil {
		return stmt
	}
	return textStmt{w.db, w.query}
}

// ExecContext runs the statement on the pool.
func (w *writeStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return w.onPool().ExecContext(ctx, args...)
}

// GetContext runs the statement on the pool for one row into dest.
func (w *writeStmt) GetContext(ctx context.Context, dest any, args ...any) error {
	return w.onPool().GetContext(ctx, dest, args...)
}

// SelectContext runs the statement on the pool for every row into dest.
func (w *writeStmt) SelectContext(ctx context.Context, dest any, args ...any) error {
	return w.onPool().SelectContext(ctx, dest, args...)
}

// in runs the statement in tx, on the transaction's connection.
func (w *writeStmt) in(ctx context.Context, tx *sqlx.Tx) stmtRunner {
	if stmt := w.stmt.Load(); stmt != nil {
		return tx.StmtxContext(ctx, stmt)
	}
	return textStmt{tx, w.query}
}

// textStmt runs a statement from its text, compiled by the call.
type textStmt struct {
	on    sqlx.ExtContext
	query string
}

func (t textStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return t.on.ExecContext(ctx, t.query, args...)
}

func (t textStmt) GetContext(ctx context.Context, dest any, args ...any) error {
	return sqlx.GetContext(ctx, t.on, dest, t.query, args...)
}

func (t textStmt) SelectContext(ctx context.Context, dest any, args ...any) error {
	return sqlx.SelectContext(ctx, t.on, dest, t.query, args...)
}

// readStmt is a statement of the reader pool, prepared the first time it
// runs. A failed preparation (the database unreachable) is tried again
// by the next call.
type readStmt struct {
	db    *sqlx.DB
	query string
	mu    sync.Mutex // held while preparing
	stmt  atomic.Pointer[sqlx.Stmt]
}

// prepared returns the statement, preparing it first if need be.
func (r *readStmt) prepared(ctx context.Context) (*sqlx.Stmt, error) {
	if stmt := r.stmt.Load(); stmt != nil {
		return stmt, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if stmt := r.stmt.Load(); stmt != nil {
		return stmt, nil
	}
	stmt, err := prepareOn(ctx, r.db, r.query)
	if err != nil {
		return nil, err
	}
	r.stmt.Store(stmt)
	return stmt, nil
}

// GetContext runs the statement for one row into dest.
func (r *readStmt) GetContext(ctx context.Context, dest any, args ...any) error {
	stmt, err := r.prepared(ctx)
	if err != nil {
		return err
	}
	return stmt.GetContext(ctx, dest, args...)
}

// SelectContext runs the statement for every row into dest.
func (r *readStmt) SelectContext(ctx context.Context, dest any, args ...any) error {
	stmt, err := r.prepared(ctx)
	if err != nil {
		return err
	}
	return stmt.SelectContext(ctx, dest, args...)
}

// close closes the statement if it was prepared.
func (r *readStmt) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if stmt := r.stmt.Swap(nil); stmt != nil {
		return stmt.Close()
	}
	return nil
}

// CheckStatements waits for the writer's statements to be prepared and
// prepares every reader statement not prepared yet, so that one naming a
// table or column the schema lacks fails now, not on first use. The tests
// call it; a server does not need to.
func (s *SQL) CheckStatements(ctx context.Context) error {
	select {
	case <-s.st.writesPrepared:
	case <-ctx.Done():
		return ctx.Err()
	}
	err := s.st.writesErr
	for _, r := range s.st.reads {
		_, e := r.prepared(ctx)
		err = errors.Join(err, e)
	}
	return err
}

// insertSQL is the text of an INSERT of rows rows: head names the table and
// columns and ends with VALUES; width is the number of columns.
func insertSQL(head string, width, rows int) string {
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	var q strings.Builder
	q.Grow(len(head) + 1 + rows*(len(tuple)+2))
	q.WriteString(head)
	q.WriteString(" ")
	for i := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(tuple)
	}
	return q.String()
}

// execRows runs an INSERT of rows, width arguments each in args, inside
// tx, through prepared statements of fixed sizes: stmts[n], when set, is
// the statement of n rows, and stmts[1] must be set. The largest that
// fits goes first, as often as it fits. In the server's process a
// statement costs no round trip, so prepared statements run a few times
// are cheaper than compiling one of the batch's length.
func execRows(ctx context.Context, tx *sqlx.Tx, stmts []*writeStmt, width int, args []any) error {
	for len(args) > 0 {
		n := min(len(args)/width, len(stmts)-1)
		for stmts[n] == nil {
			n--
		}
		if _, err := stmts[n].in(ctx, tx).ExecContext(ctx, args[:n*width]...); err != nil {
			return err
		}
		args = args[n*width:]
	}
	return nil
}

// oneLine shortens a statement for an error message.
func oneLine(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 60 {
		q = q[:60] + "…"
	}
	return q
}
