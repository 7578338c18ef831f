package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/backend/internal/tracing"
	"github.com/agents-os/agents/backend/internal/webhooks"
	"github.com/agents-os/agents/backend/internal/wire"
)

// stack is one assembled server: store, event hub, runner, metrics and the
// HTTP handlers over them. `serve` listens with it; the other commands
// start one in-process and talk to it through the same client as to a
// remote server.
type stack struct {
	log     *slog.Logger
	store   store.Store
	hub     *events.Hub
	runner  *runner.Runner
	catalog *catalog.Catalog
	// mcp holds the MCP servers agents use; they stop with the stack.
	mcp *mcptools.Pool
	// feed links this server to the others on its PostgreSQL database;
	// nil on SQLite.
	feed    *clusterFeed
	metrics *server.Metrics
	server  *server.Server

	stopMetrics func()
	// traces records the runs, and exports what it holds at close.
	traces *tracing.Setup
	// stopOffline stops the offline model this process serves, if any.
	stopOffline func()
	// unclaim lets the data directory go, once the store is closed.
	unclaim func()
	// stopWorkDirs stops removing the working folders of deleted
	// sessions.
	stopWorkDirs func()
	// waitProbe waits for the sandbox's probe started with the stack.
	waitProbe func()
}

// stackOptions tune a stack.
type stackOptions struct {
	offlineModel string
	security     server.Security
	limits       server.Limits
	// retention bounds the event log and the model calls kept one by
	// one; zero fields take the defaults.
	retention runner.Retention
	// idleEvict is how long an idle session stays loaded (zero: the
	// default).
	idleEvict time.Duration
	// recover resumes the runs a previous process left running. Only the
	// process that owns the database (serve, or a command that runs
	// agents) should; one that only reads must not start runs.
	recover bool
	// web serves the web app beside the API (serve only).
	web http.Handler
	// holder is written into an SQLite database's lock file: where this
	// process answers, for a process that finds the database in use.
	holder sqlite.Holder
	// cluster configures a server on PostgreSQL (serve's --server-id and
	// --lease-ttl).
	cluster clusterOptions
	// protect are more files no tool may read (serve's tokens file).
	protect []string
}

