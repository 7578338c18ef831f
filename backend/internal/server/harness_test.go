package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/placement/leased"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/runner/modelfault"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/sqlitetool"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/backend/internal/store/storefault"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/backend/internal/tracing"
	"github.com/agents-os/agents/backend/internal/wire"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// env is a real server over a temporary SQLite file (or a PostgreSQL
// database of its own), the test agents and the offline model: the whole
// mux, reached over HTTP.
type env struct {
	t      testing.TB
	dbPath string
	// dsn, when set, is the PostgreSQL database the server runs on
	// instead of the file at dbPath.
	dsn   string
	model *fakellmtest.Server
	tune  []func(*runner.Options)

	store  store.Store
	hub    *events.Hub
	runner *runner.Runner
	mcp    *mcptools.Pool
	http   *httptest.Server
	srv    *server.Server

	agents   agentsv1connect.AgentServiceClient
	sessions agentsv1connect.SessionServiceClient
	events   agentsv1connect.EventServiceClient

	security    server.Security
	limits      server.Limits
	logTo       io.Writer
	withMetrics bool
	stopMetrics func()
	// stopCluster stops what a server on PostgreSQL shares the database
	// with the others by.
	stopCluster func()
	// leases and feed stand for the cluster's sources of /readyz and
	// /metrics.
	leases server.Leases
	feed   server.EventFeed

	// faults, when set, sit between the runner and the database, and
	// modelFaults between the runner and the model; both outlive restarts.
	faults      *storefault.Faults
	modelFaults *modelfault.Faults
	// agentsDir is where the agent files are read from.
	agentsDir string
	// skipRecover boots without Recover, as a command that runs no
	// agents starts its server.
	skipRecover bool
	// web serves the web app.
	web http.Handler
	// srvCatalog is the server's catalog, for announcing changed tools.
	srvCatalog *catalog.Catalog
	// toolDirs are where stored agents' programs may lie.
	toolDirs []string
	// bus, when set, is the cluster bus a server on PostgreSQL shares
	// with the others of the test.
	bus cluster.Bus
	// traces, when set, records the runs and reads the requests' trace
	// context.
	traces *tracing.Setup
	// sqlite keeps the sessions' copies of versioned SQLite toolboxes.
	sqlite *sqlitetool.Copies
}

// withStoredToolDirs allows stored agents the programs under dirs.
func withStoredToolDirs(dirs ...string) option { return func(e *env) { e.toolDirs = dirs } }

// withBus shares a cluster bus with the other servers of the test.
func withBus(b cluster.Bus) option { return func(e *env) { e.bus = b } }

// option changes how start boots the server.
type option func(*env)

// withSecurity serves with tokens, CORS origins or allowed hosts.
func withSecurity(sec server.Security) option { return func(e *env) { e.security = sec } }

// withLimits serves with request limits.
func withLimits(l server.Limits) option { return func(e *env) { e.limits = l } }

// withLogTo writes the server's log, every level, as JSON lines to w.
func withLogTo(w io.Writer) option { return func(e *env) { e.logTo = w } }

// withMetrics serves /metrics and feeds it from the hub and the runner.
func withMetrics() option { return func(e *env) { e.withMetrics = true } }

// withCluster serves as a server sharing its database, its leases and
// cross-server feed reported by leases and feed.
func withCluster(leases server.Leases, feed server.EventFeed) option {
	return func(e *env) { e.leases, e.feed = leases, feed }
}

// withRunner adjusts the runner's options.
func withRunner(tune func(*runner.Options)) option {
	return func(e *env) { e.tune = append(e.tune, tune) }
}

// withFaults puts switches that refuse or slow writes between the runner
// and the database (e.faults).
func withFaults() option { return func(e *env) { e.faults = &storefault.Faults{} } }

// withModelFaults puts switches that fail, hang or hold model calls
// between the runner and the model, and records its requests
// (e.modelFaults).
func withModelFaults() option { return func(e *env) { e.modelFaults = &modelfault.Faults{} } }

