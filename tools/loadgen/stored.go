package loadgen

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// runStored runs the prompts workload on an empty database and on one
// holding cfg.Stored sessions, one after the other.
func runStored(ctx context.Context, e *env) (Result, error) {
	res := &PromptRows{}
	for _, stored := range []int{0, e.cfg.Stored} {
		db := ""
		if stored > 0 {
			var err error
			if db, err = e.seededDB(ctx, stored); err != nil {
				return res, fmt.Errorf("seed %d sessions: %w", stored, err)
			}
		}
		e.logf("   %d stored sessions: %d sessions × %d prompts", stored, e.cfg.StoredConcurrency, e.cfg.StoredPrompts)
		row, err := promptRun(ctx, e, e.bin, fmt.Sprintf("prompts-%d", e.cfg.StoredConcurrency), db, stored, e.cfg.StoredConcurrency, e.cfg.StoredPrompts)
		res.Rows = append(res.Rows, row)
		if err != nil {
			return res, fmt.Errorf("%d stored sessions: %w", stored, err)
		}
	}
	return res, nil
}

// StartupRow is the start-up time with a given number of stored sessions.
type StartupRow struct {
	Stored  int        `json:"stored_sessions"`
	Runs    []Duration `json:"runs_ms"`
	Median  Duration   `json:"median_ms"`
	Min     Duration   `json:"min_ms"`
	Max     Duration   `json:"max_ms"`
	Ready   Duration   `json:"ready_median_ms"` // exec to the first 200 from /readyz
	DBBytes int64      `json:"db_bytes"`
	RSS     int64      `json:"server_rss_bytes"` // just after `listening`, last run
}

// StartupRows is the startup scenario's result.
type StartupRows struct {
	Rows []StartupRow `json:"rows"`
}

// Table implements Result.
func (r *StartupRows) Table() ([]string, [][]string) {
	header := []string{"stored", "runs", "listening median ms", "min ms", "max ms", "ready median ms", "db MB", "rss MB"}
	var rows [][]string
	for _, s := range r.Rows {
		rows = append(rows, []string{itoa(s.Stored), itoa(len(s.Runs)), ms(s.Median), ms(s.Min), ms(s.Max), ms(s.Ready), mb(s.DBBytes), mb(s.RSS)})
	}
	return header, rows
}

// runStartup starts a server cfg.StartupRuns times on an empty database
// and on one holding cfg.Stored sessions, and times exec to `listening`.
func runStartup(ctx context.Context, e *env) (Result, error) {
	res := &StartupRows{}
	for _, stored := range []int{0, e.cfg.Stored} {
		row := StartupRow{Stored: stored}
		err := startupRun(ctx, e, &row)
		res.Rows = append(res.Rows, row)
		if err != nil {
			return res, fmt.Errorf("%d stored sessions: %w", stored, err)
		}
	}
	return res, nil
}

func startupRun(ctx context.Context, e *env, row *StartupRow) error {
	db := ""
	if row.Stored > 0 {
		var err error
		if db, err = e.seededDB(ctx, row.Stored); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	e.logf("   %d stored sessions: %d starts", row.Stored, e.cfg.StartupRuns)
	var runs, ready []time.Duration
	for range max(e.cfg.StartupRuns, 1) {
		if err := ctx.Err(); err != nil {
			return err
		}
		srv, c, err := e.start(fmt.Sprintf("startup-%d", row.Stored), db)
		if err != nil {
			return err
		}
		runs = append(runs, srv.Startup)
		ready = append(ready, srv.Ready)
		row.Runs = append(row.Runs, Duration(srv.Startup))
		if u, err := srv.Usage(); err == nil {
			row.RSS = u.RSS
		}
		if db == "" {
			db = srv.DB
		}
		if err := e.stop(srv, c); err != nil {
			return err
		}
	}
	if size, err := fileSize(db); err == nil {
		row.DBBytes = size
	}
	slices.Sort(runs)
	row.Min, row.Max = Duration(runs[0]), Duration(runs[len(runs)-1])
	row.Median = Duration(Percentile(runs, 50))
	slices.Sort(ready)
	row.Ready = Duration(Percentile(ready, 50))
	return nil
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
