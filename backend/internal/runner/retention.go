package runner

import (
	"time"
)

// Retention bounds the event log: events older than Age, and all but the
// newest Count, are pruned. A client further behind gets a snapshot. It
// also bounds the model calls kept one by one: those older than
// ModelCalls are folded into their hour's sums, which usage series read
// alike (store.FoldModelCalls).
type Retention struct {
	Age        time.Duration
	Count      int
	ModelCalls time.Duration
}

// Defaults of Retention fields left at zero. A week of model calls is
// kept one by one: what the usage series read of them is the same once
// folded, so the window only bounds the table, and leaves a week of
// single calls to look at in the database.
const (
	DefaultRetentionAge       = 24 * time.Hour
	DefaultRetentionCount     = 100_000
	DefaultModelCallRetention = 7 * 24 * time.Hour
)

// withDefaults is ret with its zero fields set to their defaults.
func (ret Retention) withDefaults() Retention {
	if ret.Age <= 0 {
		ret.Age = DefaultRetentionAge
	}
	if ret.Count <= 0 {
		ret.Count = DefaultRetentionCount
	}
	if ret.ModelCalls <= 0 {
		ret.ModelCalls = DefaultModelCallRetention
	}
	return ret
}

// pruneEvery is how often the event log, the idempotency keys, the
// commands and the model calls are trimmed, and pruneQuietEvery how often when no event was
// published since the last trim. A quiet server's log only ages: keeping
// its oldest events and keys up to an hour past their retention harms no
// one, and the trim's queries were the only work an idle server did every
// minute (mapping 7 MB of the binary's code each time: BENCHMARKS.md,
// "The binary's own pages").
const (
	pruneEvery      = time.Minute
	pruneQuietEvery = time.Hour
)

// prune trims the event log, forgets old idempotency keys (and commands)
// and folds old model calls until the runner closes.
func (r *Runner) prune() {
	ret := r.opts.Retention.withDefaults()
	tick := time.NewTicker(pruneEvery)
	defer tick.Stop()
	var last lastTrim
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
		now := r.now()
		newest, known := r.newestEvent()
		if !last.due(now, newest, known) {
			continue
		}
		last = lastTrim{at: now, seq: newest}
		r.trim(now, ret)
	}
}

// trim does one trim at now. A quiet server's model calls only age too:
// no call is made without an event.
func (r *Runner) trim(now time.Time, ret Retention) {
	if _, err := r.store.PruneEvents(r.ctx, now.Add(-ret.Age), ret.Count); err != nil && r.ctx.Err() == nil {
		r.log.Warn("prune event log", "err", err)
	}
	if _, err := r.store.PruneIdempotency(r.ctx, now.Add(-IdempotencyTTL)); err != nil && r.ctx.Err() == nil {
		r.log.Warn("prune idempotency keys", "err", err)
	}
	if _, err := r.store.FoldModelCalls(r.ctx, now.Add(-ret.ModelCalls)); err != nil && r.ctx.Err() == nil {
		r.log.Warn("fold model calls", "err", err)
	}
	r.place.Prune(r.ctx, now)
}

// lastTrim is when the last trim ran and the newest event then.
type lastTrim struct {
	at  time.Time // zero before the first trim
	seq uint64
}

// due says whether a trim is due at now, newest being the newest event
// published (known false: no hub to tell, so always due).
func (l lastTrim) due(now time.Time, newest uint64, known bool) bool {
	return !known || l.at.IsZero() || newest != l.seq || now.Sub(l.at) >= pruneQuietEvery
}

// newestEvent is the newest event the hub published, which moves with
// every change on this server and on the others of its database; false
// without a hub.
func (r *Runner) newestEvent() (uint64, bool) {
	if r.hub == nil {
		return 0, false
	}
	return r.hub.Seq(), true
}
