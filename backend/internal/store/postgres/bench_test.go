package postgres_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/storetest"
)

// BenchmarkCommitStep measures committed steps per second on PostgreSQL
// (storetest.BenchCommitStep), beside SQLite's. Commits wait for the WAL
// flush, as they do by default in production (pgtest's databases skip it).
func BenchmarkCommitStep(b *testing.B) {
	storetest.BenchCommitStep(b, func(b *testing.B) store.Store {
		u, err := url.Parse(pgtest.DSN(b))
		if err != nil {
			b.Fatal(err)
		}
		q := u.Query()
		q.Set("synchronous_commit", "on")
		u.RawQuery = q.Encode()
		s, err := postgres.Open(context.Background(), u.String(), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
