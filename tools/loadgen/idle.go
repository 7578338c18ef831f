package loadgen

import (
	"context"
	"fmt"
	"time"
)

// IdleRow is the server's memory at one moment of the idle scenario.
type IdleRow struct {
	Phase      string   `json:"phase"`
	SinceTouch Duration `json:"since_touch_ms"`
	RSS        int64    `json:"server_rss_bytes"`
	Goroutines int      `json:"goroutines"`       // from /metrics; -1 when unknown
	HeapInuse  int64    `json:"heap_inuse_bytes"` // from /metrics; -1 when unknown
	// Per 1,000 sessions touched, against the baseline.
	RSSPer1000        float64 `json:"rss_delta_per_1000_bytes"`
	GoroutinesPer1000 float64 `json:"goroutines_delta_per_1000"`
	HeapPer1000       float64 `json:"heap_inuse_delta_per_1000_bytes"`
}

// IdleRows is the idle scenario's result.
type IdleRows struct {
	Sessions int       `json:"sessions"`
	Touch    Duration  `json:"touch_ms"`
	Rows     []IdleRow `json:"rows"`
}

// Table implements Result.
func (r *IdleRows) Table() ([]string, [][]string) {
	header := []string{"phase", "after touch s", "rss MB", "goroutines", "heap MB", "Δrss/1000 MB", "Δgoroutines/1000", "Δheap/1000 MB"}
	var rows [][]string
	for i, p := range r.Rows {
		row := []string{p.Phase, fmt.Sprintf("%.0f", time.Duration(p.SinceTouch).Seconds()), mb(p.RSS), itoa(p.Goroutines), mb(p.HeapInuse)}
		if i == 0 {
			row = append(row, "", "", "")
		} else {
			row = append(row, mb(int64(p.RSSPer1000)), fmt.Sprintf("%.0f", p.GoroutinesPer1000), mb(int64(p.HeapPer1000)))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// evictPoll is how often the idle scenario looks for the eviction.
const evictPoll = 5 * time.Second

// runIdle touches cfg.IdleSessions new sessions once each (created with a
// prompt, waited for) and reads the server's memory before, just after,
// cfg.IdleAfter after, and once the sessions were evicted.
func runIdle(ctx context.Context, e *env) (Result, error) {
	res := &IdleRows{Sessions: e.cfg.IdleSessions}
	srv, c, err := e.start("idle", "")
	if err != nil {
		return res, err
	}
	err = idleMeasure(ctx, e, srv, c, res)
	if stopErr := e.stop(srv, c); err == nil {
		err = stopErr
	}
	return res, err
}

func idleMeasure(ctx context.Context, e *env, srv *Server, c *client, res *IdleRows) error {
	e.note("agents serve has no flag for idle eviction: the runner evicts a session after 5 minutes idle (runner.DefaultIdleEvict)")
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
		res.Rows = append(res.Rows, row)
		return row, nil
	}
	if _, err := add("after touch"); err != nil {
		return err
	}
	if d := e.cfg.IdleAfter; d > 0 {
		e.logf("   waiting %v", d)
		if err := sleep(ctx, time.Until(touched.Add(d))); err != nil {
			return err
		}
		if _, err := add(fmt.Sprintf("after %v idle", d)); err != nil {
			return err
		}
	}
	if d := e.cfg.EvictWait; d > 0 {
		e.logf("   waiting up to %v for the eviction", d)
		deadline := touched.Add(d)
		for {
			m, err := c.metrics(ctx)
			if err != nil {
				return fmt.Errorf("read /metrics: %w", err)
			}
			g, ok := m["go_goroutines"]
			if !ok {
				return fmt.Errorf("/metrics has no go_goroutines: cannot tell when the sessions are evicted")
			}
			if int(g) <= base.Goroutines+n/10 {
				_, err := add("after eviction")
				return err
			}
			if time.Now().After(deadline) {
				if _, err := add(fmt.Sprintf("not evicted after %v", d)); err != nil {
					return err
				}
				return fmt.Errorf("%.0f goroutines %v after the touch (%d before it): the sessions were not evicted", g, d, base.Goroutines)
			}
			if err := sleep(ctx, evictPoll); err != nil {
				return err
			}
		}
	}
	return nil
}

// memorySnapshot reads the server's RSS from /proc and its goroutines and
// heap from /metrics (-1 when /metrics does not say).
func memorySnapshot(ctx context.Context, srv *Server, c *client, phase string, since time.Duration) (IdleRow, error) {
	row := IdleRow{Phase: phase, SinceTouch: Duration(since), Goroutines: -1, HeapInuse: -1}
	m, err := c.metrics(ctx)
	if err == nil {
		if v, ok := m["go_goroutines"]; ok {
			row.Goroutines = int(v)
		}
		if v, ok := m["go_memstats_heap_inuse_bytes"]; ok {
			row.HeapInuse = int64(v)
		}
	}
	u, err := srv.Usage()
	if err != nil {
		return row, err
	}
	row.RSS = u.RSS
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
