// Package pgtest gives tests throwaway PostgreSQL databases on a real
// server: postgres://postgres@127.0.0.1:5432 by default, or the server
// URL in AGENTS_TEST_POSTGRES. A test that needs PostgreSQL fails, never
// skips, when the server cannot be reached: the PostgreSQL tests are part
// of the suite, not an option of it.
package pgtest

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvServer names the environment variable that overrides the server:
// a postgres:// URL whose user may create databases. Its database part is
// where the test databases are created from (default "postgres").
const EnvServer = "AGENTS_TEST_POSTGRES"

// DefaultServer is the server the tests use when EnvServer is not set.
const DefaultServer = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Server returns the URL of the test server.
func Server() string {
	if s := os.Getenv(EnvServer); s != "" {
		return s
	}
	return DefaultServer
}

// DSN creates a database with a random name on the test server and
// returns its URL. The database is dropped when the test ends, with any
// connection still open to it terminated.
func DSN(t testing.TB) string {
	t.Helper()
	server := Server()
	admin := connect(t, server)
	defer admin.Close(context.Background())

	name := "agents_test_" + strings.ToLower(rand.Text())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() { drop(t, server, ident) })
	// A commit need not wait for the disk: a test database does not
	// outlive a crash of its server anyway, and a commit is still durable
	// across every restart of the programs under test.
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+ident+" SET synchronous_commit = off"); err != nil {
		t.Fatalf("pgtest: set up database %s: %v", name, err)
	}

	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("pgtest: %s is not a URL: %v", EnvServer, err)
	}
	u.Path = "/" + name
	return u.String()
}

// drop drops a test database, ending the connections still open to it (a
// store a test left open, a server process it killed).
func drop(t testing.TB, server, ident string) {
	t.Helper()
	admin := connect(t, server)
	defer admin.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		t.Errorf("pgtest: drop database %s: %v", ident, err)
	}
}

// connect opens a connection to the server, failing t with what to do
// when there is no server to reach.
func connect(t testing.TB, server string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(server)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", EnvServer, err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: PostgreSQL is not reachable at %s:%d: %v\n"+
			"These tests need a PostgreSQL server (15 or newer) that user %q may create databases on. Start the local one with\n"+
			"\tpg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start\n"+
			"or point %s at another, e.g. %s=postgres://user@host:5432/postgres",
			cfg.Host, cfg.Port, err, cfg.User, EnvServer, EnvServer)
	}
	return conn
}
