package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agents-os/agents/backend/internal/store/pgtest"
)

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
		dsn := pgtest.DSN(t)
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
	dsn := pgtest.DSN(t)
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
	b := newTestPGBus(t, pgtest.DSN(t))
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

// Deltas cross servers over PostgreSQL, a large one in parts under its
// payload limit.
func TestRelayOverPostgreSQL(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	a, b := newRelayServer(t, newTestPGBus(t, dsn), "a"), newRelayServer(t, newTestPGBus(t, dsn), "b")
	big := strings.Repeat("0123456789abcdef", 2000)
	for _, text := range []string{"before", big, "after"} {
		a.publish(delta("s", text))
	}
	got := b.texts(t, 3)
	if got[0] != "s:before" || got[1] != "s:"+big || got[2] != "s:after" {
		t.Fatalf("got %d deltas of %d, %d and %d bytes", len(got), len(got[0]), len(got[1]), len(got[2]))
	}
	a.texts(t, 3) // its own, once
}
