package sqlite

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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

// BenchmarkWALFrames counts the pages a prompt writes to the WAL as
// BenchmarkCommitPrompts commits it, sixteen sessions prompting, with
// groups of one, four and sixteen changes a commit: a commit's cost is
// mostly its frames (two writes each, and their checksum), so this says
// which tables and indexes a prompt's CPU goes to. It reports frames per
// prompt and per commit, and logs them per b-tree.
func BenchmarkWALFrames(b *testing.B) {
	for _, group := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("group=%d", group), func(b *testing.B) { benchWALFrames(b, group) })
	}
}

func benchWALFrames(b *testing.B, group int) {
	const sessions = 16
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "bench.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	p := storetest.NewPrompts(b, s, sessions)
	// Some history first, so that pages fill and split as they would
	// in a database in use; then a WAL that only the measured commits
	// write, and no checkpoint to restart it.
	for range 8000 / group {
		p.Commit(ctx, group)
	}
	for _, q := range []string{`PRAGMA wal_checkpoint(TRUNCATE)`, `PRAGMA wal_autocheckpoint = 0`} {
		if _, err := s.write.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	commits := 0
	for b.Loop() {
		p.Commit(ctx, group)
		commits++
	}
	b.StopTimer()
	pages, err := walPages(path + "-wal")
	if err != nil {
		b.Fatal(err)
	}
	var rows []struct {
		Name   string `db:"name"`
		PageNo uint32 `db:"pageno"`
	}
	if err := s.write.SelectContext(ctx, &rows, `SELECT name, pageno FROM dbstat`); err != nil {
		b.Fatal(err)
	}
	tree := make(map[uint32]string, len(rows))
	for _, r := range rows {
		tree[r.PageNo] = r.Name
	}
	frames := map[string]int{}
	for _, pg := range pages {
		name, ok := tree[pg]
		if !ok {
			name = "(free)"
		}
		frames[name]++
	}
	for _, name := range slices.Sorted(maps.Keys(frames)) {
		b.Logf("%-28s %5.2f frames a commit", name, float64(frames[name])/float64(commits))
	}
	prompts := float64(commits*group) / 2
	b.ReportMetric(float64(len(pages))/prompts, "frames/prompt")
	b.ReportMetric(float64(len(pages))/float64(commits), "frames/commit")
}

// walPages reads the page number of every frame of a WAL file.
func walPages(path string) ([]uint32, error) {
	wal, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	const header, frameHeader = 32, 24
	if len(wal) < header {
		return nil, nil
	}
	size := int(binary.BigEndian.Uint32(wal[8:12]))
	var pages []uint32
	for off := header; off+frameHeader+size <= len(wal); off += frameHeader + size {
		pages = append(pages, binary.BigEndian.Uint32(wal[off:off+4]))
	}
	return pages, nil
}
