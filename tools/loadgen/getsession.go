package loadgen

import (
	"context"
	"fmt"
	"time"
)

// GetRow is GetSession on one session of a given length.
type GetRow struct {
	Turns      int      `json:"turns"`
	View       string   `json:"view"`  // the query: "" for the whole session
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
	header := []string{"turns", "view", "calls", "errors", "response KB", "p50 ms", "p90 ms", "p99 ms", "cpu/call ms", "server cpu ms"}
	var rows [][]string
	for _, g := range r.Rows {
		view := g.View
		if view == "" {
			view = "whole"
		}
		rows = append(rows, []string{itoa(g.Turns), view, itoa(g.Calls), itoa(g.Errors), fmt.Sprintf("%.1f", float64(g.Bytes)/1024),
			ms(g.Latency.P50), ms(g.Latency.P90), ms(g.Latency.P99), ms(g.CPUPerCall), ms(g.ServerCPU)})
	}
	return header, rows
}

// getViews are the reads measured on each session: the whole session,
// and the last prompt's two turns (a view servers without views ignore,
// which the response size shows).
var getViews = []string{"", "last=2"}

// runGetSession prompts one session per length until it has that many
// turns (two per prompt: the message and the answer), then reads it with
// GetSession, one call after the other: whole, and as a view.
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
			e.logf("   %d turns, %d calls per view", turns, e.cfg.GetCalls)
			id, got, build, err := longSession(ctx, c, turns)
			if err != nil {
				return fmt.Errorf("%d turns: %w", turns, err)
			}
			for _, view := range getViews {
				row := GetRow{Turns: got, View: view, Build: Duration(build)}
				err := getRun(ctx, e, srv, c, id, &row)
				res.Rows = append(res.Rows, row)
				if err != nil {
					return fmt.Errorf("%d turns, view %q: %w", turns, view, err)
				}
				if row.Errors > 0 {
					e.note("%d turns, view %q: %d calls failed; the first: %s", turns, view, row.Errors, row.FirstError)
				}
			}
		}
		return nil
	}()
	if stopErr := e.stop(srv, c); err == nil {
		err = stopErr
	}
	return res, err
}

// longSession makes a session with at least turns turns.
func longSession(ctx context.Context, c *client, turns int) (id string, got int, build time.Duration, err error) {
	begin := time.Now()
	if id, err = c.create(ctx, ""); err != nil {
		return "", 0, 0, err
	}
	var meta sessionMeta
	for i := 0; meta.TurnCount < turns; i++ {
		turn, err := c.post(ctx, id, fmt.Sprintf("prompt %d", i))
		if err != nil {
			return "", 0, 0, err
		}
		if meta, err = c.wait(ctx, id, turn); err != nil {
			return "", 0, 0, err
		}
	}
	return id, meta.TurnCount, time.Since(begin), nil
}

func getRun(ctx context.Context, e *env, srv *Server, c *client, id string, row *GetRow) error {
	path := "/v1/sessions/" + id
	if row.View != "" {
		path += "?" + row.View
	}
	var err error
	if row.Bytes, err = c.do(ctx, "GET", path, nil, nil); err != nil { // and warm up
		return err
	}
	var lat samples
	errs := &errorCount{}
	m, err := measure(srv, func() {
		for range e.cfg.GetCalls {
			t := time.Now()
			if _, err := c.do(ctx, "GET", path, nil, nil); err != nil {
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
