package cli

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/exepages"
)

// An idle server holds mapped the pages of its binary that something once
// ran, 64 KiB around every page touched (see exepages): the start (every
// package's initialisation, opening the store), then each garbage
// collection (the tables of the functions on every goroutine's stack and
// the types of the heap's objects: 5 to 11 MB) and the hourly trim of the
// event log. It uses none of them while it waits. So a server gives them
// back once its start has settled, and after every minute in which it
// served nothing (no request began or ended, none is open, no event was
// published) it collects and gives them back again: its own collection
// keeps the runtime's, forced after two minutes without one, from
// mapping them for the minutes that follow. The next request faults back
// in, from the page cache, the few megabytes it runs.
const (
	startSettle = time.Second
	idleMinute  = time.Minute
)

// activity is what a server has done so far: two equal marks taken a
// minute apart mean it did nothing in between.
type activity struct {
	requests uint64
	events   events.Position
}

// releaseWhenIdle gives back the binary's pages after the start and after
// every idle minute, until ctx ends. now reads the server's activity and
// whether a request is open.
func releaseWhenIdle(ctx context.Context, log *slog.Logger, now func() (activity, bool)) {
	release := func() {
		if _, err := exepages.Release(); err != nil {
			log.Warn("give back the binary's pages", "err", err)
		}
	}
	if !sleep(ctx, startSettle) {
		return
	}
	release()
	last, _ := now()
	tick := time.NewTicker(idleMinute)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		mark, open := now()
		if mark == last && !open {
			runtime.GC()
			release()
		}
		last = mark
	}
}

// sleep waits for d, or for ctx to end: false then.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// activity reads the stack's: the requests its server began and ended,
// and the events its hub published.
func (s *stack) activity() (activity, bool) {
	requests, open := s.server.Activity()
	return activity{requests: requests, events: s.hub.Position()}, open > 0
}
