//go:build unix

package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
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
