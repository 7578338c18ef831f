package sqlite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/session"
)

// TestANewDatabaseIsTheEmptyDatabasesCopy: where no database is (no file,
// or an empty one), Open writes the embedded empty database, whose
// migrations say applied 0, only its owner may read it, and a WAL or
// shared-memory file left without its database is removed rather than
// replayed into the new one. A database already there is opened as it
// is.
func TestANewDatabaseIsTheEmptyDatabasesCopy(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{"no file", func(*testing.T, string) {}},
		{"an empty file", func(t *testing.T, path string) { write(t, path, "") }},
		{"a WAL left without its database", func(t *testing.T, path string) {
			write(t, path+"-wal", "not the WAL of this database")
			write(t, path+"-shm", "nor its index")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agents.db")
			tc.prepare(t, path)
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CreateSession(ctx, session.Meta{ID: "s1", Agent: "a", Owner: "o", Status: session.StatusReady}, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("the new database's mode = %v (%v), want 0600", info.Mode(), err)
			}
			db := sqlx.MustOpen("sqlite", path)
			defer db.Close()
			var timed, sessions int
			if err := db.Get(&timed, `SELECT COUNT(*) FROM schema_migrations WHERE applied <> 0`); err != nil || timed != 0 {
				t.Errorf("%d migrations carry a time (%v): the database was not the empty one's copy", timed, err)
			}
			if err := db.Get(&sessions, `SELECT COUNT(*) FROM sessions`); err != nil || sessions != 1 {
				t.Errorf("sessions = %d (%v), want the one written", sessions, err)
			}
			entries, _ := os.ReadDir(filepath.Dir(path))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".new") {
					t.Errorf("left %s behind", e.Name())
				}
			}
		})
	}

	t.Run("a database already there", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "agents.db")
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSession(ctx, session.Meta{ID: "kept", Agent: "a", Owner: "o", Status: session.StatusReady}, nil); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s, err = Open(ctx, path); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.GetMeta(ctx, "kept"); err != nil {
			t.Errorf("reopened, the session is gone: %v", err)
		}
	})

	t.Run("no directory", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing", "agents.db")
		_, err := Open(ctx, path)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("Open in a missing directory = %v, want an error naming %s", err, path)
		}
	})
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