// withAgentsDir reads the agent files from dir instead of testdata/agents.
func withAgentsDir(dir string) option { return func(e *env) { e.agentsDir = dir } }

// A dialect is a database the server runs on.
type dialect string

const (
	onSQLite   dialect = "sqlite"
	onPostgres dialect = "postgres"
)

// eachDialect runs body once on each database, SQLite first, as a
// parallel subtest named after it; body starts its servers with on(d).
func eachDialect(t *testing.T, body func(t *testing.T, d dialect)) {
	t.Helper()
	for _, d := range []dialect{onSQLite, onPostgres} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			body(t, d)
		})
	}
}

// on runs the server on a database of d: SQLite, the default, or a
// PostgreSQL database of its own, dropped when the test ends.
func on(d dialect) option {
	return func(e *env) {
		if d == onPostgres {
			e.dsn = pgtest.DSN(e.t)
		}
	}
}

// withTraces records the runs with traces and reads the trace context of
// requests, as serve does when tracing is on.
func withTraces(traces *tracing.Setup) option { return func(e *env) { e.traces = traces } }

// withWeb serves a web app beside the API.
func withWeb(h http.Handler) option { return func(e *env) { e.web = h } }

// start boots a server whose agents talk to an offline model scripted by
// rules.
func start(t testing.TB, rules fakellm.Rules, opts ...option) *env {
	t.Helper()
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "agents.db"), model: fakellmtest.Start(t, rules), agentsDir: "testdata/agents"}
	for _, o := range opts {
		o(e)
	}
	e.boot()
	t.Cleanup(e.stop)
	return e
}

