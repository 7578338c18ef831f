package store

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite"
)

var update = flag.Bool("update", false, "write schema/sqlite.sql from the migrations")

// schemaFile is the schema a new SQLite database is made from.
const schemaFile = "schema/sqlite.sql"

// object is one row of sqlite_schema.
type object struct {
	Type    string `db:"type"`
	Name    string `db:"name"`
	Table   string `db:"tbl_name"`
	SQL     string `db:"sql"`
	applied string
}

// newSQLite opens a new database file in a test directory.
func newSQLite(t *testing.T, name string) *sqlx.DB {
	t.Helper()
	db, err := sqlx.Open("sqlite", filepath.Join(t.TempDir(), name)+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// schemaOf lists what the database holds: its objects, in the order they
// were made, and the migrations it records.
func schemaOf(t *testing.T, db *sqlx.DB) ([]object, []string) {
	t.Helper()
	var objects []object
	if err := db.Select(&objects, `SELECT type, name, tbl_name, COALESCE(sql, '') AS sql FROM sqlite_schema ORDER BY rowid`); err != nil {
		t.Fatal(err)
	}
	var applied []string
	if err := db.Select(&applied, `SELECT CAST(version AS TEXT) || ' ' || name FROM schema_migrations ORDER BY version`); err != nil {
		t.Fatal(err)
	}
	return objects, applied
}

// A new database is made from schema/sqlite.sql; it must be what the
// migrations make, object for object, with every migration recorded. With
// -update the file is written from the migrations' database.
func TestNewDatabaseSchemaIsTheMigrations(t *testing.T) {
	ctx := context.Background()
	stepwise := newSQLite(t, "stepwise.db")
	if err := migrate(ctx, stepwise, "sqlite", ""); err != nil {
		t.Fatal(err)
	}
	want, wantApplied := schemaOf(t, stepwise)
	if *update {
		var b strings.Builder
		b.WriteString("-- The schema the migrations in ../migrations/sqlite make: a new database\n")
		b.WriteString("-- is made from it at once. Written by TestNewDatabaseSchemaIsTheMigrations;\n")
		b.WriteString("-- after adding a migration run: go test ./backend/internal/store -run TestNewDatabaseSchemaIsTheMigrations -update\n")
		for _, o := range want {
			// SQLite makes its own objects (autoindexes, sqlite_sequence)
			// and Migrate the table of migrations.
			if o.SQL == "" || strings.HasPrefix(o.Name, "sqlite_") || o.Name == "schema_migrations" {
				continue
			}
			b.WriteString("\n" + o.SQL + ";\n")
		}
		if err := os.WriteFile(schemaFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", schemaFile)
	}
	text, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	fresh := newSQLite(t, "fresh.db")
	if err := migrate(ctx, fresh, "sqlite", string(text)); err != nil {
		t.Fatal(err)
	}
	got, gotApplied := schemaOf(t, fresh)
	if strings.Join(gotApplied, ", ") != strings.Join(wantApplied, ", ") {
		t.Errorf("a new database records the migrations %v, want %v", gotApplied, wantApplied)
	}
	if len(got) != len(want) {
		t.Errorf("a new database has %d objects, the migrations make %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("object %d of a new database:\n  %+v\nthe migrations make:\n  %+v\n(run go test ./backend/internal/store -run %s -update)", i, got[i], want[i], t.Name())
		}
	}
	// Made again, the database is left as it is.
	if err := Migrate(ctx, fresh, "sqlite"); err != nil {
		t.Fatal(err)
	}
}

// The file is the one Migrate reads.
func TestTheSchemaFileIsEmbedded(t *testing.T) {
	text, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if schema("sqlite") != string(text) {
		t.Error("the embedded schema differs from " + schemaFile)
	}
	if schema("postgres") != "" {
		t.Error("PostgreSQL has a schema file: its migrations would no longer run on a new database")
	}
}
