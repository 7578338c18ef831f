package loadgen

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// IdleRow is the server's memory at one moment of the idle scenario.
type IdleRow struct {
	Phase      string   `json:"phase"`
	SinceTouch Duration `json:"since_touch_ms"`
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
	// Per 1,000 sessions touched, against the baseline.
	RSSPer1000        float64 `json:"rss_delta_per_1000_bytes"`
	GoroutinesPer1000 float64 `json:"goroutines_delta_per_1000"`
	HeapPer1000       float64 `json:"heap_inuse_delta_per_1000_bytes"`
	RuntimePer1000    float64 `json:"go_runtime_delta_per_1000_bytes"`

	lastGC float64 // go_memstats_last_gc_time_seconds
}

// IdleRows is the idle scenario's result.
type IdleRows struct {
	Sessions  int       `json:"sessions"`
	Touch     Duration  `json:"touch_ms"`
	IdleEvict Duration  `json:"idle_evict_ms,omitempty"` // the server's, when it has the flag
	Rows      []IdleRow `json:"rows"`
}

// Table implements Result.
func (r *IdleRows) Table() ([]string, [][]string) {
	header := []string{"phase", "after touch s", "rss MB", "goroutines", "heap MB", "go runtime MB", "GCs since baseline", "Δrss/1000 MB", "Δgoroutines/1000", "Δheap/1000 MB", "Δgo runtime/1000 MB"}
	var rows [][]string
	for i, p := range r.Rows {
		gcs := ""
		if i > 0 && p.GCs >= 0 {
			gcs = itoa(p.GCs - r.Rows[0].GCs)
		}
		row := []string{p.Phase, fmt.Sprintf("%.0f", time.Duration(p.SinceTouch).Seconds()), mb(p.RSS), itoa(p.Goroutines), mb(p.HeapInuse), mb(p.Runtime), gcs}
		if i == 0 {
			row = append(row, "", "", "", "")
		} else {
			row = append(row, mb(int64(p.RSSPer1000)), fmt.Sprintf("%.0f", p.GoroutinesPer1000), mb(int64(p.HeapPer1000)), mb(int64(p.RuntimePer1000)))
		}
		rows = append(rows, row)
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
// garbage collection.
func runIdle(ctx context.Context, e *env) (Result, error) {
	res := &IdleRows{Sessions: e.cfg.IdleSessions}
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

func idleMeasure(ctx context.Context, e *env, srv *Server, c *client, res *IdleRows, evict time.Duration) error {
	if err := warmUp(ctx, c); err != nil {
		return err
	}
	n := res.Sessions
	base, err := memorySnapshot(ctx, srv, c, "baseline", 0)
	if err != nil {
		return err
	}
	res.Rows = append(res.Rows, base)
	e.logf("   touching %d sessions", n)
	begin := time.Now()
	err = parallel(ctx, n, 16, func(int) error {
		id, err := c.create(ctx, "touch")
		if err != nil {
			return err
		}
		_, err = c.wait(ctx, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("touch %d sessions: %w", n, err)
	}
	touched := time.Now()
	res.Touch = Duration(touched.Sub(begin))
	add := func(phase string) (IdleRow, error) {
		row, err := memorySnapshot(ctx, srv, c, phase, time.Since(touched))
		if err != nil {
			return row, err
		}
		per := 1000 / float64(n)
		row.RSSPer1000 = float64(row.RSS-base.RSS) * per
		row.GoroutinesPer1000 = float64(row.Goroutines-base.Goroutines) * per
		row.HeapPer1000 = float64(row.HeapInuse-base.HeapInuse) * per
		row.RuntimePer1000 = float64(row.Runtime-base.Runtime) * per
		res.Rows = append(res.Rows, row)
		return row, nil
	}
	if _, err := add("after touch"); err != nil {
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
			e.note("-evict-wait %v is shorter than the server's idle eviction %v + %v: eviction not measured", wait, evict, evictMargin)
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
		if _, err := add(p.phase); err != nil {
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
				if _, err := add("after eviction"); err != nil {
					return err
				}
				evictedAt = time.Since(touched)
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d goroutines %v after the touch (%d before it): the sessions were not evicted", row.Goroutines, wait, base.Goroutines)
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
			e.note("/metrics does not say when the last garbage collection ran: no row after one")
			return nil
		}
		if row.lastGC >= evicted {
			_, err := add("evicted, after a GC")
			return err
		}
		if time.Now().After(deadline) {
			e.note("no garbage collection ran between the eviction and %v after the touch: the heap figures still count the evicted sessions' garbage", wait)
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