func (e *env) boot() {
	t := e.t
	ctx := context.Background()
	var db store.Store
	var err error
	if e.dsn != "" {
		db, err = postgres.Open(ctx, e.dsn, postgres.Options{})
	} else {
		db, err = sqlite.Open(ctx, e.dbPath)
	}
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	if e.faults != nil {
		db = storefault.Wrap(db, e.faults)
	}
	models := runner.ModelFactory(fastRetryModels)
	if e.modelFaults != nil {
		models = e.modelFaults.Factory(models)
	}
	load := func() *agentfile.Set {
		return agentfile.Load(nil, []string{e.agentsDir})
	}
	e.mcp = mcptools.NewPool(mcptools.Options{Changed: func() {
		_ = e.runner.Announce(context.Background(), wire.AgentsChanged(e.srvCatalog.Snapshot()))
	}})
	cat := catalog.New(ctx, load, catalog.Options{
		MCP:             e.mcp,
		HasKey:          func(string) bool { return false },
		OfflineModelURL: e.model.URL(),
		Bash:            tool.BashRuntime{Limits: bashtool.Limits{Timeout: 2 * time.Second}},
		Stored:          catalog.FromStore(db),
		StoredVersion:   catalog.VersionFromStore(db),
		ToolDirs:        e.toolDirs,
		SQLite:          e.sqlite,
	})
	e.srvCatalog = cat
	if errs := cat.Snapshot().Errors; len(errs) > 0 {
		t.Fatalf("test agents do not load: %v", errs)
	}
	hub, err := runner.NewHub(ctx, db, events.Options{})
	if err != nil {
		t.Fatalf("open the event log: %v", err)
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if e.logTo != nil {
		log = slog.New(slog.NewJSONHandler(e.logTo, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	var metrics *server.Metrics
	var onStep func(runner.StepStats)
	var onUsage func(owner, model string, u session.Usage)
	if e.withMetrics {
		metrics = server.NewMetrics(db, hub)
		onStep, onUsage = metrics.ObserveStep, metrics.ObserveUsage
		e.stopMetrics = metrics.Follow(hub)
	}
	opts := runner.Options{
		Log:     log,
		Store:   db,
		Hub:     hub,
		Catalog: cat,
		Models:  models,
		OnStep:  onStep,
		Budgets: runner.Budgets{OnUsage: onUsage},

		MaxRuns:         e.limits.MaxRuns,
		MaxRunsPerOwner: e.limits.MaxRunsPerOwner,
	}
	var placed *leased.Options
	if e.dsn != "" {
		// As serve runs on PostgreSQL: one of the servers the database may
		// have, its sessions under leases, the events it commits published
		// in the log's order.
		bus, holder, own := e.bus, fmt.Sprintf("server-%p", e), false
		if bus == nil {
			bus, holder, own = cluster.NewMemoryBus(), "server", true
		}
		seq := cluster.NewSequencer(hub, db, bus, cluster.SequencerOptions{Log: log})
		opts.Publish = seq.Committed
		placed = &leased.Options{Holder: holder, Bus: bus}
		e.stopCluster = func() {
			seq.Close()
			if own {
				_ = bus.Close()
			}
		}
	}
	var propagator propagation.TextMapPropagator
	if e.traces != nil {
		opts.Tracer, propagator = e.traces.Tracer, e.traces.Propagator
	}
	for _, tune := range e.tune {
		tune(&opts)
	}
	if placed != nil {
		placed.Store, placed.Log, placed.Now = opts.Store, opts.Log, opts.Now
		opts.Placement = leased.New(*placed)
	}
	run := runner.New(opts)
	if !e.skipRecover {
		if err := run.Recover(ctx); err != nil {
			t.Fatalf("recover: %v", err)
		}
	}
	srv := server.New(server.Deps{
		Log: log, Catalog: cat, Runner: run, Hub: hub, Store: db,
		Metrics: metrics, Leases: e.leases, Feed: e.feed, Security: e.security, Limits: e.limits, Web: e.web,
		Propagator: propagator,
	})
	e.store, e.hub, e.runner, e.srv = db, hub, run, srv
	// As serve serves it: event streams write to the connection itself.
	e.http = httptest.NewUnstartedServer(srv.Handler())
	e.http.Config.ConnContext = server.ConnContext
	e.http.Start()
	e.agents = agentsv1connect.NewAgentServiceClient(e.http.Client(), e.http.URL)
	e.sessions = agentsv1connect.NewSessionServiceClient(e.http.Client(), e.http.URL)
	e.events = agentsv1connect.NewEventServiceClient(e.http.Client(), e.http.URL)
}

// stop shuts the server down the way serve does.
func (e *env) stop() {
	if e.http == nil {
		return
	}
	e.srv.Drain() // ends the MCP sessions, and what serves them
	e.runner.Close()
	if e.stopCluster != nil {
		e.stopCluster()
		e.stopCluster = nil
	}
	e.mcp.Close()
	e.hub.Shutdown()
	if e.stopMetrics != nil {
		e.stopMetrics()
	}
	e.http.CloseClientConnections()
	e.http.Close()
	_ = e.store.Close()
	e.http = nil
}

// srvDrain marks the server as shutting down, as serve does on SIGTERM.
func (e *env) srvDrain() { e.srv.Drain() }

// restart stops the server and boots a new one on the same database.
func (e *env) restart() {
	e.stop()
	e.boot()
}

// fastRetryModels builds model clients that give up quickly, so a failing
// endpoint fails a test run in milliseconds.
func fastRetryModels(m catalog.Model) (runner.Model, error) {
	return llm.New(llm.Config{BaseURL: m.URL, Flavor: llm.FlavorOpenAI, MaxAttempts: 2, BackoffBase: time.Millisecond, MaxDelay: 10 * time.Millisecond})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// create starts a session of agent with a first message.
func (e *env) create(agent, text string) *agentsv1.Session {
	e.t.Helper()
	res, err := e.sessions.CreateSession(ctxFor(e.t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent:   agent,
		Message: &agentsv1.Message{Text: text},
	}))
	if err != nil {
		e.t.Fatalf("create session: %v", err)
	}
	return res.Msg.GetSession()
}

// wait long-polls a session until its run ends.
func (e *env) wait(id string) *agentsv1.Session {
	e.t.Helper()
	res, err := e.sessions.GetSession(ctxFor(e.t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, Wait: true}))
	if err != nil {
		e.t.Fatalf("get session: %v", err)
	}
	s := res.Msg.GetSession()
	if s.GetMeta().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
		e.t.Fatalf("session %s still running after wait", id)
	}
	return s
}

// do sends a plain HTTP request and returns the status and body.
func (e *env) do(method, path, body string, header ...string) (int, http.Header, []byte) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctxFor(e.t), method, e.http.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := e.http.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("read %s %s: %v", method, path, err)
	}
	return res.StatusCode, res.Header, b
}

