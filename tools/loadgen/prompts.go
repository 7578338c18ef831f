package loadgen

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"
)

// PromptRow is one run of the prompts workload.
type PromptRow struct {
	Stored        int      `json:"stored_sessions"` // sessions in the database before the run
	Sessions      int      `json:"sessions"`        // concurrent sessions
	PerSession    int      `json:"prompts_per_session"`
	Prompts       int      `json:"prompts"` // prompts that completed
	Errors        int      `json:"errors"`
	FirstError    string   `json:"first_error,omitempty"`
	Wall          Duration `json:"wall_ms"`
	PromptsPerSec float64  `json:"prompts_per_s"`
	Latency       Latency  `json:"latency_ms"`
	ServerCPU     Duration `json:"server_cpu_ms"`
	CPUPerPrompt  Duration `json:"server_cpu_per_prompt_ms"`
	ClientCPU     Duration `json:"client_cpu_ms"` // this process: clients and the model
	RSS           int64    `json:"server_rss_bytes"`
	Startup       Duration `json:"startup_ms"`
	// Binary is the agents binary of the row, when the run compares two;
	// Base marks the rows of the binary compared with (-compare).
	Binary string `json:"binary,omitempty"`
	Base   bool   `json:"base,omitempty"`
	// Runs is how many times the row ran; the row is the median run by
	// CPU per prompt, and the ranges span all of them.
	Runs            int         `json:"runs,omitempty"`
	PromptsPerSecAt [2]float64  `json:"prompts_per_s_range,omitempty"`
	CPUPerPromptAt  [2]Duration `json:"server_cpu_per_prompt_ms_range,omitempty"`
}

// PromptRows is the prompts scenario's result (and the stored one's).
type PromptRows struct {
	Rows []PromptRow `json:"rows"`
}

func (r *PromptRows) failed() bool {
	for _, row := range r.Rows {
		if row.Errors > 0 {
			return true
		}
	}
	return false
}

// Table implements Result.
func (r *PromptRows) Table() ([]string, [][]string) {
	header := []string{"stored", "sessions", "prompts", "errors", "prompts/s", "p50 ms", "p90 ms", "p99 ms", "cpu/prompt ms", "server cpu ms", "client cpu ms", "rss MB", "startup ms"}
	repeated := slices.ContainsFunc(r.Rows, func(p PromptRow) bool { return p.Runs > 1 })
	if repeated {
		header = append(header, "runs", "prompts/s range", "cpu/prompt range")
	}
	compared := slices.ContainsFunc(r.Rows, func(p PromptRow) bool { return p.Binary != "" })
	if compared {
		header = append(header, "binary", "cpu/prompt ÷ base", "p50 ÷ base", "prompts/s ÷ base")
	}
	var rows [][]string
	for i, p := range r.Rows {
		row := []string{itoa(p.Stored), itoa(p.Sessions), fmt.Sprintf("%d×%d", p.Sessions, p.PerSession), itoa(p.Errors),
			rate(p.PromptsPerSec), ms(p.Latency.P50), ms(p.Latency.P90), ms(p.Latency.P99),
			ms(p.CPUPerPrompt), ms(p.ServerCPU), ms(p.ClientCPU), mb(p.RSS), ms(p.Startup)}
		if repeated {
			row = append(row, itoa(max(1, p.Runs)),
				rate(p.PromptsPerSecAt[0])+"–"+rate(p.PromptsPerSecAt[1]),
				ms(p.CPUPerPromptAt[0])+"–"+ms(p.CPUPerPromptAt[1]))
		}
		if compared {
			row = append(row, p.Binary)
			if base, ok := r.baseOf(i); ok {
				row = append(row, ratio(float64(p.CPUPerPrompt), float64(base.CPUPerPrompt)),
					ratio(float64(p.Latency.P50), float64(base.Latency.P50)), ratio(p.PromptsPerSec, base.PromptsPerSec))
			} else {
				row = append(row, "", "", "")
			}
		}
		rows = append(rows, row)
	}
	return header, rows
}

