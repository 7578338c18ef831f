//go:build unix

package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pgAdminDSNEnv names the DSN of the PostgreSQL server the tests create
// their databases on (any database of it; the default is the local
// server with trust auth, as .ci/run starts it).
const pgAdminDSNEnv = "AGENTS_TEST_POSTGRES"

const defaultPGAdminDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// pgDSN creates an empty database and returns its DSN; the database is
// dropped when the test ends. Without a reachable PostgreSQL the test
// fails: the suite runs on a real server, never skipped.
func pgDSN(t *testing.T) string {
	t.Helper()
	admin := os.Getenv(pgAdminDSNEnv)
	if admin == "" {
		admin = defaultPGAdminDSN
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "agents_test_" + hex.EncodeToString(b[:])
	psql(t, admin, "CREATE DATABASE "+name)
	t.Cleanup(func() { psql(t, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", pgAdminDSNEnv, err)
	}
	u.Path = "/" + name
	return u.String()
}

// psql runs one statement with the psql client and returns its output,
// unaligned and without headers.
func psql(t *testing.T, dsn, sql string) string {
	t.Helper()
	out, err := exec.Command("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql).CombinedOutput()
	if err != nil {
		t.Fatalf("psql %q: %v\n%s(is PostgreSQL running on it? .ci/run starts it)", sql, err, out)
	}
	return strings.TrimSpace(string(out))
}

// eachStore runs test on SQLite and on PostgreSQL, in parallel subtests,
// with a directory for the servers and the database they use: a file in
// that directory, or a fresh PostgreSQL database. A server restarted on
// PostgreSQL keeps its --server-id (see startServe), so it takes back the
// leases of the process it replaces, as a restart on SQLite takes the
// file.
func eachStore(t *testing.T, test func(t *testing.T, dir, db string)) {
	t.Helper()
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "agents.db")
			if store == "postgres" {
				db = pgDSN(t)
			}
			test(t, dir, db)
		})
	}
}

// isPostgres says whether db is a PostgreSQL DSN rather than a SQLite file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}
