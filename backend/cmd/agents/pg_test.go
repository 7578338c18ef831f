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
// that directory, or a fresh PostgreSQL database. On PostgreSQL the
// servers have a short lease (see startServe), so a server started after
// a crash takes the sessions of the crashed one over soon, as a restart
// on SQLite takes the file.
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
