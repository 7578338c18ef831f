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

// TestAPooledConnectionTheServerEndedIsNotUsed ends the store's idle
// connections (pg_terminate_backend, as a restart of the database or an
// operator does; or the network between them closes) right after they
// were used. The next read and the next write must not fail on a dead
// connection of the pool while a fresh one works.
func TestAPooledConnectionTheServerEndedIsNotUsed(t *testing.T) {
	tests := []struct {
		name string
		end  func(t *testing.T, admin *pgx.Conn, p *pgtest.Proxy)
	}{
		{"terminated backends", func(t *testing.T, admin *pgx.Conn, _ *pgtest.Proxy) { terminateAll(t, admin) }},
		{"network closed", func(t *testing.T, _ *pgx.Conn, p *pgtest.Proxy) { p.Cut() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := pgtest.DSN(t)
			p := pgtest.NewProxy(t, dsn, nil)
			s, err := postgres.Open(ctx, p.DSN(), postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			admin, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close(ctx)
			now := time.Unix(1700000000, 0).UTC()
			meta := session.Meta{ID: "s1", Agent: "a", Owner: "o", Status: session.StatusReady, Created: now, Updated: now}
			if err := s.CreateSession(ctx, meta, nil); err != nil {
				t.Fatal(err)
			}
			for round := range 3 {
				if _, err := s.GetMeta(ctx, "s1"); err != nil {
					t.Fatal(err)
				}
				tc.end(t, admin, p)
				if _, err := s.GetMeta(ctx, "s1"); err != nil {
					t.Fatalf("round %d: the read after the connections ended: %v", round, err)
				}
				tc.end(t, admin, p)
				m := meta
				m.Title, m.Updated = "renamed", now.Add(time.Duration(round+1)*time.Second)
				c := &store.Change{Meta: &m, Events: []store.Event{{SessionID: "s1", Owner: "o", Kind: "session.updated", Time: m.Updated, Body: []byte("renamed")}}}
				if err := s.Commit(ctx, c); err != nil {
					t.Fatalf("round %d: the write after the connections ended: %v", round, err)
				}
			}
		})
	}
}

// terminateAll ends every connection to admin's database but admin's
// own, and waits until their backends are gone.
func terminateAll(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	var n int
	err := admin.QueryRow(context.Background(), `SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) AS ended
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t WHERE ended`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no connection of the store to end")
	}
}
