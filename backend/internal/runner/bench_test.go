package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/cputime"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// stepsPerRun is the length of every benchmark run. Runs are short enough
// that the history a step renders stays typical (at most 2×16+1 turns) and
// long enough that creating the session is a small part of the work.
const stepsPerRun = 16

// BenchmarkSteps is the kernel benchmark (`make bench`, BENCHMARKS.md): the
// runner over a real SQLite file, the event hub and the offline model with
// no delay, driven by 1 or 64 concurrent sessions that each start run after
// run of stepsPerRun steps (so starting and ending runs is in the measure,
// once every stepsPerRun steps). One op is one step: ns/op is the wall time
// per step of the whole server, and B/op, allocs/op count the whole
// process, the offline model included. The metrics are
//
//   - steps/s: aggregate steps per second;
//   - overhead-p50-µs, overhead-p99-µs: the server's own time per step,
//     runner.StepStats.Overhead (total − model − tools), over every step of
//     the timed window;
//   - model-p50-µs, tools-p50-µs: the model call (HTTP to the in-process
//     offline model) and the tool round as the runner times them; the
//     round lasts until its results are stored, so it holds one commit;
//   - cpu-µs/step: CPU time the whole process used per step, the offline
//     model's included. Unlike the times above it hardly moves when other
//     programs load the machine, and cores ÷ cpu-µs/step bounds steps/s.
//
// Every step asks for one tool call. With tool=system it is the system
// tool os_list_sub_sessions, which the server runs itself (one indexed read
// of the store): the step is the kernel alone, with no process competing
// for the CPU. With tool=bash it is a script that prints "ok", so each step
// also starts one process, as real bash tools do.
func BenchmarkSteps(b *testing.B) {
	benchStepsOn(b, func(b *testing.B) store.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatalf("open store: %v", err)
		}
		return db
	})
}

// BenchmarkStepsPostgres is BenchmarkSteps on a PostgreSQL database of
// its own (pgtest), its commits waiting for the WAL flush as they do by
// default in production.
func BenchmarkStepsPostgres(b *testing.B) {
	benchStepsOn(b, func(b *testing.B) store.Store {
		u, err := url.Parse(pgtest.DSN(b))
		if err != nil {
			b.Fatal(err)
		}
		q := u.Query()
		q.Set("synchronous_commit", "on")
		u.RawQuery = q.Encode()
		db, err := postgres.Open(context.Background(), u.String(), postgres.Options{})
		if err != nil {
			b.Fatalf("open store: %v", err)
		}
		return db
	})
}

func benchStepsOn(b *testing.B, open func(*testing.B) store.Store) {
	for _, tool := range []struct{ variant, name string }{
		{"system", tool.ListSubSessionsName},
		{"bash", "bash_noop"},
	} {
		for _, sessions := range []int{1, 64} {
			b.Run(fmt.Sprintf("tool=%s/sessions=%d", tool.variant, sessions), func(b *testing.B) {
				benchSteps(b, open(b), tool.name, sessions)
			})
		}
	}
}

