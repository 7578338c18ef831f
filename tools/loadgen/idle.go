package loadgen

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// IdleRow is the server's memory at one moment of the idle scenario.
type IdleRow struct {
	Phase string `json:"phase"`
	// Wave is 1 for the rows after the first touch, 2 for those after
	// the second (IdleRows.More sessions more), 0 for the baseline.
	Wave       int      `json:"wave"`
	SinceTouch Duration `json:"since_touch_ms"` // since the end of this wave's touch
	RSS        int64    `json:"server_rss_bytes"`
	Goroutines int      `json:"goroutines"`       // from /metrics; -1 when unknown
	HeapInuse  int64    `json:"heap_inuse_bytes"` // from /metrics; -1 when unknown
	GCs        int      `json:"gcs"`              // garbage collections so far, from /metrics; -1 when unknown
	// Runtime is what the Go runtime holds from the system (every
	// go_memstats_*_sys less the heap it released), from /metrics; -1
	// when unknown. RSS beyond it is memory the runtime does not manage
	// (SQLite's page caches, allocated by its C library's allocator) and
	// the binary's pages.
	Runtime int64 `json:"go_runtime_bytes"`
	// The deltas per 1,000 sessions: a first-wave row's against the
	// baseline, per the sessions touched; a second-wave row's against
	// the first wave's row of the same phase, per the second wave's
	// sessions (the marginal cost once the server is warm), or against
	// the baseline when the first wave has no such row.
	IdleDelta
	// VsBaseline is a second-wave row's deltas against the baseline, per
	// all the sessions touched in both waves; nil on other rows.
	VsBaseline *IdleDelta `json:"vs_baseline,omitempty"`

	step   string  // Phase without the wave's prefix: the same in both waves
	lastGC float64 // go_memstats_last_gc_time_seconds
}

// IdleDelta is a row's memory less that of an earlier row, per 1,000 of
// the sessions touched in between.
type IdleDelta struct {
	// Against names the earlier row: "baseline", or "wave 1: " and the
	// first wave's phase. Empty on the baseline row.
	Against string `json:"against,omitempty"`
	// Sessions is what the deltas are divided by (per 1,000 of them).
	Sessions          int     `json:"delta_sessions,omitempty"`
	RSSPer1000        float64 `json:"rss_delta_per_1000_bytes"`
	GoroutinesPer1000 float64 `json:"goroutines_delta_per_1000"`
	HeapPer1000       float64 `json:"heap_inuse_delta_per_1000_bytes"`
	RuntimePer1000    float64 `json:"go_runtime_delta_per_1000_bytes"`
}

// idleDelta is row less ref, per 1,000 of sessions.
func idleDelta(row, ref IdleRow, sessions int, against string) IdleDelta {
	per := 1000 / float64(sessions)
	return IdleDelta{
		Against:           against,
		Sessions:          sessions,
		RSSPer1000:        float64(row.RSS-ref.RSS) * per,
		GoroutinesPer1000: float64(row.Goroutines-ref.Goroutines) * per,
		HeapPer1000:       float64(row.HeapInuse-ref.HeapInuse) * per,
		RuntimePer1000:    float64(row.Runtime-ref.Runtime) * per,
	}
}

// setDeltas fills row's deltas. In the first wave (first is nil) they
// are against base, per the total sessions touched. In the second they
// are against first's row of the same step, per the n sessions the
// second wave touched, and VsBaseline against base, per total; when first
// has no row of that step, against base, per total, alone.
func (row *IdleRow) setDeltas(base IdleRow, first []IdleRow, n, total int) {
	cumulative := idleDelta(*row, base, total, "baseline")
	row.IdleDelta, row.VsBaseline = cumulative, nil
	if first == nil {
		return
	}
	if i := slices.IndexFunc(first, func(r IdleRow) bool { return r.step == row.step }); i >= 0 {
		row.IdleDelta = idleDelta(*row, first[i], n, "wave 1: "+first[i].step)
		row.VsBaseline = &cumulative
	}
}