// baseOf is the base's row of the same size as row i, when row i is the
// measured binary's (runPrompts puts it right after the measured one).
func (r *PromptRows) baseOf(i int) (PromptRow, bool) {
	if r.Rows[i].Base || i+1 >= len(r.Rows) {
		return PromptRow{}, false
	}
	p, next := r.Rows[i], r.Rows[i+1]
	if !next.Base || p.Sessions != next.Sessions || p.Stored != next.Stored {
		return PromptRow{}, false
	}
	return next, true
}

func runPrompts(ctx context.Context, e *env) (Result, error) {
	repeat := max(1, e.cfg.Repeat)
	bins := []string{e.bin}
	if e.cfg.Compare != "" {
		bins = append(bins, e.cfg.Compare)
	}
	// runs[i][b] are the runs of concurrency i against binary b; the
	// sizes and the binaries take turns, so a slow spell of the machine
	// falls on all of them alike.
	runs := make([][][]PromptRow, len(e.cfg.Concurrency))
	for i := range runs {
		runs[i] = make([][]PromptRow, len(bins))
	}
	result := func() *PromptRows {
		res := &PromptRows{}
		for i := range runs {
			for b, rs := range runs[i] {
				if len(rs) == 0 {
					continue
				}
				row := medianRun(rs)
				if len(bins) > 1 {
					row.Binary, row.Base = bins[b], b > 0
				}
				res.Rows = append(res.Rows, row)
			}
		}
		return res
	}
	for r := range repeat {
		for i, n := range e.cfg.Concurrency {
			for b, bin := range bins {
				what := fmt.Sprintf("%d sessions × %d prompts", n, e.cfg.Prompts)
				if len(bins) > 1 {
					what += ", " + bin
				}
				if repeat > 1 {
					what += fmt.Sprintf(" (run %d of %d)", r+1, repeat)
				}
				e.logf("   %s", what)
				name := fmt.Sprintf("prompts-%d", n)
				if b > 0 {
					name += "-compared"
				}
				row, err := promptRun(ctx, e, bin, name, "", 0, n, e.cfg.Prompts)
				runs[i][b] = append(runs[i][b], row)
				if err != nil {
					return result(), fmt.Errorf("%d sessions, %s: %w", n, bin, err)
				}
			}
		}
	}
	return result(), nil
}

// medianRun is the run of one row with the median CPU per prompt (the
// lower of the two middle ones), with the ranges of all the runs.
func medianRun(runs []PromptRow) PromptRow {
	if len(runs) == 1 {
		return runs[0]
	}
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b PromptRow) int { return cmp.Compare(a.CPUPerPrompt, b.CPUPerPrompt) })
	row := sorted[(len(sorted)-1)/2]
	row.Runs = len(runs)
	row.CPUPerPromptAt = [2]Duration{sorted[0].CPUPerPrompt, sorted[len(sorted)-1].CPUPerPrompt}
	row.PromptsPerSecAt = [2]float64{runs[0].PromptsPerSec, runs[0].PromptsPerSec}
	for _, r := range runs {
		row.PromptsPerSecAt[0] = min(row.PromptsPerSecAt[0], r.PromptsPerSec)
		row.PromptsPerSecAt[1] = max(row.PromptsPerSecAt[1], r.PromptsPerSec)
	}
	return row
}