// jsonError decodes the error body of a JSON route.
func jsonError(t testing.TB, body []byte) (code, reason, message string) {
	t.Helper()
	var e struct{ Code, Reason, Message string }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	return e.Code, e.Reason, e.Message
}

// sseFrame is one frame of an SSE stream; a comment (heartbeat) frame has
// no event and no data.
type sseFrame struct {
	id, event string
	data      string
	comment   bool
}

// sseStream reads SSE frames from a GET route until stop is closed or the
// stream ends.
type sseStream struct {
	header http.Header
	frames chan sseFrame
	cancel context.CancelFunc
}

func (e *env) openSSE(path string, header ...string) *sseStream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.http.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := e.http.Client().Do(req)
	if err != nil {
		cancel()
		e.t.Fatalf("GET %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK {
		cancel()
		e.t.Fatalf("GET %s: status %d", path, res.StatusCode)
	}
	s := &sseStream{header: res.Header, frames: make(chan sseFrame, 4096), cancel: cancel}
	go func() {
		defer close(s.frames)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var f sseFrame
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if f.event != "" || f.data != "" || f.comment {
					s.frames <- f
				}
				f = sseFrame{}
			case strings.HasPrefix(line, ":"):
				f.comment = true
			case strings.HasPrefix(line, "id: "):
				f.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				f.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				f.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	e.t.Cleanup(cancel)
	return s
}

// next returns the next frame, failing the test after a generous wait.
func (s *sseStream) next(t testing.TB) (sseFrame, bool) {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		return f, ok
	case <-time.After(20 * time.Second):
		t.Fatal("no SSE frame within 20s")
		return sseFrame{}, false
	}
}

// event decodes an SSE frame's data as an Event.
func (f sseFrame) eventOf(t testing.TB) *agentsv1.Event {
	t.Helper()
	ev := &agentsv1.Event{}
	if err := apijson.Unmarshal([]byte(f.data), ev); err != nil {
		t.Fatalf("frame data %q: %v", f.data, err)
	}
	return ev
}

// readAnswer decodes a JSON route's answer into the RPC response it
// stands for: where the RPC wraps one resource (a session, a mail, a
// summary) the route answers with the resource itself.
func readAnswer(b []byte, out proto.Message) error {
	switch m := out.(type) {
	case *agentsv1.CreateSessionResponse:
		m.Session = &agentsv1.Session{}
		return apijson.Unmarshal(b, m.Session)
	case *agentsv1.GetSessionResponse:
		m.Session = &agentsv1.Session{}
		return apijson.Unmarshal(b, m.Session)
	case *agentsv1.ForkSessionResponse:
		m.Session = &agentsv1.Session{}
		return apijson.Unmarshal(b, m.Session)
	case *agentsv1.SendMailResponse:
		m.Envelope = &agentsv1.MailEnvelope{}
		return apijson.Unmarshal(b, m.Envelope)
	case *agentsv1.PostMessageResponse:
		if err := apijson.Unmarshal(b, m); err != nil {
			return err
		}
		// Without wait the session is its summary only.
		var raw struct{ Session map[string]json.RawMessage }
		if err := json.Unmarshal(b, &raw); err != nil {
			return err
		}
		if _, ok := raw.Session["turns"]; !ok {
			m.Meta, m.Session = m.GetSession().GetMeta(), nil
		}
		return nil
	}
	return apijson.Unmarshal(b, out)
}
