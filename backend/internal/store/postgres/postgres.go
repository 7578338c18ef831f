// Package postgres opens the store on a PostgreSQL database: the store of
// several servers sharing one database.
//
// Connections: PostgreSQL runs concurrent writers itself (row locks, MVCC),
// so unlike SQLite there is one pool for reads and writes, through pgx's
// database/sql driver. Statements are prepared on it once and database/sql
// compiles each on a connection the first time it runs there.
//
// Order across servers: migrations run under the session advisory lock
// MigrationsLockKey (docs/protocol.md), held on a connection of its own,
// so servers that start together on an empty database migrate it once.
// Commits take no lock between servers: their events are appended without
// a position and numbered after the commit (number_events, migration
// 0010), so that positions still follow commit order.
package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/store"
)

// MigrationsLockKey is the advisory lock key of migrations (docs/protocol.md,
// "Several servers on one database"): "agents" in ASCII, plus one (the
// key before it ordered event commits until migration 0010). Advisory
// locks belong to one database, so they only meet other programs' locks
// on the same database.
const MigrationsLockKey int64 = 0x6167656e7473 + 1

// Options tune Open.
type Options struct {
	// MaxConns bounds the pool; zero is DefaultMaxConns, and it is at
	// least 2 (opening holds the migrations lock on one connection while
	// it migrates on another).
	MaxConns int
}

// DefaultMaxConns is the default pool size: enough for the reads of many
// clients beside the writer, while several servers together stay well
// under PostgreSQL's default limit of 100 connections.
func DefaultMaxConns() int { return max(8, 2*runtime.GOMAXPROCS(0)) }

// IsDSN reports whether dsn names a PostgreSQL database rather than an
// SQLite file.
func IsDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Store is the store on one PostgreSQL database.
type Store struct {
	*store.SQL
	db *sqlx.DB
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at dsn (a postgres:// or postgresql://
// URL), applies any migration it lacks and prepares the store's
// statements.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns()
	}
	opts.MaxConns = max(opts.MaxConns, 2)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's parse error already hides the password.
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	where := fmt.Sprintf("postgres %s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
	bound(cfg)
	db := sqlx.NewDb(stdlib.OpenDB(*cfg, stdlib.OptionShouldPing(shouldPing)), "pgx")
	db.SetMaxOpenConns(opts.MaxConns)
	db.SetMaxIdleConns(opts.MaxConns)
	// Connections are renewed now and then, so a pool follows a database
	// that moved behind a proxy or a DNS name, and idle ones are let go.
	db.SetConnMaxLifetime(30 * time.Minute)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", where, err)
	}
	if err := migrate(ctx, cfg); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", where, err)
	}
	return &Store{SQL: store.NewSQL(ctx, db, db, Dialect()), db: db}, nil
}

// The bounds of every wait on the database (see bound), the defaults of
// the settings of the same names, which a DSN may set otherwise
// (?lock_timeout=30s&…).
const (
	// IdleInTransactionTimeout ends, on the database's side, a transaction
	// whose server stopped talking in the middle of it (frozen, paused,
	// cut off), and with it the locks it holds, and lets the positions of
	// the events committed after it began be given (number_events waits
	// for every transaction older than theirs). Well under the lease TTL
	// (runner.DefaultLeaseTTL), so the others write again before a
	// frozen server's sessions are even due to move; far above what any
	// transaction of the store spends between two statements.
	IdleInTransactionTimeout = 5 * time.Second
	// LockTimeout bounds a wait for a lock, so that a write held up by
	// whatever holds one (a transaction that does not end) fails as the
	// database being unavailable, which is retried, instead of hanging.
	// Above IdleInTransactionTimeout, so a frozen server's lock costs the
	// others a wait, not an error.
	LockTimeout = 10 * time.Second
	// StatementTimeout bounds a statement, so that none holds its locks,
	// or its caller, for ever: the store's statements take milliseconds.
	// Migrations, which may take long, are not bounded (see migrate).
	StatementTimeout = time.Minute
	// Keepalive probes find a connection whose other end is gone (a
	// server's machine, the network between) within keepAliveIdle +
	// keepAliveCount × keepAliveInterval, on both sides: the database
	// ends the backend of a server it cannot reach, and the locks it
	// held, and a server drops a connection to a database it cannot
	// reach, one with a statement in flight included (userTimeout).
	keepAliveIdle     = 5 * time.Second
	keepAliveInterval = 5 * time.Second
	keepAliveCount    = 3
)

// bound makes every wait on a connection of cfg end: the settings above,
// unless the DSN set them, and TCP keepalives on the socket.
func bound(cfg *pgx.ConnConfig) {
	set := func(name, value string) {
		if _, ok := cfg.RuntimeParams[name]; !ok {
			cfg.RuntimeParams[name] = value
		}
	}
	set("idle_in_transaction_session_timeout", strconv.FormatInt(IdleInTransactionTimeout.Milliseconds(), 10))
	set("lock_timeout", strconv.FormatInt(LockTimeout.Milliseconds(), 10))
	set("statement_timeout", strconv.FormatInt(StatementTimeout.Milliseconds(), 10))
	set("tcp_keepalives_idle", strconv.Itoa(int(keepAliveIdle.Seconds())))
	set("tcp_keepalives_interval", strconv.Itoa(int(keepAliveInterval.Seconds())))
	set("tcp_keepalives_count", strconv.Itoa(keepAliveCount))
	dialer := &net.Dialer{
		Timeout: cfg.ConnectTimeout,
		KeepAliveConfig: net.KeepAliveConfig{
			Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount,
		},
		Control: userTimeout(keepAliveIdle + keepAliveCount*keepAliveInterval),
	}
	cfg.DialFunc = dialer.DialContext
}

