// Package config finds and reads the configuration of the agents server:
// the config file, the agent files it names, the database, the listen
// address, API keys and session params.
//
// Resolve takes every input explicitly (working directory, environment,
// flag values), so it is testable without touching the real home
// directory. docs/agent-files.md is the user-facing reference.
package config

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// Defaults and names.
const (
	DefaultBind = "127.0.0.1"
	DefaultPort = 7420

	// FileName is the config file searched for.
	FileName = "agents.json"
	// AgentsExeFileName is agents-exe's config file name, read too so that
	// existing projects work unchanged. In one directory, FileName wins.
	AgentsExeFileName = "agents-exe.cfg.json"

	appDirName     = "agents"       // under the user config and data directories
	keysFileName   = "keys.json"    // default API keys file, in the user config directory
	dbFileName     = "agents.db"    // default SQLite file, in the data directory
	agentsDirName  = "agents"       // default agent directory, in the user config directory
	dataHomeSubdir = ".local/share" // XDG's default data home, under the home directory
)

// Flags are the command-line values that feed the configuration. Zero
// values mean "not given". Relative paths are relative to the working
// directory.
type Flags struct {
	ConfigFile  string   // --config F: use this config file, skip the search
	AgentFiles  []string // --agent-file F (repeatable): replaces the config's agent files and directories
	Agent       string   // --agent SLUG: the default (and only) agent
	ParamsFile  string   // --params-file F: session params, a JSON object name → value
	APIKeysFile string   // --api-keys F
	DB          string   // --db PATH | postgres://…
	Bind        string   // --bind
	Port        int      // --port
	// StoredAgentToolDirs (--stored-agent-tool-dirs D, repeatable or
	// comma-separated) replaces the config file's storedAgentToolDirs.
	StoredAgentToolDirs []string

	MaxModelOutputBytes int64         // --max-model-output-bytes N
	MaxModelCallTime    time.Duration // --max-model-call-time D
}

// Options are the inputs of Resolve.
type Options struct {
	// WorkDir is where the config file search starts and what relative
	// flag paths are relative to. Empty: the process working directory.
	WorkDir string
	// LookupEnv reads the environment. Nil: os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// UserConfigDir gives the user config directory when XDG_CONFIG_HOME is
	// not set. Nil: os.UserConfigDir.
	UserConfigDir func() (string, error)
	// HomeDir gives the home directory when HOME is not set. Nil:
	// os.UserHomeDir.
	HomeDir func() (string, error)
	// StopDir, when set, ends the upward config file search after that
	// directory instead of at the filesystem root.
	StopDir string

	Flags Flags
	// FallbackAgentDirs are agent directories tried, in order, after the
	// user config directory's agents/ folder, when neither flags nor a
	// config file name any agent file. The first that exists is used.
	FallbackAgentDirs []string
}

// Where the agent files of a Resolved came from.
const (
	AgentsFromFlags   = "flags"   // --agent-file
	AgentsFromConfig  = "config"  // the config file's agentsFiles and agentsDirectories
	AgentsFromDefault = "default" // the first existing default directory, if any
)

// Resolved is the configuration after defaults, config file and flags are
// combined. Paths are absolute.
type Resolved struct {
	WorkDir    string
	ConfigFile string // the config file used; "" when there is none
	ConfigDir  string // the user config directory, $XDG_CONFIG_HOME/agents
	DataDir    string // $XDG_DATA_HOME/agents

	// DB is a SQLite file path or a postgres:// DSN. A DSN may hold a
	// password: show it with Paths, which redacts it.
	DB   string
	Bind string
	Port int

	AgentFiles []string
	AgentDirs  []string
	AgentsFrom string // AgentsFromFlags, AgentsFromConfig or AgentsFromDefault
	Agent      string // --agent: the selected slug, "" for all

	APIKeysFile string // "" when there is none
	ParamsFile  string // "" when there is none

	// StoredAgentToolDirs are the directories the programs of stored
	// agents (bash toolboxes, tool directories, MCP server commands) must
	// lie under; none allows no program.
	StoredAgentToolDirs []string

	// ModelLimits bound each model call of the server's clients; its
	// fields are set, to the llm defaults when nothing else says.
	ModelLimits llm.Limits

	// Prices are what models cost, by model name; a model without a price
	// costs nothing.
	Prices map[string]session.Price
	// Budgets are the server's budget settings.
	Budgets Budgets

	// Webhooks are the config file's webhook settings.
	Webhooks Webhooks

	// Models are the limits the config file gives models, by model name;
	// a zero field is not given (the server's table or default applies).
	Models map[string]catalog.Limits
	// Compaction is the server's compaction settings; zero fields take
	// the defaults of catalog.Compaction.Complete.
	Compaction catalog.Compaction

	// Warnings are problems in the config file that did not stop it from
	// being used, such as unknown fields.
	Warnings []*agentfile.Error
}

