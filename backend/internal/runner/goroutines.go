package runner

import "sync"

// goroutines are every goroutine the runner starts: actors, model and tool
// calls, the loops that renew leases, apply commands and prune the log,
// and the short errands (a watch dropped, a parent told of its child).
// Each is started by Go, and Close waits for them all before it returns,
// so none of them writes to the store after Close: the store is closed
// next. Once Close began, Go starts nothing; whatever a refused goroutine
// would have done is done at the next start, as after a crash.
type goroutines struct {
	// mu orders the close with the launches: a launch either comes
	// before it, and Close waits for it, or after it, and runs nothing.
	mu     sync.RWMutex
	closed bool
	wg     sync.WaitGroup
}

// Go runs fn on a goroutine of its own, unless the group is closed; false
// says fn will not run.
func (g *goroutines) Go(fn func()) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return false
	}
	g.wg.Go(fn)
	return true
}

// close refuses every later launch.
func (g *goroutines) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// wait returns once every goroutine started has ended.
func (g *goroutines) wait() { g.wg.Wait() }
