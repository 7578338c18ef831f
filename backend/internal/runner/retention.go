package runner

import (
	"time"
)

// Retention bounds the event log: events older than Age, and all but the
// newest Count, are pruned. A client further behind gets a snapshot.
type Retention struct {
	Age   time.Duration
	Count int
}

// Defaults of Retention fields left at zero.
const (
	DefaultRetentionAge   = 24 * time.Hour
	DefaultRetentionCount = 100_000
)

// pruneEvery is how often the event log, the idempotency keys and the
// commands are trimmed.
const pruneEvery = time.Minute

// prune trims the event log and forgets old idempotency keys (and
// commands) until the runner closes.
func (r *Runner) prune() {
	defer r.actors.Done()
	ret := r.opts.EventRetention
	if ret.Age <= 0 {
		ret.Age = DefaultRetentionAge
	}
	if ret.Count <= 0 {
		ret.Count = DefaultRetentionCount
	}
	tick := time.NewTicker(pruneEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
		now := r.now()
		if _, err := r.store.PruneEvents(r.ctx, now.Add(-ret.Age), ret.Count); err != nil && r.ctx.Err() == nil {
			r.log.Warn("prune event log", "err", err)
		}
		if _, err := r.store.PruneIdempotency(r.ctx, now.Add(-IdempotencyTTL)); err != nil && r.ctx.Err() == nil {
			r.log.Warn("prune idempotency keys", "err", err)
		}
		if r.cluster != nil {
			if _, err := r.store.PruneCommands(r.ctx, now.Add(-commandRetention)); err != nil && r.ctx.Err() == nil {
				r.log.Warn("prune commands", "err", err)
			}
		}
	}
}
