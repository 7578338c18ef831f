package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
)

// A command's insert and its finish send, in their own statements, the
// notifications they carry, as they commit: a server listening on the
// database hears the wake of a stored command, then the finish that
// recorded its result, then the one that found it finished.
func TestCommandWritesSendTheirNotifications(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dsn := pgtest.DSN(t)
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.SendsNotifications() {
		t.Fatal("the PostgreSQL store says it sends no notifications")
	}
	listener, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close(context.Background())
	if _, err := listener.Exec(ctx, `LISTEN test_commands`); err != nil {
		t.Fatal(err)
	}
	heard := func(want string) {
		t.Helper()
		n, err := listener.WaitForNotification(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v", want, err)
		}
		if n.Channel != "test_commands" || n.Payload != want {
			t.Fatalf("heard %s %q, want %q", n.Channel, n.Payload, want)
		}
	}

	at := time.Unix(1, 0).UTC()
	m := session.Meta{ID: "s", Agent: "a", Owner: "o", Status: session.StatusReady, Created: at, Updated: at}
	if err := s.CreateSession(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	c := store.Command{ID: "c1", SessionID: "s", Owner: "o", Kind: "pause", Body: "{}", Created: at,
		Wake: store.Notification{Channel: "test_commands", Payload: "holder-a"}}
	if err := s.AddCommand(ctx, c); err != nil {
		t.Fatal(err)
	}
	heard("holder-a")
	got, err := s.GetCommand(ctx, "c1")
	if err != nil || got.Kind != "pause" || got.Body != "{}" {
		t.Fatalf("stored command = %+v, %v", got, err)
	}

	won := store.Notification{Channel: "test_commands", Payload: "c1 won"}
	lost := store.Notification{Channel: "test_commands", Payload: "c1"}
	if ok, err := s.FinishCommandAndNotify(ctx, "c1", `{"ok":true}`, at, won, lost); err != nil || !ok {
		t.Fatalf("first finish = %v, %v; want it to record the result", ok, err)
	}
	heard("c1 won")
	if ok, err := s.FinishCommandAndNotify(ctx, "c1", `{"ok":false}`, at, won, lost); err != nil || ok {
		t.Fatalf("second finish = %v, %v; want it to find the command finished", ok, err)
	}
	heard("c1")
	if got, err := s.GetCommand(ctx, "c1"); err != nil || got.Result != `{"ok":true}` {
		t.Fatalf("finished command = %+v, %v; want the first result", got, err)
	}
}