// writeCheckWait is how long CheckWrites waits for the event positions'
// lock: numbering holds it for a moment, within one statement, so a wait
// this long means it is held by what does not let go.
const writeCheckWait = time.Second

// CheckWrites reports whether what is written now would reach readers:
// it takes the row lock every numbering of events takes (number_events),
// waiting at most writeCheckWait, and lets it go at once.
func (s *Store) CheckWrites(ctx context.Context) error {
	err := store.WithTx(ctx, s.db, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT set_config('lock_timeout', $1, true)`, strconv.FormatInt(writeCheckWait.Milliseconds(), 10)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `SELECT last FROM event_positions FOR UPDATE`)
		return err
	})
	if err != nil {
		return fmt.Errorf("take the event positions' lock: %w", err)
	}
	return nil
}

// shouldPing says whether a pooled connection is pinged before it is
// used again: after a second unused, as pgx does by default, and at once
// when its socket says the server closed it or is telling why (a backend
// ended by an operator or a restart of the database). A connection whose
// ping fails is dropped and database/sql takes another: a request must
// not fail because the pool kept a dead connection while a new one works.
// Once a statement was sent on a connection, whether it ran is not known,
// so it is never sent again; the ping is what keeps that from happening
// on a connection already dead.
func shouldPing(_ context.Context, p stdlib.ShouldPingParams) bool {
	return p.IdleDuration > time.Second || closedOrTalking(p.Conn.PgConn().Conn())
}

// migrate runs store.Migrate while it holds the migrations lock, on
// connections of its own that no statement or lock timeout bounds (see
// bound): a migration may take long, and a server that starts while
// another migrates waits for it, then finds the schema up to date. The
// lock is a session lock, released as the connections close, so a server
// that dies mid-migration releases it too, and its migration transaction
// rolls back.
func migrate(ctx context.Context, cfg *pgx.ConnConfig) error {
	unbounded := cfg.Copy()
	unbounded.RuntimeParams["statement_timeout"] = "0"
	unbounded.RuntimeParams["lock_timeout"] = "0"
	db := sqlx.NewDb(stdlib.OpenDB(*unbounded), "pgx")
	defer db.Close()
	conn, err := db.Connx(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, MigrationsLockKey); err != nil {
		return fmt.Errorf("take the migrations lock: %w", err)
	}
	return store.Migrate(ctx, db, "postgres")
}

// Dialect is PostgreSQL's part of the shared SQL.
func Dialect() store.Dialect {
	return store.Dialect{
		Name:                 "postgres",
		Classify:             Classify,
		ShareLock:            " FOR SHARE",
		SkipLocked:           " FOR UPDATE SKIP LOCKED",
		RowLock:              " FOR UPDATE",
		LockName:             "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))",
		PositionsAfterCommit: true,
		StepStatement:        true,
		Notifies:             true,
	}
}

// Classify tells which constraint a driver error reports, and which errors
// are the database refusing work for now: a lost or refused connection, a
// server shutting down or short of resources, a transaction chosen as a
// deadlock or serialization victim. Those are worth a retry; everything
// else (a bad statement, a violated check) would fail the same way again.
func Classify(err error) store.Violation {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller gave up: not the database's doing. (pgx marks these
		// safe to retry and a deadline is a net.Error, so they are told
		// apart first.)
		return store.ViolationNone
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return store.ViolationUnique
		case "23503": // foreign_key_violation
			return store.ViolationForeignKey
		case "40001", // serialization_failure
			"40P01", // deadlock_detected
			"55P03", // lock_not_available: lock_timeout
			"25P03", // idle_in_transaction_session_timeout: the transaction was ended, nothing of it kept
			"57014", // query_canceled: statement_timeout (a canceled context is told apart above)
			"57P01", // admin_shutdown
			"57P02", // crash_shutdown
			"57P03", // cannot_connect_now
			"25006": // read_only_sql_transaction: a standby, mid-failover
			return store.ViolationUnavailable
		}
		switch pe.Code[:2] {
		case "08", // connection exception
			"53", // insufficient resources: disk full, out of memory, too many connections
			"58": // system error: I/O
			return store.ViolationUnavailable
		}
		return store.ViolationNone
	}
	if lostConnection(err) {
		return store.ViolationUnavailable
	}
	return store.ViolationNone
}

// lostConnection reports an error of the connection rather than of the
// statement: the server went away, could not be reached, or the driver
// had already closed the connection.
func lostConnection(err error) bool {
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	var opErr *net.OpError
	return errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &connectErr) || errors.As(err, &opErr) ||
		(errors.As(err, &netErr) && netErr.Timeout()) ||
		pgconn.SafeToRetry(err)
}
