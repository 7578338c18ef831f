//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/store/pgtest"
)

// eachStore runs test on SQLite and on PostgreSQL, in parallel subtests,
// with a directory for the servers and the database they use: a file in
// that directory, or a fresh PostgreSQL database. A server restarted on
// PostgreSQL keeps its --server-id and has a short lease (see
// startServe), so it soon takes back the sessions of the process it
// replaces, as a restart on SQLite takes the file.
func eachStore(t *testing.T, test func(t *testing.T, dir, db string)) {
	t.Helper()
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "agents.db")
			if store == "postgres" {
				db = pgtest.DSN(t)
			}
			test(t, dir, db)
		})
	}
}

// isPostgres says whether db is a PostgreSQL DSN rather than a SQLite file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}