// IdleRows is the idle scenario's result.
type IdleRows struct {
	Sessions  int      `json:"sessions"` // touched in the first wave
	Touch     Duration `json:"touch_ms"`
	More      int      `json:"more_sessions,omitempty"` // touched in the second wave; 0: no second wave
	MoreTouch Duration `json:"more_touch_ms,omitempty"`
	IdleEvict Duration `json:"idle_evict_ms,omitempty"` // the server's, when it has the flag
	// Rows are the baseline, the first wave's rows, then the second's.
	Rows []IdleRow `json:"rows"`
}

// Table implements Result. A second-wave row is followed by a line of its
// deltas against the baseline.
func (r *IdleRows) Table() ([]string, [][]string) {
	header := []string{"phase", "after touch s", "rss MB", "goroutines", "heap MB", "go runtime MB", "GCs since baseline", "Δ against", "Δ over sessions", "Δrss/1000 MB", "Δgoroutines/1000", "Δheap/1000 MB", "Δgo runtime/1000 MB"}
	deltas := func(d IdleDelta) []string {
		return []string{d.Against, itoa(d.Sessions), mb(int64(d.RSSPer1000)), fmt.Sprintf("%.0f", d.GoroutinesPer1000), mb(int64(d.HeapPer1000)), mb(int64(d.RuntimePer1000))}
	}
	var rows [][]string
	for i, p := range r.Rows {
		gcs := ""
		if i > 0 && p.GCs >= 0 {
			gcs = itoa(p.GCs - r.Rows[0].GCs)
		}
		row := []string{p.Phase, fmt.Sprintf("%.0f", time.Duration(p.SinceTouch).Seconds()), mb(p.RSS), itoa(p.Goroutines), mb(p.HeapInuse), mb(p.Runtime), gcs}
		if i == 0 {
			row = append(row, "", "", "", "", "", "")
		} else {
			row = append(row, deltas(p.IdleDelta)...)
		}
		rows = append(rows, row)
		if p.VsBaseline != nil {
			rows = append(rows, append(make([]string, 7), deltas(*p.VsBaseline)...))
		}
	}
	return header, rows
}

// evictPoll is how often the idle scenario looks for the eviction, or for
// a garbage collection after it.
const evictPoll = 5 * time.Second

// evictMargin is how long after the server's idle-evict time the idle
// scenario takes the sessions for evicted.
const evictMargin = 5 * time.Second

var defaultDuration = regexp.MustCompile(`\(default ([0-9][^)]*)\)`)

// runIdle touches cfg.IdleSessions new sessions once each (created with a
// prompt, waited for) and reads the server's memory before, just after,
// cfg.IdleAfter after, once the sessions were evicted, and after the next
// garbage collection; then, unless cfg.IdleMore is 0, touches
// cfg.IdleMore more and reads it at the same moments after that touch.
func runIdle(ctx context.Context, e *env) (Result, error) {
	res := &IdleRows{Sessions: e.cfg.IdleSessions, More: e.cfg.IdleMore}
	var args []string
	evict := time.Duration(-1) // unknown: watch the goroutines instead
	switch help := e.serveFlag("--idle-evict"); {
	case help == "":
		e.note("agents serve has no --idle-evict flag: the sessions count as evicted once the goroutines are back to the baseline")
	case e.cfg.IdleEvict > 0:
		args = append(args, fmt.Sprintf("--idle-evict=%s", e.cfg.IdleEvict))
		evict = e.cfg.IdleEvict
		e.note("served with --idle-evict=%s", e.cfg.IdleEvict)
	default:
		if m := defaultDuration.FindStringSubmatch(help); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				evict = d
			}
		}
		if evict > 0 {
			e.note("served with the default --idle-evict, %v", evict)
		} else {
			e.note("served with the default --idle-evict, which its help does not give: %s", help)
		}
	}
	if evict > 0 {
		res.IdleEvict = Duration(evict)
	}
	srv, c, err := e.start("idle", "", args...)
	if err != nil {
		return res, err
	}
	err = idleMeasure(ctx, e, srv, c, res, evict)
	if stopErr := e.stop(srv, c); err == nil {
		err = stopErr
	}
	return res, err
}

