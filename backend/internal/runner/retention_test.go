package runner

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
)

// A trim is due every minute while events are published, and only once an
// hour on a server where nothing happens.
func TestTrimIsDueWhenEventsWerePublishedOrAnHourPassed(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	last := lastTrim{at: t0, seq: 40}
	for _, tc := range []struct {
		name   string
		last   lastTrim
		now    time.Time
		newest uint64
		known  bool
		want   bool
	}{
		{"the first trim", lastTrim{}, t0, 40, true, true},
		{"events since", last, t0.Add(time.Minute), 41, true, true},
		{"quiet for a minute", last, t0.Add(time.Minute), 40, true, false},
		{"quiet for 59 minutes", last, t0.Add(59 * time.Minute), 40, true, false},
		{"quiet for an hour", last, t0.Add(time.Hour), 40, true, true},
		{"no hub to tell", last, t0.Add(time.Minute), 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.last.due(tc.now, tc.newest, tc.known); got != tc.want {
				t.Errorf("due = %v, want %v", got, tc.want)
			}
		})
	}
}

// foldRecorder is a store that tells which times model calls were folded
// before, and how many each fold folded.
type foldRecorder struct {
	store.Store
	mu     sync.Mutex
	before []time.Time
	folded []int
}

func (f *foldRecorder) FoldModelCalls(ctx context.Context, before time.Time) (int, error) {
	n, err := f.Store.FoldModelCalls(ctx, before)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before = append(f.before, before)
	f.folded = append(f.folded, n)
	return n, err
}

// A trim folds the model calls older than the retention of model calls,
// a week unless told otherwise, and leaves the usage series as it was.
func TestTrimFoldsTheModelCallsPastTheirRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		ret    Retention
		window time.Duration
		folded int
	}{
		{"by default", Retention{}, 7 * 24 * time.Hour, 1},
		{"told two hours", Retention{ModelCalls: 2 * time.Hour}, 2 * time.Hour, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "fold.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = db.Close() }()
			m := session.Meta{ID: "s", Agent: "coder", Owner: "alice", Status: session.StatusReady, Created: now, Updated: now}
			if err := db.CreateSession(ctx, m, nil); err != nil {
				t.Fatal(err)
			}
			// Calls of 8 days, 3 hours, 90 minutes and a minute ago.
			for _, ago := range []time.Duration{8 * 24 * time.Hour, 3 * time.Hour, 90 * time.Minute, time.Minute} {
				if err := db.Commit(ctx, &store.Change{Spend: &store.SpendChange{SessionID: "s", RootID: "s", Owner: "alice",
					Spend: session.Spend{Tokens: 3, Cost: 5}, At: now.Add(-ago), Agent: "coder", Model: "m", Prompt: 2, Completion: 1}}); err != nil {
					t.Fatal(err)
				}
			}
			q := store.UsageQuery{Since: now.Add(-9 * 24 * time.Hour).Truncate(time.Hour), Until: now.Add(time.Hour).Truncate(time.Hour), Bucket: time.Hour}
			before, err := db.UsageSeries(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			rec := &foldRecorder{Store: db}
			hub, err := NewHub(ctx, rec, events.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer hub.Shutdown()
			r := New(Options{Store: rec, Hub: hub, Retention: tc.ret, Now: func() time.Time { return now }})
			defer r.Close()
			r.trim(now, r.opts.Retention.withDefaults())

			rec.mu.Lock()
			gotBefore, gotFolded := slices.Clone(rec.before), slices.Clone(rec.folded)
			rec.mu.Unlock()
			if want := []time.Time{now.Add(-tc.window)}; !slices.Equal(gotBefore, want) {
				t.Errorf("folded before %v, want %v", gotBefore, want)
			}
			if want := []int{tc.folded}; !slices.Equal(gotFolded, want) {
				t.Errorf("folded %v calls, want %v", gotFolded, want)
			}
			after, err := db.UsageSeries(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(after, before) {
				t.Errorf("series after the fold %+v, want %+v", after, before)
			}
		})
	}
}
