package runner_test

import (
	"context"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/events"
	llmclient "github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/placement/leased"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/runner/modelfault"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/backend/internal/store/storefault"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// A dialect is a database the kernel runs on.
type dialect string

const (
	onSQLite   dialect = "sqlite"
	onPostgres dialect = "postgres"
)

// eachDialect runs body once on each database, SQLite first, as a
// parallel subtest named after it.
func eachDialect(t *testing.T, body func(t *testing.T, d dialect)) {
	t.Helper()
	for _, d := range []dialect{onSQLite, onPostgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			body(t, d)
		})
	}
}

// kernel is a runner over a database (a SQLite file or a PostgreSQL
// database of its own) and the offline model, with switches on both.
type kernel struct {
	// db is the store under the switches; path is its SQLite file, dsn
	// its PostgreSQL database.
	db    store.Store
	path  string
	dsn   string
	run   *runner.Runner
	hub   *events.Hub
	store *storefault.Faults
	model *modelfault.Faults
	// fake is the offline model the kernel's agents talk to.
	fake   *fakellmtest.Server
	closed bool
}

// kernelOptions tune the database under a kernel.
type kernelOptions struct {
	// lockTimeout bounds how long a write waits for a lock another
	// connection holds (SQLite's busy timeout, PostgreSQL's lock_timeout);
	// zero is the store's default.
	lockTimeout time.Duration
	// via, when set, gives the URL the PostgreSQL store connects to in
	// place of its database's (a proxy in front of it).
	via func(dsn string) string
	// budgets are the runner's prices and budget settings.
	budgets runner.Budgets
	// onStep is told the timings and measure of every step.
	onStep func(runner.StepStats)
	// now is the runner's clock; nil is time.Now.
	now func() time.Time
	// wrap, when set, is the store as the runner sees it, over the
	// store with its switches.
	wrap func(store.Store) store.Store
}

func newKernel(t *testing.T, d dialect, rules fakellm.Rules) *kernel {
	return newKernelWith(t, d, rules, kernelOptions{})
}

func newKernelWith(t *testing.T, d dialect, rules fakellm.Rules, opts kernelOptions) *kernel {
	t.Helper()
	ctx := context.Background()
	llm := fakellmtest.Start(t, rules)
	k := &kernel{store: &storefault.Faults{}, model: &modelfault.Faults{}, fake: llm}
	switch d {
	case onSQLite:
		k.path = filepath.Join(t.TempDir(), "kernel.db")
		db, err := sqlite.OpenWith(ctx, k.path, sqlite.Options{BusyTimeout: opts.lockTimeout})
		if err != nil {
			t.Fatal(err)
		}
		k.db = db
	case onPostgres:
		k.dsn = pgtest.DSN(t)
		u, err := url.Parse(k.dsn)
		if err != nil {
			t.Fatal(err)
		}
		if opts.lockTimeout > 0 {
			// pgx sends a parameter of the URL it does not know itself
			// as a setting of each connection.
			q := u.Query()
			q.Set("lock_timeout", strconv.FormatInt(opts.lockTimeout.Milliseconds(), 10))
			u.RawQuery = q.Encode()
		}
		dsn := u.String()
		if opts.via != nil {
			dsn = opts.via(dsn)
		}
		db, err := postgres.Open(ctx, dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		k.db = db
	default:
		t.Fatalf("no database %q", d)
	}
	cat := catalog.New(ctx, func() *agentfile.Set {
		return agentfile.Load(nil, []string{"testdata/bench/agents", "testdata/cluster/agents"})
	}, catalog.Options{HasKey: func(string) bool { return false }, OfflineModelURL: llm.URL()})
	var st store.Store = storefault.Wrap(k.db, k.store)
	if opts.wrap != nil {
		st = opts.wrap(st)
	}
	var err error
	if k.hub, err = runner.NewHub(ctx, st, events.Options{}); err != nil {
		t.Fatal(err)
	}
	ro := runner.Options{
		Store:   st,
		Hub:     k.hub,
		Catalog: cat,
		Models:  k.model.Factory(runner.LLMModels(func(string) (string, bool) { return "", false }, llmclient.Limits{}, nil)),
		Budgets: opts.budgets,
		OnStep:  opts.onStep,
		Now:     opts.now,
	}
	var bus *cluster.MemoryBus
	if d == onPostgres {
		// As a server on PostgreSQL runs: one of the servers the database
		// may have, its sessions under leases.
		bus = cluster.NewMemoryBus()
		ro.Placement = leased.New(leased.Options{Holder: "kernel", Bus: bus, Store: st, Now: opts.now})
	}
	k.run = runner.New(ro)
	if err := k.run.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.close()
		if bus != nil {
			_ = bus.Close()
		}
		_ = k.db.Close()
	})
	return k
}