// idleMeasure takes the baseline and runs the waves.
func idleMeasure(ctx context.Context, e *env, srv *Server, c *client, res *IdleRows, evict time.Duration) error {
	if err := warmUp(ctx, c); err != nil {
		return err
	}
	base, err := memorySnapshot(ctx, srv, c, "baseline", 0)
	if err != nil {
		return err
	}
	res.Rows = append(res.Rows, base)
	w1 := &idleWave{number: 1, n: res.Sessions, total: res.Sessions}
	err = w1.run(ctx, e, srv, c, res, base, evict)
	res.Touch = Duration(w1.touch)
	if err != nil || res.More <= 0 {
		return err
	}
	w2 := &idleWave{number: 2, n: res.More, total: res.Sessions + res.More, prefix: fmt.Sprintf("wave 2 (+%d): ", res.More), first: slices.Clone(res.Rows[1:])}
	begin := time.Now()
	err = w2.run(ctx, e, srv, c, res, base, evict)
	res.MoreTouch = Duration(w2.touch)
	if w1.evictedBy >= 0 && begin.Sub(w1.touched) >= w1.evictedBy {
		// Wave 1's sessions were evicted before wave 2 began: a row of
		// wave 1 taken while they were loaded is no like for like.
		var unlike []string
		for _, row := range res.Rows[1+len(w2.first):] {
			if i := slices.IndexFunc(w2.first, func(r IdleRow) bool { return r.step == row.step }); i >= 0 && time.Duration(w2.first[i].SinceTouch) < w1.evictedBy {
				unlike = append(unlike, fmt.Sprintf("%q", row.Phase))
			}
		}
		if len(unlike) > 0 {
			e.note("%s: taken with wave 1's %d sessions evicted, its match in wave 1 with them loaded: its Δ per 1,000 against wave 1 is a loaded session's cost less %d/%d of what evicting one frees",
				strings.Join(unlike, ", "), res.Sessions, res.Sessions, res.More)
		}
	}
	return err
}

// idleWave is one touch of new sessions and the snapshots after it.
type idleWave struct {
	number  int       // 1 or 2
	n       int       // sessions it touches
	total   int       // sessions touched by the end of its touch, earlier waves' included
	prefix  string    // before the phase of each of its rows
	first   []IdleRow // the first wave's rows, to compare the second's with; nil in the first
	touched time.Time // when its touch ended
	touch   time.Duration
	// evictedBy is how long after the touch its sessions were evicted:
	// the server's idle eviction, or when the goroutines were seen back
	// to the baseline; -1 when unknown.
	evictedBy time.Duration
}

