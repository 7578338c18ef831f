package cli

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/rsstrim"
)

// An idle server holds mapped the pages of its binary that something once
// ran, 64 KiB around every page touched (see rsstrim): the start (every
// package's initialisation, opening the store), then each request, each
// garbage collection (the tables of the functions on every goroutine's
// stack and the types of the heap's objects: 5 to 11 MB) and the hourly
// trim of the event log. It uses none of them while it waits. So a server
// gives them back once its start has settled, and again once it has
// served nothing for idleCheck (no request began or ended, none is open,
// no event was published): it collects first, so that the collection's
// own pages go too. Probes and metrics scrapes do not make it busy, or a
// server probed every few seconds would never be idle, but what they
// mapped (a scrape: 12 MB) is given back at the next check. While it
// stays idle it collects and gives them back every recollect, so the
// runtime's own collection, forced after two minutes without one, never
// maps them for the minutes that follow. The next request faults back
// in, from the page cache, the few megabytes it runs.
const (
	startSettle = time.Second
	idleCheck   = 10 * time.Second
	recollect   = time.Minute
)

// activity is what a server has done so far: two marks taken idleCheck
// apart with the same requests and events mean it did nothing in
// between; probes counts the probes and scrapes apart.
type activity struct {
	requests, probes uint64
	events           events.Position
}

// releaseWhenIdle gives back the binary's pages after the start and when
// the server is idle, until ctx ends. now reads the server's activity and
// whether a request is open.
func releaseWhenIdle(ctx context.Context, log *slog.Logger, now func() (activity, bool)) {
	if !sleep(ctx, startSettle) {
		return
	}
	release(log, false)
	mark, _ := now()
	w := idleWatch{last: mark}
	tick := time.NewTicker(idleCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if w.check(now()) {
			release(log, true)
		}
	}
}

// release gives back the binary's pages, after a collection when collect
// says so.
func release(log *slog.Logger, collect bool) {
	if collect {
		runtime.GC()
	}
	if _, err := rsstrim.Release(); err != nil {
		log.Warn("give back the binary's pages", "err", err)
	}
}

// idleWatch decides, at every idleCheck, whether to collect and give the
// pages back: at the first check that finds the server idle after it
// served something, at every check after a probe or scrape, and every
// recollect while it stays idle.
type idleWatch struct {
	last activity
	// served says the server did something since the last release.
	served bool
	// idleFor is how long it has been idle since the last release.
	idleFor time.Duration
}

// check takes the activity read now and whether a request is open, and
// says whether to release.
func (w *idleWatch) check(mark activity, open bool) bool {
	if mark.requests != w.last.requests || mark.events != w.last.events || open {
		w.last, w.served, w.idleFor = mark, true, 0
		return false
	}
	probed := mark.probes != w.last.probes
	w.last = mark
	w.idleFor += idleCheck
	if w.served || probed || w.idleFor >= recollect {
		w.served, w.idleFor = false, 0
		return true
	}
	return false
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
// the probes and scrapes it answered, and the events its hub published.
func (s *stack) activity() (activity, bool) {
	requests, probes, open := s.server.Activity()
	return activity{requests: requests, probes: probes, events: s.hub.Position()}, open > 0
}
