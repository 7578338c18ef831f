package pgtest_test

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agents-os/agents/backend/internal/store/pgtest"
)

func TestDSNIsAFreshDatabaseDroppedAtCleanup(t *testing.T) {
	ctx := context.Background()
	var name string
	t.Run("use", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(u.Path, "/")
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		// Left open on purpose: cleanup must end it to drop the database.
		var tables int
		if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("a fresh database has %d tables", tables)
		}
		if other := pgtest.DSN(t); other == dsn {
			t.Errorf("two calls gave the same database %s", dsn)
		}
	})
	admin, err := pgx.Connect(ctx, pgtest.Server())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var n int
	if err := admin.QueryRow(ctx, `SELECT COUNT(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if name == "" || n != 0 {
		t.Fatalf("database %q still exists after its test", name)
	}
}

// fatalTB records the message of Fatalf and ends the goroutine, as a
// failing test does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestDSNFailsSayingHowToStartTheServer(t *testing.T) {
	t.Setenv(pgtest.EnvServer, "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2")
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		pgtest.DSN(tb)
		t.Error("DSN returned without a server")
	}()
	<-done
	for _, want := range []string{"not reachable at 127.0.0.1:1", "pg_ctlcluster", pgtest.EnvServer} {
		if !strings.Contains(tb.msg, want) {
			t.Errorf("message %q does not say %q", tb.msg, want)
		}
	}
}