// run touches w.n new sessions once each (16 at a time, under the
// server's run limit) and appends to res a row just after, cfg.IdleAfter
// after, once the sessions were evicted, and after the next garbage
// collection, each as far as the configuration asks and /metrics tells.
func (w *idleWave) run(ctx context.Context, e *env, srv *Server, c *client, res *IdleRows, base IdleRow, evict time.Duration) error {
	n := w.n
	w.evictedBy = evict
	e.logf("   wave %d: touching %d sessions", w.number, n)
	begin := time.Now()
	err := parallel(ctx, n, 16, func(int) error {
		id, err := c.create(ctx, "touch")
		if err != nil {
			return err
		}
		_, err = c.wait(ctx, id, 0)
		return err
	})
	if err != nil {
		return fmt.Errorf("wave %d: touch %d sessions: %w", w.number, n, err)
	}
	touched := time.Now()
	w.touched, w.touch = touched, touched.Sub(begin)
	if evict > 0 && w.touch > evict {
		e.note("wave %d's touch took %v, more than the server's idle eviction %v: its first sessions were evicted before it ended", w.number, w.touch.Round(time.Millisecond), evict)
	}
	add := func(step string) error {
		row, err := memorySnapshot(ctx, srv, c, w.prefix+step, time.Since(touched))
		if err != nil {
			return err
		}
		row.Wave, row.step = w.number, step
		row.setDeltas(base, w.first, n, w.total)
		res.Rows = append(res.Rows, row)
		return nil
	}
	if err := add("after touch"); err != nil {
		return err
	}

	// Timed checkpoints, in the order they come.
	type checkpoint struct {
		at    time.Duration
		phase string
	}
	var points []checkpoint
	if d := e.cfg.IdleAfter; d > 0 {
		points = append(points, checkpoint{d, fmt.Sprintf("after %v idle", d)})
	}
	wait := e.cfg.EvictWait
	evictedAt := time.Duration(-1)
	if wait > 0 && evict > 0 {
		if evict+evictMargin > wait {
			if w.number == 1 {
				e.note("-evict-wait %v is shorter than the server's idle eviction %v + %v: eviction not measured", wait, evict, evictMargin)
			}
			wait = 0
		} else {
			evictedAt = evict + evictMargin
			points = append(points, checkpoint{evictedAt, fmt.Sprintf("evicted (%v idle-evict + %v)", evict, evictMargin)})
		}
	}
	slices.SortStableFunc(points, func(a, b checkpoint) int { return int(a.at - b.at) })
	for _, p := range points {
		e.logf("   waiting until %v after the touch", p.at)
		if err := sleep(ctx, time.Until(touched.Add(p.at))); err != nil {
			return err
		}
		if err := add(p.phase); err != nil {
			return err
		}
	}
	if wait <= 0 {
		return nil
	}
	deadline := touched.Add(wait)
	if evictedAt < 0 {
		// No flag to say when: wait for the goroutines to go.
		e.logf("   waiting up to %v for the eviction", wait)
		for {
			row, err := memorySnapshot(ctx, srv, c, "", 0)
			if err != nil {
				return err
			}
			if row.Goroutines < 0 {
				return fmt.Errorf("/metrics has no go_goroutines: cannot tell when the sessions are evicted")
			}
			if row.Goroutines <= base.Goroutines+n/10 {
				if err := add("after eviction"); err != nil {
					return err
				}
				evictedAt = time.Since(touched)
				w.evictedBy = evictedAt
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("wave %d: %d goroutines %v after the touch (%d before the first): the sessions were not evicted", w.number, row.Goroutines, wait, base.Goroutines)
			}
			if err := sleep(ctx, evictPoll); err != nil {
				return err
			}
		}
	}
	// Until a garbage collection runs, heap in use still counts what the
	// evicted sessions left; an idle server allocates nothing, so the next
	// is the runtime's forced one, at most 2 minutes after the last.
	e.logf("   waiting up to %v after the touch for a garbage collection after the eviction", wait)
	evicted := float64(touched.Add(evictedAt).UnixNano()) / 1e9
	for {
		row, err := memorySnapshot(ctx, srv, c, "", 0)
		if err != nil {
			return err
		}
		if row.GCs < 0 || row.lastGC == 0 && row.GCs > 0 {
			if w.number == 1 {
				e.note("/metrics does not say when the last garbage collection ran: no row after one")
			}
			return nil
		}
		if row.lastGC >= evicted {
			return add("evicted, after a GC")
		}
		if time.Now().After(deadline) {
			e.note("wave %d: no garbage collection ran between the eviction and %v after the touch: the heap figures still count the evicted sessions' garbage", w.number, wait)
			return nil
		}
		if err := sleep(ctx, evictPoll); err != nil {
			return err
		}
	}
}

// memorySnapshot reads the server's RSS from /proc and its goroutines,
// heap and garbage collections from /metrics (-1 when /metrics does not
// say).
func memorySnapshot(ctx context.Context, srv *Server, c *client, phase string, since time.Duration) (IdleRow, error) {
	row := IdleRow{Phase: phase, SinceTouch: Duration(since), Goroutines: -1, HeapInuse: -1, GCs: -1, Runtime: -1}
	// The client's idle connections each keep a goroutine of the server's:
	// close them, so every snapshot counts the one /metrics uses alone.
	c.close()
	if err := sleep(ctx, 200*time.Millisecond); err != nil {
		return row, err
	}
	m, err := c.metrics(ctx)
	if err == nil {
		if v, ok := m["go_goroutines"]; ok {
			row.Goroutines = int(v)
		}
		if v, ok := m["go_memstats_heap_inuse_bytes"]; ok {
			row.HeapInuse = int64(v)
		}
		if v, ok := m["go_gc_duration_seconds_count"]; ok {
			row.GCs = int(v)
		}
		row.lastGC = m["go_memstats_last_gc_time_seconds"]
		sys, ok1 := m["go_memstats_sys_bytes"]
		released, ok2 := m["go_memstats_heap_released_bytes"]
		if ok1 && ok2 {
			row.Runtime = int64(sys - released)
		}
	}
	u, err := srv.Usage()
	if err != nil {
		return row, err
	}
	row.RSS = u.RSS
	if phase != "" {
		if err := srv.heapProfile(phase); err != nil {
			return row, err
		}
	}
	return row, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