// Resolve combines defaults, the config file and flags. Precedence, from
// strongest: flags, then the config file, then defaults. It reads the
// config file but no agent, key or params file; see LoadAgents, LoadKeys
// and LoadParams.
func Resolve(opts Options) (*Resolved, error) {
	env := envLookup(opts.LookupEnv)
	work, err := workDir(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	home := func() (string, error) { return homeDir(env, opts.HomeDir) }
	configDir, err := userConfigDir(env, opts.UserConfigDir)
	if err != nil {
		return nil, err
	}
	dataDir, err := userDataDir(env, home)
	if err != nil {
		return nil, err
	}
	if err := opts.Flags.check(); err != nil {
		return nil, err
	}

	r := &Resolved{WorkDir: work, ConfigDir: configDir, DataDir: dataDir, Agent: opts.Flags.Agent}
	r.ConfigFile, err = findConfigFile(opts.Flags.ConfigFile, work, opts.StopDir, configDir)
	if err != nil {
		return nil, err
	}
	var file settings
	if r.ConfigFile != "" {
		if file, r.Warnings, err = readSettings(r.ConfigFile, home); err != nil {
			return nil, err
		}
	}

	r.resolveAgents(opts, file)
	r.DB = firstNonEmpty(flagPath(work, opts.Flags.DB), file.DB, filepath.Join(dataDir, dbFileName))
	r.Bind = firstNonEmpty(opts.Flags.Bind, file.Bind, DefaultBind)
	r.Port = firstNonZero(opts.Flags.Port, file.Port, DefaultPort)
	r.APIKeysFile = firstNonEmpty(flagPath(work, opts.Flags.APIKeysFile), file.APIKeysFile, existingFile(filepath.Join(configDir, keysFileName)))
	r.ParamsFile = flagPath(work, opts.Flags.ParamsFile)
	r.StoredAgentToolDirs = file.StoredAgentToolDirs
	if len(opts.Flags.StoredAgentToolDirs) > 0 {
		r.StoredAgentToolDirs = nil
		for _, d := range opts.Flags.StoredAgentToolDirs {
			r.StoredAgentToolDirs = append(r.StoredAgentToolDirs, flagPath(work, d))
		}
	}
	r.ModelLimits = llm.Limits{
		MaxOutputBytes: firstNonZero(opts.Flags.MaxModelOutputBytes, file.MaxModelOutputBytes, llm.DefaultMaxOutputBytes),
		MaxCallTime:    firstNonZero(opts.Flags.MaxModelCallTime, file.MaxModelCallTime, llm.DefaultMaxCallTime),
	}
	r.Prices, r.Budgets = file.Prices, file.Budgets
	r.Webhooks = file.Webhooks
	r.Models, r.Compaction = file.Models, file.Compaction
	if r.Budgets.ReserveTokens == 0 {
		r.Budgets.ReserveTokens = DefaultReserveTokens
	}
	return r, nil
}

// Budgets are the config file's budget settings.
type Budgets struct {
	// OwnerDefault is the budget of every owner without one of its own;
	// nil for none.
	OwnerDefault *session.OwnerBudget
	// ReserveTokens is the output a model call under a budget reserves,
	// and asks the model for at most, when its model's maximum output is
	// not known; the call reserves its measured input besides.
	ReserveTokens int64
}

// Webhooks are the config file's webhook settings; zero durations and
// counts take the server's defaults.
type Webhooks struct {
	// AllowPrivate lets webhooks reach loopback, private and link-local
	// addresses; AllowCIDRs lets them reach those ranges only.
	AllowPrivate bool
	AllowCIDRs   []netip.Prefix
	// Timeout bounds one attempt; Concurrency the attempts under way to
	// one endpoint.
	Timeout     time.Duration
	Concurrency int
	// RetryFor is how long a delivery is retried, waiting RetryBase after
	// the first failure, doubling up to RetryMax.
	RetryFor, RetryBase, RetryMax time.Duration
	// DisableAfter is how long an endpoint may fail continuously before
	// the server disables it.
	DisableAfter time.Duration
}

// DefaultReserveTokens is the output a model call reserves when neither
// its model nor the config file says: room for a long answer.
const DefaultReserveTokens = 4096

// check rejects flag values out of range; zero ones are not given.
func (f Flags) check() error {
	switch {
	case f.Port < 0 || f.Port > 65535:
		return fmt.Errorf("--port %d: must be between 1 and 65535", f.Port)
	case f.MaxModelOutputBytes < 0:
		return fmt.Errorf("--max-model-output-bytes %d: must be positive", f.MaxModelOutputBytes)
	case f.MaxModelCallTime < 0:
		return fmt.Errorf("--max-model-call-time %s: must be positive", f.MaxModelCallTime)
	}
	return nil
}

// resolveAgents picks the agent files: --agent-file replaces everything;
// otherwise the config file's lists; when neither names any, the first
// default directory that exists.
func (r *Resolved) resolveAgents(opts Options, file settings) {
	switch {
	case len(opts.Flags.AgentFiles) > 0:
		for _, f := range opts.Flags.AgentFiles {
			r.AgentFiles = append(r.AgentFiles, flagPath(r.WorkDir, f))
		}
		r.AgentsFrom = AgentsFromFlags
	case len(file.AgentsFiles) > 0 || len(file.AgentsDirectories) > 0:
		r.AgentFiles, r.AgentDirs = file.AgentsFiles, file.AgentsDirectories
		r.AgentsFrom = AgentsFromConfig
	default:
		candidates := []string{filepath.Join(r.ConfigDir, agentsDirName)}
		for _, dir := range opts.FallbackAgentDirs {
			candidates = append(candidates, flagPath(r.WorkDir, dir))
		}
		for _, dir := range candidates {
			if info, err := os.Stat(dir); err == nil && info.IsDir() {
				r.AgentDirs = []string{dir}
				break
			}
		}
		r.AgentsFrom = AgentsFromDefault
	}
}

// LoadAgents loads the resolved agent files. With --agent, the set holds
// only that agent and its helpers; an unknown slug is an error listing the
// known ones, returned with the full set so its load errors can be shown.
func (r *Resolved) LoadAgents() (*agentfile.Set, error) {
	set := agentfile.Loader{WorkDir: r.WorkDir}.Load(r.AgentFiles, r.AgentDirs)
	if r.Agent == "" {
		return set, nil
	}
	only, err := set.Only(r.Agent)
	if err != nil {
		return set, fmt.Errorf("--agent: %w", err)
	}
	return only, nil
}

// LoadKeys loads the API keys: the keys file, if any, and the environment
// (see Keys.Lookup). Nil lookupEnv means os.LookupEnv.
func (r *Resolved) LoadKeys(lookupEnv func(string) (string, bool)) (Keys, error) {
	return LoadKeys(r.APIKeysFile, lookupEnv)
}

// LoadParams loads the --params-file, if one was given.
func (r *Resolved) LoadParams() (map[string]string, error) {
	if r.ParamsFile == "" {
		return nil, nil
	}
	return LoadParams(r.ParamsFile)
}

func envLookup(lookup func(string) (string, bool)) func(string) (string, bool) {
	if lookup == nil {
		return os.LookupEnv
	}
	return lookup
}

func workDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		return wd, nil
	}
	return filepath.Abs(dir)
}

// flagPath makes a path given on the command line absolute. DSNs pass
// through.
func flagPath(work, path string) string {
	if path == "" || isDSN(path) {
		return path
	}
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(work, path)
}

func isDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

func existingFile(path string) string {
	if info, err := os.Stat(path); err == nil && info.Mode().IsRegular() {
		return path
	}
	return ""
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstNonZero[T int | int64 | time.Duration](values ...T) T {
	for _, v := range values {
		if v != 0 {
			return v
		}
	}
	return 0
}
