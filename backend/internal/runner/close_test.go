package runner_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/events"
	llmclient "github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// lateDrops is a store whose watch drops outlast the runner's context:
// each waits for the context to end, then for Close to return or for hold,
// whichever comes first, and counts itself late if Close returned. A
// drop that Close waits for is never late; one it leaves behind is, as
// long as Close takes less than hold, which stands for the store closed
// under a write still under way.
type lateDrops struct {
	store.Store
	hold time.Duration

	started   chan struct{} // closed when the first drop starts
	ended     chan struct{} // closed when the first drop ends
	closed    chan struct{} // closed once Close returned
	startOnce sync.Once
	endOnce   sync.Once
	late      atomic.Int32
}

func (s *lateDrops) DeleteWatch(ctx context.Context, watcherID, targetID string) error {
	s.startOnce.Do(func() { close(s.started) })
	defer s.endOnce.Do(func() { close(s.ended) })
	<-ctx.Done()
	select {
	case <-s.closed:
		s.late.Add(1)
	case <-time.After(s.hold):
	}
	return s.Store.DeleteWatch(ctx, watcherID, targetID)
}

// Issue 35, item 3: a watch that expired is dropped on a goroutine of
// its own, which Close waits for; no drop writes once Close returned,
// when the store is closed.
func TestCloseWaitsForAWatchDropInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "close.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	st := &lateDrops{Store: db, hold: 500 * time.Millisecond,
		started: make(chan struct{}), ended: make(chan struct{}), closed: make(chan struct{})}
	llm := fakellmtest.Start(t, answer)
	cat := catalog.New(ctx, func() *agentfile.Set {
		return agentfile.Load(nil, []string{"testdata/bench/agents"})
	}, catalog.Options{HasKey: func(string) bool { return false }, OfflineModelURL: llm.URL()})
	hub, err := runner.NewHub(ctx, st, events.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	// The clock moves the watch past its expiry without waiting for it.
	var ahead atomic.Int64
	r := runner.New(runner.Options{Store: st, Hub: hub, Catalog: cat,
		Models: runner.LLMModels(func(string) (string, bool) { return "", false }, llmclient.Limits{}, nil),
		Now:    func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	closed := false
	defer func() {
		if !closed {
			r.Close()
		}
	}()
	if err := r.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	watcher := createOn(t, r, "bench", "watch")
	target := createOn(t, r, "bench", "work")
	waitOn(t, r, watcher)
	waitOn(t, r, target)
	if _, err := r.WatchSession(ctx, "me", watcher, target, time.Minute); err != nil {
		t.Fatal(err)
	}
	ahead.Store(int64(time.Hour))
	if _, _, err := r.PostMessage(ctx, "me", target, runner.Message{Text: "again"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	select {
	case <-st.started:
	case <-wait.Done():
		t.Fatal("the expired watch was not dropped")
	}
	r.Close()
	closed = true
	close(st.closed)
	select {
	case <-st.ended:
	case <-wait.Done():
		t.Fatal("the watch drop did not end")
	}
	if n := st.late.Load(); n > 0 {
		t.Errorf("%d watch drops wrote to the store after Close returned", n)
	}
}

// Background work (the webhooks' dispatcher) starts with the runner, is
// told to stop by Close, and has ended when Close returns, before the
// store is closed.
func TestCloseWaitsForBackgroundWork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "background.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	hub, err := runner.NewHub(ctx, db, events.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	cat := catalog.New(ctx, func() *agentfile.Set { return agentfile.Load(nil, nil) }, catalog.Options{HasKey: func(string) bool { return false }})
	started := make(chan struct{})
	var ended atomic.Bool
	r := runner.New(runner.Options{Store: db, Hub: hub, Catalog: cat,
		Models: runner.LLMModels(func(string) (string, bool) { return "", false }, llmclient.Limits{}, nil),
		Background: []func(context.Context){func(ctx context.Context) {
			close(started)
			<-ctx.Done()
			time.Sleep(50 * time.Millisecond) // an attempt that takes a while to give up
			ended.Store(true)
		}}})
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		r.Close()
		t.Fatal("the background work did not start")
	}
	r.Close()
	if !ended.Load() {
		t.Error("Close returned before the background work ended")
	}
}
