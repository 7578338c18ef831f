package runner

import (
	"context"
	"time"
)

// workerIdle is how long a worker waits for its next task before it ends.
const workerIdle = 2 * time.Second

// workers run the model calls. A goroutine started for each call grows
// its stack through the HTTP client and the JSON decoder every time (a
// few percent of the server's CPU under load, in runtime.newstack); a
// worker kept for the next call has grown it already. A worker that gets
// no task for workerIdle ends, so an idle server keeps none.
type workers struct {
	ctx context.Context
	// group starts the workers: the runner's goroutines.
	group *goroutines
	tasks chan func() // unbuffered: a send succeeds only when a worker waits
}

func newWorkers(ctx context.Context, group *goroutines) *workers {
	return &workers{ctx: ctx, group: group, tasks: make(chan func())}
}

// do runs fn on a waiting worker, or on a new one when none waits. It
// never blocks. Once the runner closes, fn may not run: its actor drops
// the run it belongs to (see actor.shutdown).
func (w *workers) do(fn func()) {
	select {
	case w.tasks <- fn:
	default:
		w.group.Go(func() { w.work(fn) })
	}
}

func (w *workers) work(fn func()) {
	fn()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		select {
		case fn := <-w.tasks:
			fn()
			idle.Reset(workerIdle)
		case <-idle.C:
			return
		case <-w.ctx.Done():
			return
		}
	}
}
