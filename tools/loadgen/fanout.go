package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// FanoutRow is one run of the fan-out workload.
type FanoutRow struct {
	Subscribers   int      `json:"subscribers"`
	Kinds         string   `json:"kinds,omitempty"` // the subscribers' filter; empty: every kind
	Sessions      int      `json:"sessions"`
	PerSession    int      `json:"prompts_per_session"`
	Rate          float64  `json:"prompts_per_s_paced,omitempty"` // 0: unpaced
	Prompts       int      `json:"prompts"`                       // prompts that completed
	Errors        int      `json:"errors"`                        // failed prompts and broken streams
	FirstError    string   `json:"first_error,omitempty"`
	Lagged        int      `json:"lagged"`  // subscribers the server ended as lagged
	Missing       int      `json:"missing"` // run.stopped events a subscriber that did not lag never got
	Events        int      `json:"events"`  // events received, summed over subscribers
	Wall          Duration `json:"wall_ms"`
	PromptsPerSec float64  `json:"prompts_per_s"`
	EventsPerSec  float64  `json:"events_per_s"`
	Delay         Latency  `json:"delay_ms"` // run.stopped: receive time − the event's time
	Latency       Latency  `json:"prompt_latency_ms"`
	ServerCPU     Duration `json:"server_cpu_ms"`
	CPUPerEvent   Duration `json:"server_cpu_per_event_and_subscriber_ms"`
	CPUPerPrompt  Duration `json:"server_cpu_per_prompt_ms"`
	ClientCPU     Duration `json:"client_cpu_ms"`
	RSS           int64    `json:"server_rss_bytes"`
	StoppedWanted int      `json:"run_stopped_per_subscriber"`
}

// FanoutRows is the fanout scenario's result.
type FanoutRows struct {
	Rows []FanoutRow `json:"rows"`
}

func (r *FanoutRows) failed() bool {
	for _, row := range r.Rows {
		if row.Errors > 0 || row.Missing > 0 {
			return true
		}
	}
	return false
}

// Table implements Result.
func (r *FanoutRows) Table() ([]string, [][]string) {
	header := []string{"subscribers", "kinds", "prompts", "errors", "lagged", "missing", "events", "prompts/s", "events/s", "delay p50 ms", "delay p99 ms", "cpu/event/sub µs", "cpu/prompt ms", "prompt p50 ms", "prompt p99 ms", "server cpu ms", "client cpu ms", "rss MB"}
	var rows [][]string
	for _, f := range r.Rows {
		prompts := fmt.Sprintf("%d×%d", f.Sessions, f.PerSession)
		if f.Rate > 0 {
			prompts += fmt.Sprintf(" at %g/s", f.Rate)
		}
		kinds := f.Kinds
		if kinds == "" {
			kinds = "all"
		}
		rows = append(rows, []string{itoa(f.Subscribers), kinds, prompts, itoa(f.Errors), itoa(f.Lagged), itoa(f.Missing),
			itoa(f.Events), rate(f.PromptsPerSec), rate(f.EventsPerSec), ms(f.Delay.P50), ms(f.Delay.P99), us(f.CPUPerEvent), ms(f.CPUPerPrompt),
			ms(f.Latency.P50), ms(f.Latency.P99), ms(f.ServerCPU), ms(f.ClientCPU), mb(f.RSS)})
	}
	return header, rows
}

// deliverTimeout is how long subscribers get, once the last prompt
// returned, to receive the last run.stopped.
const deliverTimeout = 60 * time.Second

func runFanout(ctx context.Context, e *env) (Result, error) {
	res := &FanoutRows{}
	for _, n := range e.cfg.Subscribers {
		e.logf("   %d subscribers, %d sessions × %d prompts", n, e.cfg.FanoutSessions, e.cfg.Prompts)
		row, err := fanoutRun(ctx, e, n, e.cfg.FanoutSessions, e.cfg.Prompts)
		res.Rows = append(res.Rows, row)
		if err != nil {
			return res, fmt.Errorf("%d subscribers: %w", n, err)
		}
	}
	return res, nil
}

