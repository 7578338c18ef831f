package loadgen

import (
	"context"
	"fmt"
	"time"
)

// GetRow is GetSession on one session of a given length.
type GetRow struct {
	Turns      int      `json:"turns"`
	Calls      int      `json:"calls"` // calls that completed
	Errors     int      `json:"errors"`
	FirstError string   `json:"first_error,omitempty"`
	Bytes      int      `json:"response_bytes"`
	Latency    Latency  `json:"latency_ms"`
	ServerCPU  Duration `json:"server_cpu_ms"`
	CPUPerCall Duration `json:"server_cpu_per_call_ms"`
	Build      Duration `json:"build_ms"` // time to prompt the session to its length
}

// GetRows is the getsession scenario's result.
type GetRows struct {
	Rows []GetRow `json:"rows"`
}

func (r *GetRows) failed() bool {
	for _, row := range r.Rows {
		if row.Errors > 0 {
			return true
		}
	}
	return false
}

// Table implements Result.
func (r *GetRows) Table() ([]string, [][]string) {
	header := []string{"turns", "calls", "errors", "response KB", "p50 ms", "p90 ms", "p99 ms", "cpu/call ms", "server cpu ms"}
	var rows [][]string
	for _, g := range r.Rows {
		rows = append(rows, []string{itoa(g.Turns), itoa(g.Calls), itoa(g.Errors), fmt.Sprintf("%.1f", float64(g.Bytes)/1024),
			ms(g.Latency.P50), ms(g.Latency.P90), ms(g.Latency.P99), ms(g.CPUPerCall), ms(g.ServerCPU)})
	}
	return header, rows
}

// runGetSession prompts one session per length until it has that many
// turns (two per prompt: the message and the answer), then reads it whole
// with GetSession, one call after the other.
func runGetSession(ctx context.Context, e *env) (Result, error) {
	res := &GetRows{}
	srv, c, err := e.start("getsession", "")
	if err != nil {
		return res, err
	}
	err = func() error {
		if err := warmUp(ctx, c); err != nil {
			return err
		}
		for _, turns := range e.cfg.Turns {
			e.logf("   %d turns, %d calls", turns, e.cfg.GetCalls)
			row := GetRow{Turns: turns}
			err := getRun(ctx, e, srv, c, &row)
			res.Rows = append(res.Rows, row)
			if err != nil {
				return fmt.Errorf("%d turns: %w", turns, err)
			}
			if row.Errors > 0 {
				e.note("%d turns: %d calls failed; the first: %s", turns, row.Errors, row.FirstError)
			}
		}
		return nil
	}()
	if stopErr := e.stop(srv, c); err == nil {
		err = stopErr
	}
	return res, err
}

func getRun(ctx context.Context, e *env, srv *Server, c *client, row *GetRow) error {
	begin := time.Now()
	id, err := c.create(ctx, "")
	if err != nil {
		return err
	}
	var meta sessionMeta
	for i := 0; meta.TurnCount < row.Turns; i++ {
		if err := c.post(ctx, id, fmt.Sprintf("prompt %d", i)); err != nil {
			return err
		}
		if meta, err = c.wait(ctx, id); err != nil {
			return err
		}
	}
	row.Build = Duration(time.Since(begin))
	row.Turns = meta.TurnCount
	if row.Bytes, err = c.get(ctx, id); err != nil { // and warm up
		return err
	}
	var lat samples
	errs := &errorCount{}
	m, err := measure(srv, func() {
		for range e.cfg.GetCalls {
			t := time.Now()
			if _, err := c.get(ctx, id); err != nil {
				errs.add(err)
				if ctx.Err() != nil {
					return
				}
				continue
			}
			lat.add(time.Since(t))
		}
	})
	if err != nil {
		return err
	}
	row.Latency = Summarise(lat.take())
	row.Calls = row.Latency.N
	row.Errors, row.FirstError = errs.get()
	row.ServerCPU = m.serverCPU
	if row.Calls > 0 {
		row.CPUPerCall = m.serverCPU / Duration(row.Calls)
	}
	return nil
}
