package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Config is what to run, and how big.
type Config struct {
	AgentsBin string // the agents binary; empty: build ./backend/cmd/agents
	// Compare is a second agents binary: the prompts rows and the boot
	// runs run against both in turns, for a before and after on one
	// noisy machine.
	Compare  string
	ModelURL string // an offline model already running; empty: serve one here
	// Postgres is the PostgreSQL server the cluster scenario creates its
	// databases on (a URL whose user may create databases); empty:
	// DefaultPostgres.
	Postgres  string
	Scenarios []string // names from Scenarios; empty: all
	ServeArgs []string // more flags for every `agents serve`
	Keep      bool     // keep the temporary directory
	PostWait  bool     // a prompt is one request: a post with wait
	WaitWhole bool     // a prompt's waiting GetSession returns every turn
	// ProfileDir, when set, has every server serve its profiles
	// (AGENTS_PPROF=1) and receives a CPU profile of each measured
	// workload, named after the server's directory.
	ProfileDir string
	// FineHeap, with ProfileDir, samples every workload's allocations
	// every 4 KiB, not only the idle scenario's (see ServeOptions).
	FineHeap bool
	Progress io.Writer

	Concurrency []int // prompts: concurrent sessions per row
	Prompts     int   // prompts per session (prompts, stored, fanout)
	// Repeat runs each prompts row this many times, the sizes taking
	// turns, and reports the median run: on a shared machine one run
	// can be off by a third.
	Repeat int

	Subscribers    []int // fanout: subscribers per row
	FanoutSessions int   // fanout: sessions prompting meanwhile
	// FanoutRate paces the fan-out's prompts: this many a second, the
	// sessions together; 0 lets each session prompt again as soon as it
	// is answered.
	FanoutRate float64
	// FanoutKinds, when set, are the only kinds of event the fan-out's
	// subscribers take (GET /v1/events?kinds=…); run.stopped must be
	// one, the delay being measured to it.
	FanoutKinds []string

	Turns    []int // getsession: session lengths
	GetCalls int   // getsession: calls per length

	Stored            int // stored and startup: sessions in the database
	StoredConcurrency int // stored: concurrent sessions prompting
	StoredPrompts     int // stored: prompts per session
	StartupRuns       int // startup: starts per size
	BootRuns          int // boot: starts of each binary
	// BootSettle is how long boot lets a started server idle before it
	// reads its RSS.
	BootSettle time.Duration

	IdleSessions int           // idle: sessions touched once
	IdleMore     int           // idle: more sessions touched once after the first ones' rows, measured the same way (0: no)
	IdleAfter    time.Duration // idle: measure again this long after the touch (0: no)
	EvictWait    time.Duration // idle: wait at most this long for eviction (0: no)
	IdleEvict    time.Duration // idle: the server's --idle-evict, when it has one (0: its default)
}

// DefaultConfig is the full-size run.
func DefaultConfig() Config {
	return Config{
		Concurrency:       []int{1, 16, 64, 256},
		Prompts:           10,
		Repeat:            3,
		Subscribers:       []int{200, 1000},
		FanoutSessions:    16,
		Turns:             []int{10, 100, 1000},
		GetCalls:          200,
		Stored:            100_000,
		StoredConcurrency: 16,
		StoredPrompts:     50,
		StartupRuns:       3,
		BootRuns:          7,
		BootSettle:        3 * time.Second,
		IdleSessions:      1000,
		IdleMore:          9000,
		IdleAfter:         time.Minute,
		EvictWait:         7 * time.Minute,
	}
}

// QuickConfig is a small run, for a check that everything works.
func QuickConfig() Config {
	return Config{
		Concurrency:       []int{1, 16, 64},
		Prompts:           10,
		Repeat:            1,
		Subscribers:       []int{50, 200},
		FanoutSessions:    16,
		Turns:             []int{10, 100},
		GetCalls:          50,
		Stored:            10_000,
		StoredConcurrency: 16,
		StoredPrompts:     10,
		StartupRuns:       2,
		BootRuns:          3,
		BootSettle:        time.Second,
		IdleSessions:      200,
		IdleMore:          400,
		IdleEvict:         2 * time.Second,
		EvictWait:         15 * time.Second,
	}
}

// Scenario is one measurement.
type Scenario struct {
	Name string
	Doc  string
	run  func(ctx context.Context, e *env) (Result, error)
}

// Result is a scenario's measurements: JSON as it is, and a table.
type Result interface {
	Table() (header []string, rows [][]string)
}

