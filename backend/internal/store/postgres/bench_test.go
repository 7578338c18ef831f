package postgres_test

import (
	"context"
	"testing"

	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/storetest"
)

// BenchmarkCommitStep measures committed steps per second on PostgreSQL
// (storetest.BenchCommitStep), beside SQLite's.
func BenchmarkCommitStep(b *testing.B) {
	storetest.BenchCommitStep(b, func(b *testing.B) store.Store {
		s, err := postgres.Open(context.Background(), pgtest.DSN(b), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