// startStack loads the agents, opens the store and assembles the server.
func (a *app) startStack(ctx context.Context, res *config.Resolved, log *slog.Logger, opts stackOptions) (*stack, error) {
	keys, err := res.LoadKeys(a.lookupEnv)
	if err != nil {
		return nil, err
	}
	// The database first: it is the one claim on the data directory, so a
	// second process stops here, before it ends the first one's tool
	// processes as a crash's leftovers.
	db, err := openStore(ctx, res.DB, opts.holder)
	if err != nil {
		return nil, err
	}
	// A database that several processes share claims nothing: the data
	// directory is claimed instead (see serverid.go).
	unclaim := func() {}
	claimed := ""
	if _, shared := db.(*postgres.Store); shared && opts.cluster.claimDataDir {
		release, err := claimDataDir(res.DataDir)
		if err != nil {
			db.Close()
			return nil, err
		}
		unclaim = sync.OnceFunc(release)
		claimed = res.DataDir
	}
	started := false
	defer func() {
		if !started {
			unclaim()
		}
	}()
	reaper, err := toolReaper(res.DataDir, opts.recover, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	offline, stopOffline, err := serveOfflineRules(opts.offlineModel)
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &stack{log: log, stopOffline: stopOffline, unclaim: unclaim, stopWorkDirs: func() {}, waitProbe: func() {}}
	defer func() {
		if !started {
			s.waitProbe()
			stopOffline()
		}
	}()
	sb := a.toolSandbox(res, opts.protect)
	if opts.recover {
		// Whether tools get namespaces is learnt by starting one probe
		// process, which costs about as much as the rest of the start:
		// it runs once the server is up (a tool call before then probes
		// at once, and this reuses its answer).
		probed, stop := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(probed)
			select {
			case <-time.After(sandboxProbeDelay):
				logSandbox(log, sb)
			case <-stop:
			}
		}()
		s.waitProbe = sync.OnceFunc(func() {
			close(stop)
			<-probed
		})
	}
	s.mcp = mcptools.NewPool(mcptools.Options{Log: log, Reaper: reaper, Changed: s.toolsChanged, Sandbox: sb})
	copies := sqliteCopies(res)
	cat, err := a.loadCatalog(ctx, res, keys, catalog.Options{
		SQLite:          copies,
		OfflineModelURL: offline,
		Bash:            tool.BashRuntime{Reaper: reaper, Sandbox: sb},
		MCP:             s.mcp,
		Stored:          catalog.FromStore(db),
		StoredVersion:   catalog.VersionFromStore(db),
		ToolDirs:        res.StoredAgentToolDirs,
		WorkDir:         res.WorkDir,
	})
	if err != nil {
		s.mcp.Close()
		db.Close()
		return nil, err
	}
	s.catalog = cat
	snap := cat.Snapshot()
	for _, e := range snap.Errors {
		// Not every problem keeps its agent from loading (a tool folder
		// that is missing leaves the agent without those tools): the
		// line says what is wrong and where, as a warning's does.
		attrs := []any{"file", e.File, "field", e.Field, "problem", e.Reason}
		if e.Agent != "" {
			attrs = append(attrs, "agent", e.Agent)
		}
		log.Warn("agent file problem", attrs...)
	}
	logWarnings(log, snap.Warnings)
	log.Info("agents loaded", "count", len(snap.Agents()), "from", res.AgentsFrom)

	hub, err := runner.NewHub(ctx, db, events.Options{})
	if err != nil {
		db.Close()
		s.mcp.Close()
		return nil, fmt.Errorf("read the event log: %w", err)
	}
	if _, ok := db.(*postgres.Store); ok {
		// Before the runner: every event it commits goes through the
		// sequencer, between the other servers' events.
		if s.feed, err = startCluster(ctx, res.DB, claimed, hub, db, opts.cluster, log); err != nil {
			db.Close()
			s.mcp.Close()
			return nil, err
		}
	}
	s.store, s.hub = db, hub
	s.stopWorkDirs = removeWorkDirs(hub, sb, log)
	if opts.recover {
		stopRemoving, stopSweep := s.stopWorkDirs, sweepWorkDirs(db, sb, log)
		s.stopWorkDirs = func() {
			stopSweep()
			stopRemoving()
		}
	}
	s.metrics = server.NewMetrics(db, s.hub)
	// The metrics follow the hub before anything publishes, so the runs
	// resumed by Recover are counted too.
	s.stopMetrics = s.metrics.Follow(s.hub)
	if s.traces, err = tracing.FromEnv(ctx, a.lookupEnv, Version, log); err != nil {
		if s.feed != nil {
			s.feed.close()
		}
		s.stopMetrics()
		s.mcp.Close()
		s.stopWorkDirs()
		db.Close()
		return nil, err
	}
	ro := runner.Options{
		Log:     log,
		Tracer:  s.traces.Tracer,
		Store:   db,
		Hub:     s.hub,
		Catalog: cat,
		Models:  runner.LLMModels(keyValue(keys), res.ModelLimits, log),
		OnStep:  s.metrics.ObserveStep,
		SessionDeleted: func(id string) {
			if err := copies.Forget(id); err != nil {
				log.Warn("remove a deleted session's database copies", "session", id, "err", err)
			}
		},
		Budgets: runner.Budgets{
			Prices:        res.Prices,
			OwnerDefault:  res.Budgets.OwnerDefault,
			ReserveTokens: res.Budgets.ReserveTokens,
			OnUsage:       s.metrics.ObserveUsage,
		},

		MaxRuns:         opts.limits.MaxRuns,
		MaxRunsPerOwner: opts.limits.MaxRunsPerOwner,
		Retention:       opts.retention,
		IdleEvict:       opts.idleEvict,
	}
	if s.feed != nil {
		s.feed.configure(&ro)
	}
	policy := webhookPolicy(res.Webhooks)
	if opts.recover {
		// The process that runs agents delivers their events too; one
		// that only reads sends nothing.
		d := webhooks.NewDispatcher(webhookOptions(res.Webhooks, db, policy, hub, log))
		ro.Background = append(ro.Background, d.Run)
	}
	s.runner = runner.New(ro)
	if opts.recover {
		if err := s.runner.Recover(ctx); err != nil {
			s.close()
			return nil, fmt.Errorf("recover sessions: %w", err)
		}
	}
	deps := server.Deps{
		Log:      log,
		Catalog:  cat,
		Runner:   s.runner,
		Hub:      s.hub,
		Store:    db,
		Metrics:  s.metrics,
		Security: opts.security,
		Limits:   opts.limits,
		Web:      opts.web,
		Version:  Version,
		Sandbox:  sb,
		Webhooks: webhooks.NewService(db, policy),

		Propagator: s.traces.Propagator,
	}
	if s.feed != nil {
		deps.Leases, deps.Feed = leaseReport{s.feed.place}, s.feed.seq
	}
	s.server = server.New(deps)
	started = true
	return s, nil
}

