package runner

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
)

// The group's wait returns only once every goroutine it started ended,
// and a closed group starts nothing.
func TestGoroutinesWaitForEveryLaunchAndRefuseAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g goroutines
		release := make(chan struct{})
		if !g.Go(func() { <-release }) {
			t.Fatal("an open group refused a goroutine")
		}
		g.close()
		waited := make(chan struct{})
		go func() {
			g.wait()
			close(waited)
		}()
		synctest.Wait()
		select {
		case <-waited:
			t.Fatal("wait returned while a goroutine of the group ran")
		default:
		}
		close(release)
		synctest.Wait()
		select {
		case <-waited:
		default:
			t.Fatal("wait did not return once the group's goroutines ended")
		}
		var ran atomic.Bool
		if g.Go(func() { ran.Store(true) }) {
			t.Error("a closed group started a goroutine")
		}
		g.wait()
		if ran.Load() {
			t.Error("a goroutine started after close ran")
		}
	})
}

// Issue 35, item 3: once Close returned, nothing the runner starts runs,
// a model call handed to its workers included.
func TestNothingTheRunnerStartsRunsAfterClose(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "closed.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	hub, err := NewHub(ctx, db, events.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Shutdown()
	r := New(Options{Store: db, Hub: hub})
	r.Close()
	var ran atomic.Int32
	if r.goroutines.Go(func() { ran.Add(1) }) {
		t.Error("the runner started a goroutine after Close")
	}
	r.workers.do(func() { ran.Add(1) })
	r.goroutines.wait()
	if n := ran.Load(); n > 0 {
		t.Errorf("%d tasks ran after Close", n)
	}
}