func fanoutRun(ctx context.Context, e *env, subscribers, sessions, perSession int) (FanoutRow, error) {
	row := FanoutRow{Subscribers: subscribers, Kinds: strings.Join(e.cfg.FanoutKinds, ","), Sessions: sessions, PerSession: perSession, Rate: e.cfg.FanoutRate, StoppedWanted: sessions * perSession}
	srv, c, err := e.start(fmt.Sprintf("fanout-%d", subscribers), "")
	if err != nil {
		return row, err
	}
	err = fanoutMeasure(ctx, e, srv, c, &row)
	if stopErr := e.stop(srv, c); err == nil {
		err = stopErr
	}
	if row.FirstError != "" {
		e.note("%d subscribers: %d errors; the first: %s", subscribers, row.Errors, row.FirstError)
	}
	return row, err
}

func fanoutMeasure(ctx context.Context, e *env, srv *Server, c *client, row *FanoutRow) error {
	if err := warmUp(ctx, c); err != nil {
		return err
	}
	ids, err := createSessions(ctx, c, row.Sessions)
	if err != nil {
		return err
	}

	// One connection per subscriber, as separate clients would have.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = -1
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	subs := make([]*subscriber, row.Subscribers)
	err = parallel(subCtx, row.Subscribers, 32, func(i int) error {
		s, err := subscribe(subCtx, hc, srv.URL, row.Kinds)
		subs[i] = s
		return err
	})
	defer func() {
		for _, s := range subs {
			if s != nil {
				s.close()
			}
		}
	}()
	if err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	if err := waitSubscribed(ctx, e, c, row.Subscribers); err != nil {
		return err
	}

	var delivered sync.WaitGroup
	delivered.Add(len(subs))
	for _, s := range subs {
		go s.read(row.StoppedWanted, delivered.Done)
	}
	var errs *errorCount
	var lat []time.Duration
	m, err := measure(srv, func() {
		// Paced, the delay is the server's at a load it keeps up with;
		// unpaced, it includes the queue of a machine the server and
		// the subscribers fill.
		var pace <-chan time.Time
		if row.Rate > 0 {
			tick := time.NewTicker(time.Duration(float64(time.Second) / row.Rate))
			defer tick.Stop()
			pace = tick.C
		}
		lat, errs = promptAll(ctx, c, ids, row.PerSession, pace)
		all := make(chan struct{})
		go func() {
			delivered.Wait()
			close(all)
		}()
		select {
		case <-all:
		case <-time.After(deliverTimeout):
			e.note("%d subscribers: not every subscriber had every run.stopped %v after the last prompt", row.Subscribers, deliverTimeout)
		}
	})
	if err != nil {
		return err
	}
	row.Latency = Summarise(lat)
	row.Prompts = len(lat)
	var delays []time.Duration
	for _, s := range subs {
		s.mu.Lock()
		row.Events += int(s.frames.Load())
		delays = append(delays, s.delays...)
		if s.lagged {
			row.Lagged++
		} else {
			row.Missing += row.StoppedWanted - int(s.stopped.Load())
		}
		if s.err != nil {
			errs.add(fmt.Errorf("event stream: %w", s.err))
		}
		s.mu.Unlock()
	}
	row.Errors, row.FirstError = errs.get()
	row.Delay = Summarise(delays)
	row.Wall, row.ServerCPU, row.ClientCPU, row.RSS = m.wall, m.serverCPU, m.clientCPU, m.rss
	if row.Events > 0 {
		row.EventsPerSec = float64(row.Events) / time.Duration(m.wall).Seconds()
		row.CPUPerEvent = row.ServerCPU / Duration(row.Events)
	}
	if row.Prompts > 0 {
		row.PromptsPerSec = float64(row.Prompts) / time.Duration(m.wall).Seconds()
		row.CPUPerPrompt = row.ServerCPU / Duration(row.Prompts)
	}
	return nil
}

// waitSubscribed waits until the server counts n subscribers (its
// agents_subscribers gauge), so no subscriber misses the first events.
func waitSubscribed(ctx context.Context, e *env, c *client, n int) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := c.metrics(ctx)
		if err != nil {
			e.note("could not read /metrics to check the subscribers were registered: %v", err)
			return nil
		}
		got, ok := m["agents_subscribers"]
		if !ok {
			e.note("/metrics has no agents_subscribers: not checked that the subscribers were registered")
			return nil
		}
		if int(got) >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server counts %v subscribers 30s after %d subscribed", got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
