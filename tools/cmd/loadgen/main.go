// Command loadgen measures a real `agents serve` over HTTP against the
// offline model and prints the results as tables, or as JSON with -json.
//
//	loadgen [-agents-bin bin/agents] [-quick] [-scenario prompts,fanout,…] [-json]
//
// Without -agents-bin it builds ./backend/cmd/agents from the Go workspace
// it runs in. Sizes have flags of their own; -quick makes every size small
// (explicit size flags still win). Progress goes to stderr. It exits 1 when
// a scenario failed or any request in it did; the report says which.
// BENCHMARKS.md ("Load over HTTP") describes the scenarios.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agents-os/agents/tools/loadgen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case errors.Is(err, errFailed):
		os.Exit(1)
	default:
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

var (
	// errUsage means the flags were wrong; the flag package already said how.
	errUsage = errors.New("usage")
	// errFailed means the report, already printed, has a failure.
	errFailed = errors.New("a scenario failed")
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, asJSON, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg.Progress = stderr
	rep, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		return err
	}
	if rep.Failed() {
		fmt.Fprintln(stderr, "loadgen: some scenarios failed or had errors; see the report")
		return errFailed
	}
	return nil
}

// sizes are the flags that set a size; -quick changes their defaults.
type sizes struct {
	concurrency, subscribers, turns           ints
	prompts, repeat, fanoutSessions, getCalls int
	stored, storedConcurrency, startup        int
	bootRuns                                  int
	bootSettle                                time.Duration
	storedPrompts                             int
	idleSessions, idleMore                    int
	idleAfter, evictWait, idleEvict           time.Duration
}

func parseFlags(args []string, stderr io.Writer) (loadgen.Config, bool, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg       loadgen.Config
		scenarios string
		quick     bool
		asJSON    bool
		serveArgs strs
		s         sizes
	)
	fs.StringVar(&cfg.AgentsBin, "agents-bin", "", "the agents `binary`; default: build ./backend/cmd/agents")
	fs.StringVar(&cfg.ModelURL, "model-url", "", "use this offline model (a fakellm `URL`, …/v1) instead of serving one here; it must answer at once")
	fs.StringVar(&cfg.Postgres, "postgres", "", "cluster: the PostgreSQL server to create databases on, a `URL` whose user may (default "+loadgen.DefaultPostgres+")")
	fs.StringVar(&scenarios, "scenario", "", "comma-separated `scenarios` to run ("+strings.Join(loadgen.ScenarioNames(), ",")+"); default all")
	fs.BoolVar(&quick, "quick", false, "small sizes: a check that runs in about a minute")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON instead of tables")
	fs.BoolVar(&cfg.PostWait, "post-wait", false, "make a prompt one request, POST …/messages?wait=true, instead of a post and a waiting GetSession")
	fs.StringVar(&cfg.Compare, "compare", "", "prompts and boot: a second agents `binary`; each row runs against both in turns (with -repeat, the median of each), for a before and after on one machine")
	fs.BoolVar(&cfg.WaitWhole, "wait-whole", false, "have a prompt's waiting GetSession return the whole session, every turn, instead of the turns after the prompt's")
	fs.StringVar(&cfg.ProfileDir, "profile", "", "write CPU profiles of the server and of the load tool itself (….client.cpu.pprof), and the server's allocations at the start and end (….allocs-before.pprof, ….allocs.pprof), for each measured workload into `dir` (the server serves /debug/pprof/ with AGENTS_PPROF=1)")
	fs.BoolVar(&cfg.FineHeap, "fine-heap", false, "with -profile, sample the server's allocations every 4 KiB in every workload, for allocations profiles that count small objects (the CPU profiles then overstate allocation)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the temporary directory (databases, agent file)")
	fs.Var(&serveArgs, "serve-arg", "one more `flag` for agents serve, such as --max-runs=0 (repeatable)")
	fs.IntVar(&s.repeat, "repeat", 0, "prompts: run each row this many times, the sizes taking turns, and report the median run by CPU per prompt with the ranges (default 3; quick 1)")
	fs.Var(&s.concurrency, "concurrency", "prompts: concurrent `sessions`, a list (default 1,16,64,256; quick 1,16,64)")
	fs.IntVar(&s.prompts, "prompts", 0, "prompts: prompts per session, and fanout's (default 10)")
	fs.Var(&s.subscribers, "subscribers", "fanout: SSE `subscribers`, a list (default 200,1000; quick 50,200)")
	fs.IntVar(&s.fanoutSessions, "fanout-sessions", 0, "fanout: sessions prompting meanwhile (default 16)")
	fs.Float64Var(&cfg.FanoutRate, "fanout-rate", 0, "fanout: prompts per second the sessions make together, paced; 0 for each session prompting again as soon as it is answered (the server as busy as it gets)")
	fs.Func("fanout-kinds", "fanout: the subscribers take only these event `kinds`, a comma-separated list that must hold run.stopped (the delay is measured to it); default every kind", func(v string) error {
		cfg.FanoutKinds = strings.Split(v, ",")
		return nil
	})
	fs.Var(&s.turns, "turns", "getsession: session `lengths` in turns, a list (default 10,100,1000; quick 10,100)")
	fs.IntVar(&s.getCalls, "get-calls", 0, "getsession: calls per length (default 200; quick 50)")
	fs.IntVar(&s.stored, "stored", 0, "stored and startup: sessions in the database (default 100000; quick 10000)")
	fs.IntVar(&s.storedConcurrency, "stored-concurrency", 0, "stored: concurrent sessions prompting (default 16)")
	fs.IntVar(&s.storedPrompts, "stored-prompts", 0, "stored: prompts per session (default 50; quick 10)")
	fs.IntVar(&s.startup, "startup-runs", 0, "startup: starts per size (default 3; quick 2)")
	fs.IntVar(&s.bootRuns, "boot-runs", 0, "boot: starts of each binary (default 7; quick 3)")
	fs.DurationVar(&s.bootSettle, "boot-settle", 0, "boot: how long a started server idles before its RSS is read (default 3s; quick 1s)")
	fs.IntVar(&s.idleSessions, "idle-sessions", 0, "idle: sessions touched once (default 1000; quick 200)")
	fs.IntVar(&s.idleMore, "idle-more", 0, "idle: then touch this many more once and measure them the same way, against the first sessions' rows (the marginal cost on a warm server), 0 to skip (default 9000; quick 400)")
	fs.DurationVar(&s.idleAfter, "idle-after", -1, "idle: measure again this long after the touch, 0 to skip (default 1m; quick 0)")
	fs.DurationVar(&s.evictWait, "evict-wait", -1, "idle: wait at most this long for the eviction, 0 to skip (default 7m; quick 15s)")
	fs.DurationVar(&s.idleEvict, "idle-evict", -1, "idle: serve with --idle-evict=`D` when the binary has the flag, 0 for its default (default 0; quick 2s)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, false, err
		}
		return cfg, false, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "loadgen: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return cfg, false, errUsage
	}

	base := loadgen.DefaultConfig()
	if quick {
		base = loadgen.QuickConfig()
	}
	base.AgentsBin, base.Compare, base.ModelURL, base.Keep, base.PostWait, base.WaitWhole, base.ServeArgs, base.ProfileDir, base.FineHeap, base.FanoutRate = cfg.AgentsBin, cfg.Compare, cfg.ModelURL, cfg.Keep, cfg.PostWait, cfg.WaitWhole, serveArgs, cfg.ProfileDir, cfg.FineHeap, cfg.FanoutRate
	base.FanoutKinds = cfg.FanoutKinds
	if scenarios != "" {
		base.Scenarios = strings.Split(scenarios, ",")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	override := func(name string, apply func()) {
		if set[name] {
			apply()
		}
	}
	override("concurrency", func() { base.Concurrency = s.concurrency })
	override("prompts", func() { base.Prompts = s.prompts })
	override("repeat", func() { base.Repeat = s.repeat })
	override("subscribers", func() { base.Subscribers = s.subscribers })
	override("fanout-sessions", func() { base.FanoutSessions = s.fanoutSessions })
	override("turns", func() { base.Turns = s.turns })
	override("get-calls", func() { base.GetCalls = s.getCalls })
	override("stored", func() { base.Stored = s.stored })
	override("stored-concurrency", func() { base.StoredConcurrency = s.storedConcurrency })
	override("stored-prompts", func() { base.StoredPrompts = s.storedPrompts })
	override("startup-runs", func() { base.StartupRuns = s.startup })
	override("boot-runs", func() { base.BootRuns = s.bootRuns })
	override("boot-settle", func() { base.BootSettle = s.bootSettle })
	override("idle-sessions", func() { base.IdleSessions = s.idleSessions })
	override("idle-more", func() { base.IdleMore = s.idleMore })
	override("idle-after", func() { base.IdleAfter = s.idleAfter })
	override("evict-wait", func() { base.EvictWait = s.evictWait })
	override("idle-evict", func() { base.IdleEvict = s.idleEvict })
	if err := check(base); err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return cfg, false, errUsage
	}
	return base, asJSON, nil
}

