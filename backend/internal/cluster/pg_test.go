package cluster

import (
	"context"
	"crypto/rand"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// testServer is the PostgreSQL server the tests use.
const testServer = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// testDSN creates a database of its own for a test, dropped when it
// ends: notifications are per database, so tests running together do
// not hear each other.
func testDSN(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, testServer)
	if err != nil {
		t.Fatalf("connect to PostgreSQL at %s (is it running?): %v", testServer, err)
	}
	defer admin.Close(context.Background())
	name := "agents_test_" + strings.ToLower(rand.Text())
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgx.Connect(ctx, testServer)
		if err != nil {
			t.Error(err)
			return
		}
		defer admin.Close(context.Background())
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u, _ := url.Parse(testServer)
	u.Path = "/" + name
	return u.String()
}

func newTestPGBus(t *testing.T, dsn string) *PGBus {
	t.Helper()
	b, err := NewPGBus(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestPGBus(t *testing.T) {
	t.Parallel()
	testBus(t, func(t *testing.T, n int) []Bus {
		dsn := testDSN(t)
		out := make([]Bus, n)
		for i := range out {
			out[i] = newTestPGBus(t, dsn)
		}
		return out
	})
}

// A listener whose connection is terminated reconnects, calls
// OnReconnect and hears notifications again, on every channel.
func TestPGBusReconnects(t *testing.T) {
	t.Parallel()
	dsn := testDSN(t)
	b := newTestPGBus(t, dsn)
	events, mail := newRecorder(), newRecorder()
	defer b.Listen(ChannelEvents, events.add)()
	defer b.Listen(ChannelMail, mail.add)()
	reconnected := make(chan struct{}, 1)
	b.OnReconnect(func() { reconnected <- struct{}{} })
	ctx := context.Background()
	if err := b.Notify(ctx, ChannelEvents, "1"); err != nil {
		t.Fatal(err)
	}
	events.wait(t, 1)

	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var ended int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, ListenerName).Scan(&ended); err != nil {
		t.Fatal(err)
	}
	if ended != 1 {
		t.Fatalf("terminated %d listener connections, want 1", ended)
	}
	select {
	case <-reconnected:
	case <-time.After(10 * time.Second):
		t.Fatal("OnReconnect not called 10s after the listener lost its connection")
	}
	if err := b.Notify(ctx, ChannelEvents, "2"); err != nil {
		t.Fatal(err)
	}
	if err := b.Notify(ctx, ChannelMail, "s1"); err != nil {
		t.Fatal(err)
	}
	if p := events.wait(t, 2); p[1] != "2" {
		t.Fatalf("events heard %v after the reconnect", p)
	}
	if p := mail.wait(t, 1); p[0] != "s1" {
		t.Fatalf("mail heard %v after the reconnect", p)
	}
}

// A notification sent as soon as Listen returns is heard, also on a
// channel added while the listener waits for notifications on others.
func TestPGBusListenReturnsListening(t *testing.T) {
	t.Parallel()
	b := newTestPGBus(t, testDSN(t))
	defer b.Listen(ChannelEvents, func(string) {})()
	time.Sleep(50 * time.Millisecond) // the listener is waiting now
	for i, ch := range []string{ChannelCommands, ChannelCommandDone, ChannelLeases} {
		got := newRecorder()
		defer b.Listen(ch, got.add)()
		if err := b.Notify(context.Background(), ch, ch); err != nil {
			t.Fatal(err)
		}
		if p := got.wait(t, 1); p[0] != ch {
			t.Fatalf("channel %d heard %v", i, p)
		}
	}
}

func TestPGBusRefusesBadDSN(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := NewPGBus(ctx, "postgres://postgres@127.0.0.1:1/none?connect_timeout=2", nil); err == nil {
		t.Fatal("NewPGBus on a closed port: no error")
	}
}