func benchSteps(b *testing.B, db store.Store, tool string, sessions int) {
	ctx := context.Background()
	model := fakellmtest.Start(b, fakellm.Rules{Rules: []fakellm.Rule{{
		Name: "always call the tool",
		Reply: fakellm.Reply{
			Text:      "Calling the tool.",
			ToolCalls: []fakellm.ToolCall{{Name: tool, Arguments: json.RawMessage(`{}`)}},
			// One chunk per field: the stream's cost stays constant and
			// small, as the benchmark is about the server, not the model.
			ChunkSize: 1 << 16,
		},
	}}})
	b.Cleanup(func() { _ = db.Close() })
	cat := catalog.New(ctx, func() *agentfile.Set {
		return agentfile.Load(nil, []string{"testdata/bench/agents"})
	}, catalog.Options{
		HasKey:          func(string) bool { return false },
		OfflineModelURL: model.URL(),
	})
	if errs := cat.Snapshot().Errors; len(errs) > 0 {
		b.Fatalf("bench agent does not load: %v", errs)
	}
	hub := events.New(events.Options{})
	rec := newStepRecorder(b.N)
	run := runner.New(runner.Options{
		Store:   db,
		Hub:     hub,
		Catalog: cat,
		// The production factory: one shared client per endpoint, default
		// transport and retry settings.
		Models: runner.LLMModels(func(string) (string, bool) { return "", false }, llm.Limits{}, nil),
		OnStep: rec.add,
	})
	if err := run.Recover(ctx); err != nil {
		b.Fatalf("recover: %v", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var drivers sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	cpuBefore, cpuKnown := cputime.Process()
	for range sessions {
		drivers.Go(func() {
			if err := drive(ctx, run); err != nil && ctx.Err() == nil {
				b.Error(err)
				cancel()
			}
		})
	}
	select {
	case <-rec.done:
	case <-ctx.Done():
	}
	b.StopTimer()
	cpuAfter, _ := cputime.Process()
	// Steps still in flight finish or are abandoned by Close; only the
	// first b.N were timed and recorded.
	cancel()
	drivers.Wait()
	run.Close()
	hub.Shutdown()
	if b.Failed() {
		return
	}

	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	// Below the compaction threshold a step makes one model call: the
	// measure adds none (steps still in flight may add a few).
	b.ReportMetric(float64(len(model.Requests()))/float64(b.N), "model-calls/step")
	overhead := make([]time.Duration, len(rec.steps))
	modelTime := make([]time.Duration, len(rec.steps))
	toolTime := make([]time.Duration, len(rec.steps))
	for i, s := range rec.steps {
		overhead[i], modelTime[i], toolTime[i] = s.Overhead(), s.Model, s.Tools
	}
	b.ReportMetric(micros(percentile(overhead, 0.50)), "overhead-p50-µs")
	b.ReportMetric(micros(percentile(overhead, 0.99)), "overhead-p99-µs")
	b.ReportMetric(micros(percentile(modelTime, 0.50)), "model-p50-µs")
	b.ReportMetric(micros(percentile(toolTime, 0.50)), "tools-p50-µs")
	if cpuKnown {
		b.ReportMetric(micros(cpuAfter-cpuBefore)/float64(b.N), "cpu-µs/step")
	}
}

// drive plays one client: it starts a session with a run of stepsPerRun
// steps, waits for the run to end, checks that it ran every step and that
// the tool succeeded, and starts the next, until ctx ends. A fresh session
// per run keeps the history a step renders bounded.
func drive(ctx context.Context, run *runner.Runner) error {
	const owner = "bench"
	for ctx.Err() == nil {
		v, err := run.CreateSession(ctx, owner, runner.CreateRequest{
			Agent:   "bench",
			Message: &runner.Message{Text: "Call the tool until told to stop."},
			Run:     runner.RunOptions{MaxSteps: stepsPerRun},
		})
		if err != nil {
			return fmt.Errorf("create session: %w", err)
		}
		id := v.Meta.ID
		v, err = run.GetSession(ctx, owner, id, true, time.Minute)
		if err != nil {
			return fmt.Errorf("wait for session %s: %w", id, err)
		}
		// A run that went wrong would still be fast; these checks make sure
		// the steps timed are the steps meant.
		m := v.Meta
		if m.Status != session.StatusReady || m.TurnCount != 1+2*stepsPerRun || len(v.Turns) != m.TurnCount {
			return fmt.Errorf("session %s ended %s (%s) after %d turns, want ready after %d",
				id, m.Status, m.StatusReason, m.TurnCount, 1+2*stepsPerRun)
		}
		last := v.Turns[len(v.Turns)-1].User
		if last == nil || len(last.ToolResults) != 1 || last.ToolResults[0].Status != session.ResultOK {
			return fmt.Errorf("session %s: last turn %+v, want one successful tool result", id, last)
		}
	}
	return nil
}

// stepRecorder keeps the stats of the first n steps the runner reports and
// closes done once all n are stored. It is called on every actor goroutine
// at once, so it claims slots with an atomic counter instead of a lock, and
// counts stores separately: the last slot claimed is not always the last
// one written.
type stepRecorder struct {
	steps  []runner.StepStats
	next   atomic.Int64
	stored atomic.Int64
	done   chan struct{}
}

func newStepRecorder(n int) *stepRecorder {
	return &stepRecorder{steps: make([]runner.StepStats, n), done: make(chan struct{})}
}

func (r *stepRecorder) add(s runner.StepStats) {
	i := int(r.next.Add(1)) - 1
	if i >= len(r.steps) {
		return
	}
	r.steps[i] = s
	if int(r.stored.Add(1)) == len(r.steps) {
		close(r.done)
	}
}

// percentile returns the q-quantile of ds (nearest rank); it sorts ds.
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
