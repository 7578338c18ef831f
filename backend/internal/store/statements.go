package store

import (
	"context"
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
// The writer's statements are prepared when the store opens, never later:
// its pool has one connection, and preparing on the pool while a
// transaction holds that connection would wait for it forever. Inside a
// transaction a statement is bound with Tx.StmtxContext, which reuses the
// statement already compiled on the transaction's connection (or compiles
// it there) and never asks the pool for a connection. A statement belongs
// to the pool it was prepared on: bound into a transaction of the other
// pool it fails.
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
	// all lists every statement once, for close.
	all []*sqlx.Stmt

	// On the write pool.
	insertSession, insertTurn, commitMeta, updateMeta     *sqlx.Stmt
	deliverOne, insertDeferred, addMail, completeDeferred *sqlx.Stmt
	acquireLease, renewLease, releaseLease                *sqlx.Stmt
	putWatch, deleteWatch, deleteExpiredWatches           *sqlx.Stmt
	completePending, putHelperCall, putIdempotency        *sqlx.Stmt
	approvePending, checkFence                            *sqlx.Stmt
	addCommand, finishCommand, pruneCommands              *sqlx.Stmt
	// appendEvents[n-1] appends n events.
	appendEvents [eventBatch]*sqlx.Stmt
	// step[f][n] writes a change of a session's metadata with n new turns
	// (0 or 1), fenced when f is 1, when the dialect has StepStatement.
	step [2][2]*sqlx.Stmt

	// On the read pool, prepared on first use.
	getMeta, loadTurns, children, countByStatus *readStmt
	pendingMail, listMail, listPendingMail      *readStmt
	getDeferred, pendingDeferred, deferredRound *readStmt
	listWatches, helperChild, getIdempotency    *readStmt
	eventsAll, eventsSession, eventsOwner       *readStmt
	getLease, orphans, pendingCommands          *readStmt
	getCommand, watchersOf                      *readStmt
	reads                                       []*readStmt
}

// prepareStatements prepares every fixed statement on its pool. The schema
// must be migrated: a statement naming a missing table or column fails
// here, at open, rather than on first use.
func prepareStatements(ctx context.Context, read, write *sqlx.DB, d Dialect) (*statements, error) {
	st := &statements{}
	type prepared struct {
		dst   **sqlx.Stmt
		db    *sqlx.DB
		query string
	}
	var batches []prepared
	for n := 1; n <= eventBatch; n++ {
		batches = append(batches, prepared{&st.appendEvents[n-1], write, d.appendEventsSQL(n)})
	}
	if d.StepStatement {
		for f := range st.step {
			for n := range st.step[f] {
				batches = append(batches, prepared{&st.step[f][n], write, stepSQL(f == 1, n == 1)})
			}
		}
	}
	for _, p := range append([]prepared{
		{&st.insertSession, write, sqlInsertSession},
		{&st.insertTurn, write, insertSQL(sqlInsertTurns, turnColumns, 1)},
		{&st.commitMeta, write, sqlCommitMeta},
		{&st.updateMeta, write, sqlUpdateMeta},
		{&st.deliverOne, write, sqlDeliverOne},
		{&st.insertDeferred, write, insertSQL(sqlInsertDeferred, deferredInsertColumns, 1)},
		{&st.addMail, write, sqlAddMail},
		{&st.completeDeferred, write, sqlCompleteDeferred},
		{&st.acquireLease, write, sqlAcquireLease},
		{&st.renewLease, write, sqlRenewLease},
		{&st.releaseLease, write, sqlReleaseLease},
		{&st.putWatch, write, sqlPutWatch},
		{&st.deleteWatch, write, sqlDeleteWatch},
		{&st.deleteExpiredWatches, write, sqlDeleteExpiredWatches},
		{&st.completePending, write, sqlCompletePending},
		{&st.approvePending, write, sqlApprovePending},
		{&st.putHelperCall, write, sqlPutHelperCall},
		{&st.putIdempotency, write, sqlPutIdempotency},
		{&st.checkFence, write, fmt.Sprintf(sqlCheckFence, d.ShareLock)},
		{&st.addCommand, write, sqlAddCommand},
		{&st.finishCommand, write, sqlFinishCommand},
		{&st.pruneCommands, write, sqlPruneCommands},
	}, batches...) {
		stmt, err := p.db.PreparexContext(ctx, p.db.Rebind(p.query))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("prepare %s: %w", oneLine(p.query), err), st.close())
		}
		*p.dst = stmt
		st.all = append(st.all, stmt)
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
		{&st.getCommand, sqlGetCommand},
	} {
		*r.dst = &readStmt{db: read, query: read.Rebind(r.query)}
		st.reads = append(st.reads, *r.dst)
	}
	return st, nil
}

// close closes every statement. database/sql defers closing a statement's
// compiled copy on a connection until the connection is no longer in use,
// so this is safe while calls are still running; they then fail.
func (st *statements) close() error {
	var err error
	for _, stmt := range st.all {
		err = errors.Join(err, stmt.Close())
	}
	for _, r := range st.reads {
		err = errors.Join(err, r.close())
	}
	return err
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
	stmt, err := r.db.PreparexContext(ctx, r.query)
	if err != nil {
		return nil, fmt.Errorf("prepare %s: %w", oneLine(r.query), err)
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

// CheckStatements prepares every statement the store has not prepared yet,
// so that one naming a table or column the schema lacks fails now, not
// on first use. The tests call it; a server does not need to.
func (s *SQL) CheckStatements(ctx context.Context) error {
	var err error
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

// oneLine shortens a statement for an error message.
func oneLine(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 60 {
		q = q[:60] + "…"
	}
	return q
}