func (k *kernel) close() {
	if !k.closed {
		k.closed = true
		k.run.Close()
		k.hub.Shutdown()
	}
}

func (k *kernel) create(t *testing.T, text string) string {
	t.Helper()
	return createOn(t, k.run, "bench", text)
}

func (k *kernel) wait(t *testing.T, id string) runner.View {
	t.Helper()
	return waitOn(t, k.run, id)
}

// createOn creates a session of agent for owner "me" with its first
// message.
func createOn(t *testing.T, r *runner.Runner, agent, text string) string {
	t.Helper()
	v, err := r.CreateSession(context.Background(), "me", runner.CreateRequest{Agent: agent, Message: &runner.Message{Text: text}})
	if err != nil {
		t.Fatal(err)
	}
	return v.Meta.ID
}

// waitOn waits until the session has no run and fails the test if it
// still says running.
func waitOn(t *testing.T, r *runner.Runner, id string) runner.View {
	t.Helper()
	v, err := r.GetSession(context.Background(), "me", id, true, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if v.Meta.Status == session.StatusRunning {
		t.Fatalf("session %s still running", id)
	}
	return v
}

var answer = fakellm.Rules{Default: &fakellm.Reply{Text: "done"}}

// Close ends runs that wait on a model that never answers, and every
// goroutine they started (TestMain checks for leaks).
func TestCloseEndsRunsWaitingOnAHangingModel(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		k.model.Hang(modelfault.Always)
		for range 3 {
			k.create(t, "hello")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := k.model.WaitRequests(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if n := k.run.ActiveRuns(); n != 3 {
			t.Fatalf("active runs = %d, want 3", n)
		}
		done := make(chan struct{})
		go func() { k.close(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatal("Close did not return while the model hung")
		}
	})
}

// A failed model call fails the run; the session takes a message again.
func TestAFailedModelCallFailsTheRunAndTheNextMessageRuns(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		k.model.Fail(1, nil)
		id := k.create(t, "hello")
		if v := k.wait(t, id); v.Meta.Status != session.StatusFailed {
			t.Fatalf("status = %s, want failed", v.Meta.Status)
		}
		if _, _, err := k.run.PostMessage(context.Background(), "me", id, runner.Message{Text: "again"}, runner.RunOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		if v := k.wait(t, id); v.Meta.Status != session.StatusReady || v.Turns[len(v.Turns)-1].LLM.Text != "done" {
			t.Fatalf("after the retry: %s (%s)", v.Meta.Status, v.Meta.StatusReason)
		}
	})
}

// Slow writes hold the runs up but lose nothing.
func TestSlowWritesLoseNothing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		k.store.SlowWrites(5 * time.Millisecond)
		ids := make([]string, 4)
		for i := range ids {
			ids[i] = k.create(t, "hello")
		}
		for _, id := range ids {
			if v := k.wait(t, id); v.Meta.Status != session.StatusReady || len(v.Turns) != 2 {
				t.Fatalf("session %s: %s with %d turns", id, v.Meta.Status, len(v.Turns))
			}
		}
	})
}