// Scenarios lists every scenario in the order Run runs them.
func Scenarios() []Scenario {
	return []Scenario{
		{"prompts", "concurrent sessions × prompts: prompts/s, latency, server CPU per prompt, RSS", runPrompts},
		{"fanout", "SSE subscribers while sessions prompt: events/s, delivery delay, server CPU per event and subscriber", runFanout},
		{"fanfloor", "the fan-out's floor on this machine, no server: the CPU a prompt costs to move its events to N subscribers over loopback, by prompts a write", runFloor},
		{"getsession", "GetSession against session length: latency, server CPU per call", runGetSession},
		{"stored", "prompt cost with many stored sessions (seeded into SQLite)", runStored},
		{"startup", "start-up time with many stored sessions (exec to `listening`)", runStartup},
		{"boot", "what a start costs: package initialisation's allocations, exec to /healthz, idle RSS (with -compare, both binaries in turns)", runBoot},
		{"idle", "memory of sessions touched once, then idle, then evicted; then of more sessions on the warm server", runIdle},
		{"cluster", "the prompts workload on SQLite (one server) and PostgreSQL (one server, two on one database, requests spread over them): prompts/s, latency, server and database CPU per prompt", runCluster},
	}
}

// ScenarioNames are the names Scenarios knows.
func ScenarioNames() []string {
	var names []string
	for _, s := range Scenarios() {
		names = append(names, s.Name)
	}
	return names
}

// Run runs the selected scenarios one after the other and reports each,
// failed ones included. The error is for what stops every scenario (no
// binary, no model); a scenario's own failure is in its report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	selected := Scenarios()
	if len(cfg.Scenarios) > 0 {
		selected = nil
		for _, name := range cfg.Scenarios {
			i := slices.IndexFunc(Scenarios(), func(s Scenario) bool { return s.Name == name })
			if i < 0 {
				return nil, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(ScenarioNames(), ", "))
			}
			selected = append(selected, Scenarios()[i])
		}
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	dir, err := os.MkdirTemp("", "loadgen-")
	if err != nil {
		return nil, err
	}
	if cfg.Keep {
		fmt.Fprintf(cfg.Progress, "loadgen: keeping %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	e := &env{cfg: cfg, dir: dir, seeded: map[int]string{}}
	if e.bin, err = agentsBinary(ctx, cfg, dir); err != nil {
		return nil, err
	}
	if cfg.Compare != "" {
		if e.cfg.Compare, err = existingFile(cfg.Compare, "-compare"); err != nil {
			return nil, err
		}
	}
	e.agentFile = filepath.Join(dir, "agent.json")
	if err := writeAgentFile(e.agentFile); err != nil {
		return nil, err
	}
	if cfg.ModelURL != "" {
		e.model = &Model{URL: cfg.ModelURL}
	} else if e.model, err = StartModel(); err != nil {
		return nil, fmt.Errorf("start the offline model: %w", err)
	}
	defer e.model.Close()

	rep := &Report{Machine: describeMachine(e.bin), Started: time.Now(), Prompt: "POST /v1/sessions/{id}/messages, then GET /v1/sessions/{id}?wait=true&after_turn={its turn}"}
	switch {
	case cfg.PostWait:
		rep.Prompt = "POST /v1/sessions/{id}/messages?wait=true"
	case cfg.WaitWhole:
		rep.Prompt = "POST /v1/sessions/{id}/messages, then GET /v1/sessions/{id}?wait=true (every turn)"
	}
	rep.Machine.LoadBefore = LoadAverage()
	if rep.Machine.SpeedBefore, err = MeasureSpeed(); err != nil {
		return nil, fmt.Errorf("measure the machine's speed: %w", err)
	}
	for _, s := range selected {
		if ctx.Err() != nil {
			rep.Scenarios = append(rep.Scenarios, ScenarioReport{Name: s.Name, Error: "not run: " + ctx.Err().Error()})
			continue
		}
		e.logf("== %s: %s (load average %.2f)", s.Name, s.Doc, LoadAverage())
		begin := time.Now()
		res, err := s.run(ctx, e)
		sr := ScenarioReport{Name: s.Name, Seconds: time.Since(begin).Seconds(), Result: res, Notes: e.takeNotes()}
		if err != nil {
			sr.Error = err.Error()
			e.logf("   %s FAILED: %v", s.Name, err)
		}
		rep.Scenarios = append(rep.Scenarios, sr)
	}
	rep.Machine.LoadAfter = LoadAverage()
	if rep.Machine.SpeedAfter, err = MeasureSpeed(); err != nil {
		return nil, fmt.Errorf("measure the machine's speed: %w", err)
	}
	return rep, nil
}

// existingFile is path made absolute (servers run in directories of
// their own), once it is known to exist; flag names it in the error.
func existingFile(path, flag string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return abs, nil
}

// agentsBinary is cfg.AgentsBin, or a binary built from the workspace.
func agentsBinary(ctx context.Context, cfg Config, dir string) (string, error) {
	if cfg.AgentsBin != "" {
		return existingFile(cfg.AgentsBin, "-agents-bin")
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOWORK").Output()
	work := strings.TrimSpace(string(out))
	if err != nil || work == "" || work == "off" {
		return "", errors.New("no agents binary: give --agents-bin, or run inside the repository's Go workspace")
	}
	bin := filepath.Join(dir, "agents")
	fmt.Fprintf(cfg.Progress, "loadgen: building %s\n", bin)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./backend/cmd/agents")
	build.Dir = filepath.Dir(work)
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./backend/cmd/agents: %w\n%s", err, out)
	}
	return bin, nil
}

// env is what the scenarios of one run share.
type env struct {
	cfg       Config
	dir       string
	bin       string
	agentFile string
	model     *Model
	dirs      int
	seeded    map[int]string // stored sessions → a pristine database with them
	notes     []string
	serveHelp *string // `agents serve --help`, once read
}

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.cfg.Progress, format+"\n", args...)
}

