package sqlite

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Issue 20, item 2: one process per database file. A second Open of a
// file that is open fails at once with an error that names the holder;
// once the holder closes, the file opens again.
func TestASecondOpenOfADatabaseInUseFailsNamingItsHolder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agents.db")
	first, err := OpenWith(ctx, path, Options{Holder: Holder{Command: "serve", Addr: "http://127.0.0.1:7420"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.SetHolder(Holder{Command: "serve", Addr: "http://127.0.0.1:7420", Socket: "/run/agents.sock"}); err != nil {
		t.Fatal(err)
	}
	second, err := Open(ctx, path)
	if err == nil {
		second.Close()
		t.Fatal("a second Open of a database in use succeeded")
	}
	var locked *LockedError
	if !errors.As(err, &locked) || !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want a LockedError", err)
	}
	if h := locked.Holder; h.Command != "serve" || h.Socket != "/run/agents.sock" || h.PID == 0 {
		t.Errorf("holder = %+v", h)
	}
	for _, want := range []string{path, "agents serve", "pid ", "http://127.0.0.1:7420", "socket /run/agents.sock"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	again.Close()
}

// In-memory databases are private to their Store: nothing to lock.
func TestMemoryDatabasesTakeNoLock(t *testing.T) {
	ctx := context.Background()
	for range 2 {
		s, err := Open(ctx, Memory)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
}

// A process that starts others (a server starts its tools) shares its
// open files, the lock's included, with each child until the child runs
// its program: a database closed and opened again in the same process
// must not take that moment for another holder.
func TestReopeningWhileTheProcessStartsOthers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agents.db")
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				_ = exec.Command("true").Run()
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 30 {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
