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
// commands are trimmed, and pruneQuietEvery how often when no event was
// published since the last trim. A quiet server's log only ages: keeping
// its oldest events and keys up to an hour past their retention harms no
// one, and the trim's queries were the only work an idle server did every
// minute (mapping 7 MB of the binary's code each time: BENCHMARKS.md,
// "The binary's own pages").
const (
	pruneEvery      = time.Minute
	pruneQuietEvery = time.Hour
)

// prune trims the event log and forgets old idempotency keys (and
// commands) until the runner closes.
func (r *Runner) prune() {
	ret := r.opts.EventRetention
	if ret.Age <= 0 {
		ret.Age = DefaultRetentionAge
	}
	if ret.Count <= 0 {
		ret.Count = DefaultRetentionCount
	}
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
		if _, err := r.store.PruneEvents(r.ctx, now.Add(-ret.Age), ret.Count); err != nil && r.ctx.Err() == nil {
			r.log.Warn("prune event log", "err", err)
		}
		if _, err := r.store.PruneIdempotency(r.ctx, now.Add(-IdempotencyTTL)); err != nil && r.ctx.Err() == nil {
			r.log.Warn("prune idempotency keys", "err", err)
		}
		r.place.Prune(r.ctx, now)
	}
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