// check rejects sizes no scenario can run with.
func check(c loadgen.Config) error {
	for name, v := range map[string]int{
		"-prompts": c.Prompts, "-repeat": c.Repeat, "-fanout-sessions": c.FanoutSessions, "-get-calls": c.GetCalls,
		"-stored": c.Stored, "-stored-concurrency": c.StoredConcurrency, "-stored-prompts": c.StoredPrompts, "-startup-runs": c.StartupRuns,
		"-boot-runs":     c.BootRuns,
		"-idle-sessions": c.IdleSessions,
	} {
		if v < 1 {
			return fmt.Errorf("%s must be at least 1", name)
		}
	}
	for name, list := range map[string][]int{"-concurrency": c.Concurrency, "-subscribers": c.Subscribers, "-turns": c.Turns} {
		if len(list) == 0 {
			return fmt.Errorf("%s needs at least one size", name)
		}
	}
	if c.FanoutRate < 0 {
		return errors.New("-fanout-rate cannot be negative")
	}
	if len(c.FanoutKinds) > 0 && !contains(c.FanoutKinds, "run.stopped") {
		return errors.New("-fanout-kinds must hold run.stopped: the delay is measured to it")
	}
	if c.IdleMore < 0 || c.IdleAfter < 0 || c.EvictWait < 0 || c.IdleEvict < 0 {
		return errors.New("-idle-more, -idle-after, -evict-wait and -idle-evict cannot be negative")
	}
	for _, name := range c.Scenarios {
		if !contains(loadgen.ScenarioNames(), name) {
			return fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(loadgen.ScenarioNames(), ", "))
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ints is a flag holding a comma-separated list of counts.
type ints []int

func (l *ints) String() string {
	var parts []string
	for _, n := range *l {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

func (l *ints) Set(s string) error {
	var out ints
	for part := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a count", part)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

// strs is a repeatable string flag.
type strs []string

func (l *strs) String() string     { return strings.Join(*l, " ") }
func (l *strs) Set(s string) error { *l = append(*l, s); return nil }
