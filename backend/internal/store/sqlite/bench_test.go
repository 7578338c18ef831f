package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/storetest"
)

// BenchmarkCommitStep measures committed steps per second on an SQLite
// file (storetest.BenchCommitStep).
func BenchmarkCommitStep(b *testing.B) {
	storetest.BenchCommitStep(b, func(b *testing.B) store.Store {
		s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}

// BenchmarkCommitPrompts measures the store's write path per prompt on an
// SQLite file (storetest.BenchCommitPrompts).
func BenchmarkCommitPrompts(b *testing.B) {
	storetest.BenchCommitPrompts(b, func(b *testing.B) store.Store {
		s, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}