// note adds a remark to the current scenario's report.
func (e *env) note(format string, args ...any) {
	e.notes = append(e.notes, fmt.Sprintf(format, args...))
}

func (e *env) takeNotes() []string {
	n := e.notes
	e.notes = nil
	return n
}

// serveFlag returns the line of `agents serve --help` that documents
// flag (such as "--idle-evict"), or "" when the binary has no such flag.
func (e *env) serveFlag(flag string) string {
	if e.serveHelp == nil {
		out, _ := exec.Command(e.bin, "serve", "--help").CombinedOutput()
		help := string(out)
		e.serveHelp = &help
	}
	for line := range strings.Lines(*e.serveHelp) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == flag {
			return strings.Join(f, " ")
		}
	}
	return ""
}

// newDir makes a directory of its own for one server or database.
func (e *env) newDir(name string) (string, error) {
	e.dirs++
	dir := filepath.Join(e.dir, fmt.Sprintf("%02d-%s", e.dirs, name))
	return dir, os.MkdirAll(dir, 0o755)
}

// start runs a server in a directory of its own, on the database db, or
// on a new one in that directory when db is empty.
func (e *env) start(name, db string, args ...string) (*Server, *client, error) {
	return e.startBinary(e.bin, name, db, args...)
}

// startBinary is start with another agents binary than the run's.
func (e *env) startBinary(bin, name, db string, args ...string) (*Server, *client, error) {
	dir, err := e.newDir(name)
	if err != nil {
		return nil, nil, err
	}
	if db == "" {
		db = filepath.Join(dir, "agents.db")
	}
	opts := ServeOptions{
		Bin: bin, Dir: dir, DB: db, ModelURL: e.model.URL, AgentFile: e.agentFile, Args: append(args, e.cfg.ServeArgs...),
	}
	if e.cfg.ProfileDir != "" {
		opts.Profile = filepath.Join(e.cfg.ProfileDir, filepath.Base(dir)+".cpu.pprof")
		opts.FineHeap = e.cfg.FineHeap || name == "idle" // its heap profiles count what stays
	}
	srv, err := StartServer(opts)
	if err != nil {
		return nil, nil, err
	}
	c := newClient(srv.URL, 512)
	c.postWait, c.waitWhole = e.cfg.PostWait, e.cfg.WaitWhole
	return srv, c, nil
}

// stop stops srv and reports what went wrong with it: a bad exit, or
// warnings and errors in its log (noted, not failed).
func (e *env) stop(srv *Server, c *client) error {
	c.close()
	if n, first := srv.Problems(); n > 0 {
		e.note("the server logged %d warnings or errors; the first: %s", n, first)
	}
	return srv.Stop()
}

// seededDB returns a new copy of a database holding n sessions (n ≥ 1),
// each with one prompt and its answer. The first copy is made by running
// a server once and seeding the rest (see SeedSessions).
func (e *env) seededDB(ctx context.Context, n int) (string, error) {
	src, ok := e.seeded[n]
	if !ok {
		e.logf("   seeding %d sessions", n)
		begin := time.Now()
		dir, err := e.newDir(fmt.Sprintf("seed-%d", n))
		if err != nil {
			return "", err
		}
		src = filepath.Join(dir, "agents.db")
		srv, c, err := e.start("template", src)
		if err != nil {
			return "", err
		}
		id, err := c.create(ctx, "a stored session")
		if err == nil {
			_, err = c.wait(ctx, id, 0)
		}
		if err = errors.Join(err, e.stop(srv, c)); err != nil {
			return "", fmt.Errorf("make the template session: %w", err)
		}
		if n > 1 {
			if err := SeedSessions(ctx, src, n-1); err != nil {
				return "", err
			}
		}
		e.seeded[n] = src
		e.note("%d stored sessions: written into the SQLite file directly in %.1f s, copies of one session the server created and ran (one prompt, two turns)", n, time.Since(begin).Seconds())
	}
	dir, err := e.newDir(fmt.Sprintf("stored-%d", n))
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, "agents.db")
	return dst, copyFile(dst, src)
}
