package store

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite"
)

var update = flag.Bool("update", false, "write schema/sqlite.sql from the migrations, and schema/sqlite.db from it")

// schemaFile is the schema a new SQLite database is made from, and
// emptyFile the empty database file made from it.
const (
	schemaFile = "schema/sqlite.sql"
	emptyFile  = "schema/sqlite.db"
)

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

// A new SQLite database file is a copy of schema/sqlite.db: it must hold
// what the migrations make, object for object, every migration recorded
// (applied 0: they came with the file), in WAL mode, and nothing else.
// With -update it is written from schema/sqlite.sql (so, run with
// TestNewDatabaseSchemaIsTheMigrations, from the migrations).
func TestTheEmptyDatabaseIsTheMigrations(t *testing.T) {
	ctx := context.Background()
	if *update {
		writeEmptyDatabase(t)
	}
	stepwise := newSQLite(t, "stepwise.db")
	if err := migrate(ctx, stepwise, "sqlite", ""); err != nil {
		t.Fatal(err)
	}
	want, wantApplied := schemaOf(t, stepwise)

	path := filepath.Join(t.TempDir(), "agents.db")
	if err := os.WriteFile(path, readFile(t, emptyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sqlx.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, gotApplied := schemaOf(t, db)
	if strings.Join(gotApplied, ", ") != strings.Join(wantApplied, ", ") {
		t.Errorf("the empty database records the migrations %v, want %v", gotApplied, wantApplied)
	}
	// VACUUM keeps the objects, not the order they were made in.
	byName := func(a, b object) int { return strings.Compare(a.Type+" "+a.Name, b.Type+" "+b.Name) }
	slices.SortFunc(got, byName)
	slices.SortFunc(want, byName)
	if !slices.Equal(got, want) {
		t.Errorf("the empty database's objects:\n  %+v\nthe migrations make:\n  %+v\n(run go test ./backend/internal/store -run 'TestNewDatabaseSchemaIsTheMigrations|%s' -update)", got, want, t.Name())
	}
	for pragma, want := range map[string]string{"journal_mode": "wal", "integrity_check": "ok", "page_size": "4096", "freelist_count": "0"} {
		var got string
		if err := db.Get(&got, "PRAGMA "+pragma); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
		}
	}
	var rows, nonzero int
	if err := db.Get(&nonzero, `SELECT COUNT(*) FROM schema_migrations WHERE applied <> 0`); err != nil || nonzero != 0 {
		t.Errorf("%d migrations recorded with a time (%v), want applied 0", nonzero, err)
	}
	for _, o := range got {
		if o.Type != "table" || o.Name == "schema_migrations" || strings.HasPrefix(o.Name, "sqlite_") {
			continue
		}
		var n int
		if err := db.Get(&n, `SELECT COUNT(*) FROM "`+o.Name+`"`); err != nil {
			t.Fatal(err)
		}
		rows += n
	}
	if rows != 0 {
		t.Errorf("the empty database holds %d rows", rows)
	}
	// Opened by Migrate, it is left as it is.
	if err := Migrate(ctx, db, "sqlite"); err != nil {
		t.Fatal(err)
	}
	if _, applied := schemaOf(t, db); !slices.Equal(applied, wantApplied) {
		t.Errorf("after Migrate: %v", applied)
	}
}

// readFile reads a file of the test's directory.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeEmptyDatabase makes an empty database from schema/sqlite.sql and
// writes it to schema/sqlite.db: checkpointed into the
// one file, its migrations recorded at time 0 and vacuumed (no bytes of
// the times left in free space), so that the same schema gives the same
// bytes.
func writeEmptyDatabase(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	text, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "empty.db")
	db, err := sqlx.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db, "sqlite", string(text)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE schema_migrations SET applied = 0`, `VACUUM`, `PRAGMA wal_checkpoint(TRUNCATE)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	raw := readFile(t, path)
	if err := os.WriteFile(emptyFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d bytes", emptyFile, len(raw))
}

// The files are the ones Migrate and package sqlite read.
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
	if *update {
		return // the binary embeds the files as they were before
	}
	if EmptyDatabase("sqlite") != string(readFile(t, emptyFile)) {
		t.Error("the embedded empty database differs from " + emptyFile)
	}
	if EmptyDatabase("postgres") != "" {
		t.Error("PostgreSQL has an empty database file")
	}
}

// Issue 33: migration 9 gives the stored agents from before their
// generation (the version their current life began at), and the sessions
// from before the generation they ran: a session of an agent deleted and
// created again since is not of the current one.
func TestMigration9GivesAgentsAndTheirSessionsTheirGeneration(t *testing.T) {
	ctx := context.Background()
	db := newSQLite(t, "agents.db")
	ms, err := Migrations("sqlite")
	if err != nil {
		t.Fatal(err)
	}
	var nine *Migration
	for _, m := range ms {
		if m.Version == 9 {
			nine = &m
			continue
		}
		if m.Version > 9 {
			continue
		}
		if _, err := db.ExecContext(ctx, m.SQL); err != nil {
			t.Fatalf("migration %s: %v", m.Name, err)
		}
	}
	if nine == nil {
		t.Fatal("no migration 9")
	}
	// "phoenix" lived at versions 1-2, was deleted, and lives again since
	// version 3 (created at 300); "plain" was never deleted; "filed" is
	// a file agent.
	for _, q := range []string{
		`INSERT INTO stored_agents (slug, version, created, updated) VALUES ('phoenix', 4, 300, 400), ('plain', 2, 100, 200)`,
		`INSERT INTO agent_versions (slug, version, definition, author, created) VALUES
			('phoenix', 1, '{}', 'a', 100), ('phoenix', 2, '{}', 'a', 150), ('phoenix', 3, '{}', 'a', 300), ('phoenix', 4, '{}', 'a', 400),
			('plain', 1, '{}', 'a', 100), ('plain', 2, '{}', 'a', 200)`,
		`INSERT INTO sessions (id, agent, owner, status, created, updated) VALUES
			('old', 'phoenix', 'o', 'ready', 120, 120), ('new', 'phoenix', 'o', 'ready', 350, 350),
			('plain', 'plain', 'o', 'ready', 150, 150), ('filed', 'filed', 'o', 'ready', 150, 150)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := db.ExecContext(ctx, nine.SQL); err != nil {
		t.Fatalf("migration 9: %v", err)
	}
	var agents []struct {
		Slug       string `db:"slug"`
		Generation int64  `db:"generation"`
	}
	if err := db.SelectContext(ctx, &agents, `SELECT slug, generation FROM stored_agents ORDER BY slug`); err != nil {
		t.Fatal(err)
	}
	if len(agents) != 2 || agents[0].Generation != 3 || agents[1].Generation != 1 {
		t.Errorf("generations = %+v, want phoenix 3 and plain 1", agents)
	}
	var sessions []struct {
		ID         string `db:"id"`
		Generation int64  `db:"agent_generation"`
	}
	if err := db.SelectContext(ctx, &sessions, `SELECT id, agent_generation FROM sessions ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, s := range sessions {
		got[s.ID] = s.Generation
	}
	// old ran phoenix's first life: any generation but the current one.
	if got["new"] != 3 || got["old"] == 3 || got["old"] == 0 || got["plain"] != 1 || got["filed"] != 0 {
		t.Errorf("sessions' generations = %v, want new 3, old another, plain 1, filed 0", got)
	}
}
