package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// The schema of each dialect lives in migrations/<dialect>/NNNN_name.sql.
// A file is never edited once released: changes go into a new file, in
// every dialect directory, with the same number.
//
//go:embed migrations
var migrationFiles embed.FS

// A new database is made from the schema the migrations lead to, kept in
// schema/<dialect>.sql, rather than by running them one by one: SQLite
// compiles every statement, and reads each table's definition again
// after every CREATE and ALTER, so the 33 statements of the final schema
// took 3.4 ms through the seven migrations and take 1.7 ms at once,
// on every first start. The file is written from a database the
// migrations made (TestNewDatabaseSchemaIsTheMigrations, -update) and
// checked against it, so the two never differ. A dialect without the
// file runs its migrations.
//
// A new SQLite database file is not even made from the schema: it is a
// copy of an empty database the schema made, schema/sqlite.db (212 KB,
// in WAL mode, every migration recorded with applied 0), which package
// sqlite writes where no database is yet. Making one from the schema was
// half of a first start's opening of the store, most of it in SQLite's
// parser and in the page faults of its code (BENCHMARKS.md, "Start-up
// and idle memory"). It is kept as it is, not compressed: inflating it
// took longer than writing it, git compresses it anyway, and the binary
// maps its pages only when it writes one. The copy is written from
// schema/<dialect>.sql and checked against the migrations
// (TestTheEmptyDatabaseIsTheMigrations, -update).
//
//go:embed schema/*.sql
var schemaFiles embed.FS

//go:embed schema/sqlite.db
var emptySQLite string

// schema returns the current schema of dialect, "" when it has none.
func schema(dialect string) string {
	b, err := fs.ReadFile(schemaFiles, path.Join("schema", dialect+".sql"))
	if err != nil {
		return ""
	}
	return string(b)
}

// EmptyDatabase returns the file of an empty database of dialect with
// the current schema, to write where a new database is to be; "" when
// the dialect keeps none (PostgreSQL: a database is not a file).
func EmptyDatabase(dialect string) string {
	if dialect == "sqlite" {
		return emptySQLite
	}
	return ""
}

// Migration is one schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the migrations of a dialect in version order.
func Migrations(dialect string) ([]Migration, error) {
	dir := path.Join("migrations", dialect)
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations for %q: %w", dialect, err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || version <= 0 {
			return nil, fmt.Errorf("migration %s/%s: name must start with a positive number and '_'", dir, name)
		}
		if len(out) > 0 && out[len(out)-1].Version == version {
			return nil, fmt.Errorf("migration %s/%s: version %d used twice", dir, name, version)
		}
		text, err := fs.ReadFile(migrationFiles, path.Join(dir, name))
		if err != nil {
			return nil, err
		}
		// ReadDir sorts by name and the numbers are zero-padded, so the
		// versions come out ascending.
		out = append(out, Migration{Version: version, Name: strings.TrimSuffix(name, ".sql"), SQL: string(text)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no migrations for %q", dialect)
	}
	return out, nil
}

// Migrate brings the schema of db up to date: each migration not yet
// recorded in schema_migrations runs in its own transaction together with
// the row that records it, so a crash leaves it either applied and
// recorded or neither, and a restart simply carries on. A database that has
// a migration this binary does not know (written by a newer version) is
// refused rather than used with a schema the code does not understand.
//
// Concurrent servers on one database must not migrate at the same time:
// SQLite serializes them through its write lock (transactions begin
// IMMEDIATE); package postgres holds an advisory lock around Migrate.
func Migrate(ctx context.Context, db *sqlx.DB, dialect string) error {
	return migrate(ctx, db, dialect, schema(dialect))
}

// migrate is Migrate with current the schema a new database is made from
// ("": by its migrations).
func migrate(ctx context.Context, db *sqlx.DB, dialect, current string) error {
	ms, err := Migrations(dialect)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER NOT NULL PRIMARY KEY,
		name    TEXT    NOT NULL,
		applied BIGINT  NOT NULL)`)
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var newest int
	if err := db.GetContext(ctx, &newest, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if known := ms[len(ms)-1].Version; newest > known {
		return fmt.Errorf("database schema version %d is newer than this binary's %d", newest, known)
	}
	if newest == ms[len(ms)-1].Version {
		return nil
	}
	// Every pending migration in one transaction: a new database is made
	// in one commit instead of one per migration, and a failing migration
	// leaves the schema as it was.
	return WithTx(ctx, db, func(tx *sqlx.Tx) error {
		if newest == 0 && current != "" {
			if made, err := create(ctx, tx, current, ms); made || err != nil {
				return err
			}
		}
		for _, m := range ms {
			if err := apply(ctx, tx, m); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
		}
		return nil
	})
}

// create makes the current schema in a new database and records every
// migration as applied. It makes nothing (false) when a process starting
// at the same moment recorded a migration first: the caller then runs
// those left.
func create(ctx context.Context, tx *sqlx.Tx, current string, ms []Migration) (bool, error) {
	var applied int
	if err := tx.GetContext(ctx, &applied, `SELECT COUNT(*) FROM schema_migrations`); err != nil || applied > 0 {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, current); err != nil {
		return false, fmt.Errorf("create the schema: %w", err)
	}
	now := time.Now().UnixNano()
	for _, m := range ms {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO schema_migrations (version, name, applied)
			VALUES (?, ?, ?)`), m.Version, m.Name, now); err != nil {
			return false, err
		}
	}
	return true, nil
}

// apply runs one migration unless it is already recorded. The check is made
// inside the transaction so that two processes starting together cannot
// both apply it.
func apply(ctx context.Context, tx *sqlx.Tx, m Migration) error {
	var n int
	err := tx.GetContext(ctx, &n, tx.Rebind(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), m.Version)
	if err != nil || n > 0 {
		return err
	}
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(`INSERT INTO schema_migrations (version, name, applied)
		VALUES (?, ?, ?)`), m.Version, m.Name, time.Now().UnixNano())
	return err
}