// promptRun starts a server of bin, named name, on db (a new database when
// empty), creates sessions idle sessions and has each prompt perSession
// times, one prompt after the other, all sessions at once.
func promptRun(ctx context.Context, e *env, bin, name, db string, stored, sessions, perSession int) (PromptRow, error) {
	row := PromptRow{Stored: stored, Sessions: sessions, PerSession: perSession}
	srv, c, err := e.startBinary(bin, name, db)
	if err != nil {
		return row, err
	}
	row.Startup = Duration(srv.Startup)
	measured, err := func() (bool, error) {
		if err := warmUp(ctx, c); err != nil {
			return false, err
		}
		ids, err := createSessions(ctx, c, sessions)
		if err != nil {
			return false, err
		}
		m, err := measure(srv, func() {
			lat, errs := promptAll(ctx, c, ids, perSession, nil)
			row.Latency = Summarise(lat)
			row.Prompts = len(lat)
			row.Errors, row.FirstError = errs.get()
		})
		if err != nil {
			return false, err
		}
		row.Wall, row.ServerCPU, row.ClientCPU, row.RSS = m.wall, m.serverCPU, m.clientCPU, m.rss
		if row.Prompts > 0 {
			row.PromptsPerSec = float64(row.Prompts) / time.Duration(m.wall).Seconds()
			row.CPUPerPrompt = row.ServerCPU / Duration(row.Prompts)
		}
		return true, nil
	}()
	if stopErr := e.stop(srv, c); err == nil {
		err = stopErr
	}
	if measured && row.Errors > 0 {
		e.note("%d stored, %d sessions: %d of %d prompts failed; the first: %s", stored, sessions, row.Errors, sessions*perSession, row.FirstError)
	}
	return row, err
}

// warmUp runs a few prompts on a session of their own, so the first
// measured prompt does not pay for connections and caches.
func warmUp(ctx context.Context, c *client) error {
	id, err := c.create(ctx, "")
	if err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	for i := range 3 {
		if err := c.prompt(ctx, id, fmt.Sprintf("warm-up %d", i)); err != nil {
			return fmt.Errorf("warm up: %w", err)
		}
	}
	return nil
}

// createSessions makes n idle sessions, 16 at a time.
func createSessions(ctx context.Context, c *client, n int) ([]string, error) {
	ids := make([]string, n)
	err := parallel(ctx, n, 16, func(i int) error {
		id, err := c.create(ctx, "")
		ids[i] = id
		return err
	})
	return ids, err
}

// parallel calls fn(0), …, fn(n-1) from at most width goroutines and
// returns the first error; after an error it starts no more calls.
func parallel(ctx context.Context, n, width int, fn func(i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(width, n) {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// promptAll has every session prompt perSession times, all at once, and
// returns the latencies of the prompts that completed. With pace, each
// prompt waits for a value from it first (a ticker: so many a second,
// the sessions together); nil lets each go as soon as the last answered.
func promptAll(ctx context.Context, c *client, ids []string, perSession int, pace <-chan time.Time) ([]time.Duration, *errorCount) {
	var lat samples
	errs := &errorCount{}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for i := range perSession {
				if pace != nil {
					select {
					case <-pace:
					case <-ctx.Done():
						return
					}
				}
				begin := time.Now()
				if err := c.prompt(ctx, id, fmt.Sprintf("prompt %d", i)); err != nil {
					errs.add(err)
					if ctx.Err() != nil {
						return
					}
					continue
				}
				lat.add(time.Since(begin))
			}
		})
	}
	wg.Wait()
	return lat.take(), errs
}

// measurement is what the kernel accounted while a workload ran.
type measurement struct {
	wall      Duration
	serverCPU Duration
	clientCPU Duration
	rss       int64 // the server's, at the end
}

// measure runs work and reads the server's and this process's CPU time
// around it.
func measure(srv *Server, work func()) (measurement, error) {
	self, err := ReadUsage(os.Getpid())
	if err != nil {
		return measurement{}, err
	}
	before, err := srv.Usage()
	if err != nil {
		return measurement{}, err
	}
	if err := srv.startProfile(); err != nil {
		return measurement{}, err
	}
	begin := time.Now()
	work()
	wall := time.Since(begin)
	if err := srv.stopProfile(); err != nil {
		return measurement{}, err
	}
	after, err := srv.Usage()
	if err != nil {
		return measurement{}, err
	}
	selfAfter, err := ReadUsage(os.Getpid())
	if err != nil {
		return measurement{}, err
	}
	return measurement{
		wall:      Duration(wall),
		serverCPU: Duration(after.CPU - before.CPU),
		clientCPU: Duration(selfAfter.CPU - self.CPU),
		rss:       after.RSS,
	}, nil
}
