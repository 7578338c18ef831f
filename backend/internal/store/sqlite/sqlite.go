// Package sqlite opens the store on an SQLite database file: the embedded
// default, one file under the data directory.
//
// Connections: SQLite allows one writer at a time per file. Rather than let
// several pooled connections race for the write lock and turn contention
// into SQLITE_BUSY errors and busy-wait sleeps, every write goes through a
// pool of exactly one connection, so writers queue in Go (database/sql hands
// the connection over in order) and never contend inside SQLite. Reads use
// a separate pool of query_only connections; in WAL mode they read a
// committed snapshot concurrently with the writer and never block it.
// busy_timeout still covers other processes on the same file (a second
// server, `sqlite3 .backup`), and write transactions begin IMMEDIATE so a
// transaction that reads before it writes takes the lock up front instead
// of failing to upgrade when another process wrote in between.
package sqlite

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/agents-os/agents/backend/internal/store"
)

// Memory opens a private in-memory database instead of a file. It lives as
// long as the Store and is not shared with any other Store.
const Memory = ":memory:"

// DefaultBusyTimeout is how long a statement waits for a lock another
// connection holds before it fails.
const DefaultBusyTimeout = 5 * time.Second

// Options tune Open.
type Options struct {
	// BusyTimeout is how long a statement waits for a lock another
	// connection holds; zero is DefaultBusyTimeout.
	BusyTimeout time.Duration
	// Holder is written into the database's lock file (its PID is this
	// process's), so a process that finds the database in use can name
	// and reach this one.
	Holder Holder
}

// Store is the store on one SQLite database.
type Store struct {
	*store.SQL
	write *sqlx.DB
	// lock is held while the Store is open; nil for Memory.
	lock *lockFile
}

var _ store.Store = (*Store)(nil)

// Open opens the database at path, creating the file if needed (not its
// directory; mode 0600, see createEmpty), and applies any migration it
// lacks. path is a plain file path
// or Memory.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if path == "" || strings.Contains(path, "?") {
		// The driver reads everything after '?' as its own parameters.
		return nil, fmt.Errorf("open sqlite: invalid database path %q", path)
	}
	var lk *lockFile
	if path != Memory {
		var err error
		if lk, err = lock(path, opts.Holder); err != nil {
			return nil, err
		}
		if err := createEmpty(path); err != nil {
			lk.release()
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
	}
	s, err := open(ctx, path, opts)
	if err != nil {
		lk.release()
		return nil, err
	}
	s.lock = lk
	return s, nil
}

// SetHolder records in the lock file where this process answers, once it
// knows (a server listens after it opened its database).
func (s *Store) SetHolder(h Holder) error {
	if s.lock == nil {
		return nil
	}
	return s.lock.write(h)
}

func open(ctx context.Context, path string, opts Options) (*Store, error) {
	// An in-memory database exists only on its one connection, so it
	// reads through the writer; a file gets its own reader pool, which
	// connects while the writer does and migrates: opening a connection
	// reads the schema, a quarter of the time a start took to open the
	// store. A migration the reader's connection did not see makes SQLite
	// read the schema again, at its next statement.
	readers := make(chan pool, 1)
	if path != Memory {
		go func() {
			db, err := connect(ctx, path, false, opts)
			readers <- pool{db, err}
		}()
	}
	closeReaders := func() {
		if path != Memory {
			if r := <-readers; r.err == nil {
				r.db.Close()
			}
		}
	}
	write, err := connect(ctx, path, true, opts)
	if err != nil {
		closeReaders()
		return nil, err
	}
	if err := store.Migrate(ctx, write, "sqlite"); err != nil {
		closeReaders()
		write.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	read := write
	if path != Memory {
		r := <-readers
		if r.err != nil {
			write.Close()
			return nil, r.err
		}
		read = r.db
	}
	return &Store{SQL: store.NewSQL(ctx, read, write, dialect()), write: write}, nil
}

// pool is a connected pool, or why it is not.
type pool struct {
	db  *sqlx.DB
	err error
}

// Close lets SQLite update its query planner statistics, then closes the
// database.
func (s *Store) Close() error {
	// optimize is cheap when there is nothing to do; it is advice, so a
	// failure (an already closed store) does not matter.
	_, _ = s.write.Exec(`PRAGMA optimize`)
	err := s.SQL.Close()
	s.lock.release()
	return err
}

// connect opens the writer pool (one connection) or the reader pool.
func connect(ctx context.Context, path string, writer bool, opts Options) (*sqlx.DB, error) {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	if writer {
		// WAL is a property of the file, set once by the writer;
		// synchronous=NORMAL in WAL mode syncs at checkpoints, not at every
		// commit: a power cut may lose the last commits but never corrupts.
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	// SQLite's page cache (2 MiB a connection by default) is memory the
	// Go runtime does not manage: its C allocator keeps what it grew to,
	// so the caches of the five connections, filled by a burst, stayed
	// resident for the process's life. The file's pages are in the
	// system's page cache anyway; the writer keeps more, for the b-tree
	// pages every commit touches. See BENCHMARKS.md, "Idle memory".
	q.Add("_pragma", fmt.Sprintf("cache_size(%d)", -cacheKiB(writer)))
	db, err := sqlx.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if writer {
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
	} else {
		n := max(4, runtime.GOMAXPROCS(0))
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
	}
	// Connections are kept for the life of the pool: closing the only
	// connection of an in-memory database would drop the database.
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return db, nil
}

func dialect() store.Dialect {
	return store.Dialect{Name: "sqlite", Classify: classify, Embedded: true}
}

// classify reads the extended result code of a driver error.
func classify(err error) store.Violation {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return store.ViolationNone
	}
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return store.ViolationUnique
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return store.ViolationForeignKey
	}
	switch e.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY:
		return store.ViolationUnavailable
	}
	return store.ViolationNone
}

// cacheKiB is a connection's page cache budget in KiB.
func cacheKiB(writer bool) int {
	if writer {
		return 1024
	}
	return 256
}