// logWarnings logs each problem that did not stop an agent file from
// loading, one line each: a tool the file declares may be missing.
func logWarnings(log *slog.Logger, warnings []*agentfile.Error) {
	for _, w := range warnings {
		log.Warn("agent file warning", "file", w.File, "field", w.Field, "problem", w.Reason)
	}
}

// drainer is a runner that can let the steps in flight reach their end
// (model answer and tool results stored) before it closes, and start no
// new ones. close uses it when the runner offers it.
type drainer interface {
	Drain(ctx context.Context) error
}

// drain ends the event streams, then gives running steps until ctx ends to
// reach a step boundary.
func (s *stack) drain(ctx context.Context) {
	s.hub.Shutdown()
	if d, ok := any(s.runner).(drainer); ok {
		if err := d.Drain(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			s.log.Warn("drain runs", "error", err.Error())
		}
	}
}

// close stops the runner (runs still going stay `running` in the store
// and resume at the next start), the metrics and the store.
func (s *stack) close() {
	s.runner.Close()
	// The runs' spans ended with the runner: export them before exit.
	flush, cancel := context.WithTimeout(context.Background(), traceFlushTimeout)
	defer cancel()
	if err := s.traces.Shutdown(flush); err != nil {
		s.log.Warn("export the last traces", "error", err.Error())
	}
	if s.feed != nil {
		s.feed.close()
	}
	s.mcp.Close()
	s.hub.Shutdown()
	s.stopWorkDirs()
	s.waitProbe()
	s.stopMetrics()
	if err := s.store.Close(); err != nil {
		s.log.Error("close store", "error", err.Error())
	}
	s.unclaim()
	s.stopOffline()
}

// sandboxProbeDelay is how long after its start a server learns, and
// logs, how its tools are confined.
const sandboxProbeDelay = 200 * time.Millisecond

// traceFlushTimeout bounds how long exporting the last spans may delay
// the exit.
const traceFlushTimeout = 5 * time.Second

// toolsChanged tells clients that an MCP server's tools changed: the
// agents using it offer other tools from their next step.
func (s *stack) toolsChanged() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.runner.Announce(ctx, wire.AgentsChanged(s.catalog.Snapshot())); err != nil {
		s.log.Warn("announce changed tools", "err", err)
	}
}

// openStore opens the store dsn names: a PostgreSQL database for a
// postgres:// or postgresql:// URL, which several processes may share,
// else an SQLite file, creating its directory, which one process holds:
// holder is written into its lock file.
func openStore(ctx context.Context, dsn string, holder sqlite.Holder) (store.Store, error) {
	if postgres.IsDSN(dsn) {
		return postgres.Open(ctx, dsn, postgres.Options{})
	}
	if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	return sqlite.OpenWith(ctx, dsn, sqlite.Options{Holder: holder})
}

// keyValue looks up API key values for the model clients.
func keyValue(keys config.Keys) func(id string) (string, bool) {
	return func(id string) (string, bool) {
		secret, ok := keys.Lookup(id)
		if !ok {
			return "", false
		}
		return secret.Reveal(), true
	}
}

// toolReaper returns the record of running tool processes under dataDir.
// The process that owns the database (recover set) first ends the tool
// processes a crash of the previous one left running: no tool outlives
// the server that ran it.
func toolReaper(dataDir string, recover bool, log *slog.Logger) (*bashtool.Reaper, error) {
	dir := filepath.Join(dataDir, "toolpgids")
	if recover {
		n, err := bashtool.KillLeftovers(dir)
		if err != nil {
			log.Warn("end leftover tool processes", "dir", dir, "err", err)
		} else if n > 0 {
			log.Info("ended tool processes a previous server left running", "groups", n)
		}
	}
	reaper, err := bashtool.NewReaper(dir, log)
	if err != nil {
		return nil, fmt.Errorf("tool process records: %w", err)
	}
	return reaper, nil
}

// webhookPolicy is the addresses the config file lets webhooks reach.
func webhookPolicy(c config.Webhooks) webhooks.Policy {
	return webhooks.Policy{AllowPrivate: c.AllowPrivate, Allow: c.AllowCIDRs}
}

// webhookOptions configure the dispatcher from the config file.
func webhookOptions(c config.Webhooks, db store.Webhooks, p webhooks.Policy, hub *events.Hub, log *slog.Logger) webhooks.Options {
	return webhooks.Options{
		Store: db, Log: log.With("component", "webhooks"), Policy: p, Seq: hub.Seq,
		Timeout: c.Timeout, Concurrency: c.Concurrency,
		RetryFor: c.RetryFor, RetryBase: c.RetryBase, RetryMax: c.RetryMax, DisableAfter: c.DisableAfter,
	}
}
