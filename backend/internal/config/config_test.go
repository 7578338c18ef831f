package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// sandbox is a temporary home: a project directory to work in, XDG
// directories, and an environment that points at them only.
type sandbox struct {
	root, home, project, work, xdgConfig, xdgData string
	env                                           map[string]string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	s := &sandbox{
		root:      root,
		home:      filepath.Join(root, "home"),
		project:   filepath.Join(root, "project"),
		xdgConfig: filepath.Join(root, "xdg-config"),
		xdgData:   filepath.Join(root, "xdg-data"),
	}
	s.work = filepath.Join(s.project, "src", "deep")
	for _, dir := range []string{s.home, s.work, s.xdgConfig, s.xdgData} {
		mkdir(t, dir)
	}
	s.env = map[string]string{"HOME": s.home, "XDG_CONFIG_HOME": s.xdgConfig, "XDG_DATA_HOME": s.xdgData}
	return s
}

func (s *sandbox) options(flags Flags) Options {
	return Options{
		WorkDir:   s.work,
		LookupEnv: s.lookupEnv,
		StopDir:   s.root,
		UserConfigDir: func() (string, error) {
			return "", errors.New("the platform config directory must not be used in tests")
		},
		HomeDir: func() (string, error) {
			return "", errors.New("the platform home directory must not be used in tests")
		},
		Flags: flags,
	}
}

func (s *sandbox) lookupEnv(name string) (string, bool) {
	v, ok := s.env[name]
	return v, ok
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func resolve(t *testing.T, opts Options) *Resolved {
	t.Helper()
	r, err := Resolve(opts)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return r
}

func TestResolveDefaults(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	r := resolve(t, s.options(Flags{}))
	want := &Resolved{
		WorkDir:    s.work,
		ConfigDir:  filepath.Join(s.xdgConfig, "agents"),
		DataDir:    filepath.Join(s.xdgData, "agents"),
		DB:         filepath.Join(s.xdgData, "agents", "agents.db"),
		Bind:       DefaultBind,
		Port:       DefaultPort,
		AgentsFrom: AgentsFromDefault,
		ModelLimits: llm.Limits{
			MaxOutputBytes: llm.DefaultMaxOutputBytes,
			MaxCallTime:    llm.DefaultMaxCallTime,
		},
		Budgets: Budgets{ReserveTokens: DefaultReserveTokens},
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("Resolve() =\n %+v\nwant\n %+v", r, want)
	}
}

func TestResolveWithoutXDGUsesHomeAndPlatformDirs(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	delete(s.env, "XDG_CONFIG_HOME")
	s.env["XDG_DATA_HOME"] = "relative/ignored" // the XDG spec says to ignore relative paths
	opts := s.options(Flags{})
	platformConfig := filepath.Join(s.root, "platform-config")
	opts.UserConfigDir = func() (string, error) { return platformConfig, nil }
	write(t, filepath.Join(platformConfig, "agents", "agents.json"), `{"port": 8123}`)

	r := resolve(t, opts)
	if r.ConfigDir != filepath.Join(platformConfig, "agents") {
		t.Errorf("ConfigDir = %q", r.ConfigDir)
	}
	if r.DataDir != filepath.Join(s.home, ".local", "share", "agents") {
		t.Errorf("DataDir = %q", r.DataDir)
	}
	if r.ConfigFile != filepath.Join(platformConfig, "agents", "agents.json") || r.Port != 8123 {
		t.Errorf("ConfigFile = %q, Port = %d", r.ConfigFile, r.Port)
	}
}

func TestResolveFindsConfigUpward(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{
		"agentsFiles": ["agents/desk.json"],
		"agentsDirectories": ["more-agents", "/opt/agents"],
		"db": "state/agents.db",
		"bind": "0.0.0.0",
		"port": 9000,
		"apiKeysFile": "~/secrets/keys.json"
	}`)
	r := resolve(t, s.options(Flags{}))
	checks := []struct {
		name      string
		got, want any
	}{
		{"ConfigFile", r.ConfigFile, filepath.Join(s.project, "agents.json")},
		{"AgentFiles", r.AgentFiles, []string{filepath.Join(s.project, "agents", "desk.json")}},
		{"AgentDirs", r.AgentDirs, []string{filepath.Join(s.project, "more-agents"), "/opt/agents"}},
		{"AgentsFrom", r.AgentsFrom, AgentsFromConfig},
		{"DB", r.DB, filepath.Join(s.project, "state", "agents.db")},
		{"Bind", r.Bind, "0.0.0.0"},
		{"Port", r.Port, 9000},
		{"APIKeysFile", r.APIKeysFile, filepath.Join(s.home, "secrets", "keys.json")},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestResolveConfigFileChoice(t *testing.T) {
	t.Parallel()
	agentsExeConfig, err := os.ReadFile(filepath.Join("testdata", "agents-exe.cfg.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		files []string // relative to the sandbox root
		want  string   // relative to the sandbox root; "" for none
	}{
		{"none", nil, ""},
		{"agents-exe name", []string{"project/agents-exe.cfg.json"}, "project/agents-exe.cfg.json"},
		{"agents.json wins in one directory", []string{"project/agents-exe.cfg.json", "project/agents.json"}, "project/agents.json"},
		{"nearest wins", []string{"project/agents.json", "project/src/agents-exe.cfg.json"}, "project/src/agents-exe.cfg.json"},
		{"the working directory itself", []string{"project/src/deep/agents.json", "project/agents.json"}, "project/src/deep/agents.json"},
		{"user config directory", []string{"xdg-config/agents/agents.json"}, "xdg-config/agents/agents.json"},
		{"project wins over user", []string{"xdg-config/agents/agents.json", "project/agents.json"}, "project/agents.json"},
		{"a directory is not a file", []string{"project/agents.json/placeholder.json"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			for _, f := range tc.files {
				write(t, filepath.Join(s.root, f), string(agentsExeConfig))
			}
			r := resolve(t, s.options(Flags{}))
			want := ""
			if tc.want != "" {
				want = filepath.Join(s.root, tc.want)
			}
			if r.ConfigFile != want {
				t.Errorf("ConfigFile = %q, want %q", r.ConfigFile, want)
			}
			if len(r.Warnings) != 0 {
				t.Errorf("agents-exe fields gave warnings: %v", r.Warnings)
			}
		})
	}
}

func TestResolveAgentsExeConfig(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	data, err := os.ReadFile(filepath.Join("testdata", "agents-exe.cfg.json"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(s.project, "agents-exe.cfg.json"), string(data))
	r := resolve(t, s.options(Flags{}))
	want := []string{filepath.Join(s.project, "agents"), filepath.Join(s.project, "localdev-agents")}
	if !reflect.DeepEqual(r.AgentDirs, want) || r.AgentsFrom != AgentsFromConfig {
		t.Errorf("AgentDirs = %v (%s), want %v", r.AgentDirs, r.AgentsFrom, want)
	}
}

func TestResolveFlagsWin(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{
		"agentsFiles": ["config-agent.json"], "agentsDirectories": ["config-agents"],
		"db": "config.db", "bind": "0.0.0.0", "port": 9000, "apiKeysFile": "config-keys.json",
		"maxModelOutputBytes": 1000, "maxModelCallTime": "1m"
	}`)
	r := resolve(t, s.options(Flags{
		AgentFiles:  []string{"mine.json", "/abs/other.json"},
		Agent:       "desk",
		ParamsFile:  "params.json",
		APIKeysFile: "flag-keys.json",
		DB:          "postgres://agents@db.internal/agents",
		Bind:        "::1",
		Port:        7500,

		MaxModelOutputBytes: 2000,
		MaxModelCallTime:    2 * time.Minute,
	}))
	checks := []struct {
		name      string
		got, want any
	}{
		{"AgentFiles", r.AgentFiles, []string{filepath.Join(s.work, "mine.json"), "/abs/other.json"}},
		{"AgentDirs", r.AgentDirs, []string(nil)},
		{"AgentsFrom", r.AgentsFrom, AgentsFromFlags},
		{"Agent", r.Agent, "desk"},
		{"ParamsFile", r.ParamsFile, filepath.Join(s.work, "params.json")},
		{"APIKeysFile", r.APIKeysFile, filepath.Join(s.work, "flag-keys.json")},
		{"DB", r.DB, "postgres://agents@db.internal/agents"},
		{"Bind", r.Bind, "::1"},
		{"Port", r.Port, 7500},
		{"ModelLimits", r.ModelLimits, llm.Limits{MaxOutputBytes: 2000, MaxCallTime: 2 * time.Minute}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestResolveExplicitConfigFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{"port": 9000}`)
	write(t, filepath.Join(s.work, "custom.json"), `{"port": 9001}`)

	r := resolve(t, s.options(Flags{ConfigFile: "custom.json"}))
	if r.ConfigFile != filepath.Join(s.work, "custom.json") || r.Port != 9001 {
		t.Errorf("ConfigFile = %q, Port = %d", r.ConfigFile, r.Port)
	}
	_, err := Resolve(s.options(Flags{ConfigFile: "missing.json"}))
	if err == nil || err.Error() != "--config missing.json: file does not exist" {
		t.Errorf("missing --config: %v", err)
	}
}

func TestResolveDefaultAgentDirectory(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		dirs     []string // created, relative to the sandbox root
		fallback []string // relative to the working directory
		want     string   // relative to the sandbox root
	}{
		{"nothing exists", nil, []string{"examples"}, ""},
		{"user agents directory", []string{"xdg-config/agents/agents", "project/src/deep/examples"}, []string{"examples"}, "xdg-config/agents/agents"},
		{"first existing fallback", []string{"project/src/deep/examples"}, []string{"missing", "examples"}, "project/src/deep/examples"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			for _, d := range tc.dirs {
				mkdir(t, filepath.Join(s.root, d))
			}
			opts := s.options(Flags{})
			opts.FallbackAgentDirs = tc.fallback
			r := resolve(t, opts)
			var want []string
			if tc.want != "" {
				want = []string{filepath.Join(s.root, tc.want)}
			}
			if !reflect.DeepEqual(r.AgentDirs, want) || r.AgentsFrom != AgentsFromDefault {
				t.Errorf("AgentDirs = %v (%s), want %v", r.AgentDirs, r.AgentsFrom, want)
			}
		})
	}

	// A config file naming no agents falls back too.
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{"port": 9000, "agentsFiles": []}`)
	mkdir(t, filepath.Join(s.xdgConfig, "agents", "agents"))
	if r := resolve(t, s.options(Flags{})); len(r.AgentDirs) != 1 || r.AgentsFrom != AgentsFromDefault {
		t.Errorf("config without agents: AgentDirs = %v (%s)", r.AgentDirs, r.AgentsFrom)
	}
}

func TestResolveDefaultKeysFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	if r := resolve(t, s.options(Flags{})); r.APIKeysFile != "" {
		t.Errorf("APIKeysFile = %q with no keys file anywhere", r.APIKeysFile)
	}
	keys := filepath.Join(s.xdgConfig, "agents", "keys.json")
	write(t, keys, `{"keys": []}`)
	if r := resolve(t, s.options(Flags{})); r.APIKeysFile != keys {
		t.Errorf("APIKeysFile = %q, want %q", r.APIKeysFile, keys)
	}
}

func TestResolveRejectsBadConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content, want string // want: the error, with FILE for the config path
	}{
		{"syntax", "{\n  \"port\": 9000,\n}", "FILE:3:1: invalid character '}' looking for beginning of object key string"},
		{"not an object", `["a"]`, "FILE: must be a JSON object"},
		{"port type", `{"port": "9000"}`, "FILE: port: must be a whole number"},
		{"port range", `{"port": 70000}`, "FILE: port: must be between 1 and 65535, got 70000"},
		{"files type", `{"agentsFiles": "a.json"}`, "FILE: agentsFiles: must be a list of paths"},
		{"empty path", `{"agentsDirectories": ["a", ""]}`, "FILE: agentsDirectories[1]: must not be empty"},
		{"agent file", `{"tag": "OpenAIAgentDescription", "contents": {}}`, "FILE: this is an agent file, not a config file (list it in agentsFiles instead)"},
		{"output cap type", `{"maxModelOutputBytes": "4MiB"}`, "FILE: maxModelOutputBytes: must be a whole number of bytes"},
		{"output cap range", `{"maxModelOutputBytes": -1}`, "FILE: maxModelOutputBytes: must be positive, got -1"},
		{"call time type", `{"maxModelCallTime": 600}`, `FILE: maxModelCallTime: must be a duration such as "10m" or "90s"`},
		{"call time syntax", `{"maxModelCallTime": "ten minutes"}`, `FILE: maxModelCallTime: must be a duration such as "10m" or "90s"`},
		{"call time range", `{"maxModelCallTime": "-1s"}`, "FILE: maxModelCallTime: must be positive, got -1s"},
		{"negative price", `{"prices": {"m": {"input_per_mtok": -1}}}`, "FILE: prices.m: input_per_mtok must be a number of US dollars from 0 to 1000000000, got -1"},
		{"price too large", `{"prices": {"m": {"output_per_mtok": 1e10}}}`, "FILE: prices.m: output_per_mtok must be a number of US dollars from 0 to 1000000000, got 1e+10"},
		{"default cost too large", `{"budgets": {"owner_default": {"cost_usd": 1e10}}}`, "FILE: budgets.owner_default: cost_usd must be a number of US dollars from 0 to 1000000000, got 1e+10"},
		{"misspelt price", `{"prices": {"m": {"input_per_token": 1}}}`, `FILE: prices: must map model names to {"input_per_mtok", "output_per_mtok", "cached_input_per_mtok"} in US dollars per million tokens: json: unknown field "input_per_token"`},
		{"bad period", `{"budgets": {"owner_default": {"tokens": 5, "period": "week"}}}`, `FILE: budgets.owner_default: period must be "day", "month" or "total", got "week"`},
		{"negative reservation", `{"budgets": {"reserve_tokens": -1}}`, "FILE: budgets.reserve_tokens: must not be negative"},
		{"misspelt model limit", `{"models": {"m": {"context_windows": 8000}}}`, `FILE: models: must map model names to {"context_window", "max_output_tokens"} in tokens: json: unknown field "context_windows"`},
		{"model limits not numbers", `{"models": {"m": {"context_window": "128k"}}}`, `FILE: models: must map model names to {"context_window", "max_output_tokens"} in tokens: json: cannot unmarshal string into Go struct field modelSetting.context_window of type int64`},
		{"negative window", `{"models": {"m": {"context_window": -1}}}`, "FILE: models.m: context_window must be greater than 0, got -1"},
		{"zero output", `{"models": {"m": {"max_output_tokens": 0}}}`, "FILE: models.m: max_output_tokens must be greater than 0, got 0"},
		{"empty model entry", `{"models": {"m": {}}}`, "FILE: models.m: sets neither context_window nor max_output_tokens"},
		{"misspelt webhook setting", `{"webhooks": {"allow_loopback": true}}`, `FILE: webhooks: must be {"allow_private", "allow_cidrs", "timeout", "concurrency", "retry_for", "retry_base", "retry_max", "disable_after"}: json: unknown field "allow_loopback"`},
		{"webhook range", `{"webhooks": {"allow_cidrs": ["10.0.0.0/8", "10.0.0.1"]}}`, `FILE: webhooks.allow_cidrs[1]: must be an address range such as 10.0.0.0/8 or fd00::/8, got "10.0.0.1"`},
		{"webhook timeout", `{"webhooks": {"timeout": "0s"}}`, `FILE: webhooks.timeout: must be a positive duration such as "10s" or "72h", got "0s"`},
		{"webhook concurrency", `{"webhooks": {"concurrency": -1}}`, "FILE: webhooks.concurrency: must not be negative"},
		{"blank model name", `{"models": {" ": {"context_window": 8000}}}`, "FILE: models. : a model name must not be empty"},
		{"output over window", `{"models": {"m": {"context_window": 8000, "max_output_tokens": 9000}}}`, "FILE: models.m: max_output_tokens 9000 is more than context_window 8000, which holds the output too"},
		{"window without room", `{"compaction": {"output_reserve": 6000, "margin": 2000}, "models": {"m": {"context_window": 8000}}}`,
			"FILE: models.m: the context window, 8000, leaves no room beside the compaction's output reserve, 6000, and margin, 2000"},
		{"window without room by default", `{"models": {"m": {"context_window": 300}}}`,
			"FILE: models.m: the context window, 300, leaves no room beside the compaction's output reserve, 75, and margin, 256"},
		{"misspelt compaction", `{"compaction": {"treshold": 1000}}`, `FILE: compaction: must be {"threshold", "output_reserve", "margin", "prune_over", "keep_recent", "model", "prompt"}: json: unknown field "treshold"`},
		{"negative threshold", `{"compaction": {"threshold": -5}}`, "FILE: compaction.threshold: must not be negative, got -5"},
		{"negative keep recent", `{"compaction": {"keep_recent": -1}}`, "FILE: compaction.keep_recent: must not be negative, got -1"},
		{"prompt not lines", `{"compaction": {"prompt": 3}}`, "FILE: compaction.prompt: must be a list of lines or a string"},
		{"empty prompt", `{"compaction": {"prompt": []}}`, "FILE: compaction.prompt: must not be empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			path := filepath.Join(s.project, "agents.json")
			write(t, path, tc.content)
			_, err := Resolve(s.options(Flags{}))
			want := strings.ReplaceAll(tc.want, "FILE", path)
			if err == nil || err.Error() != want {
				t.Errorf("error = %v\nwant    %s", err, want)
			}
		})
	}

	s := newSandbox(t)
	for _, bad := range []struct {
		flags Flags
		want  string
	}{
		{Flags{Port: 70000}, "--port 70000: must be between 1 and 65535"},
		{Flags{MaxModelOutputBytes: -1}, "--max-model-output-bytes -1: must be positive"},
		{Flags{MaxModelCallTime: -time.Second}, "--max-model-call-time -1s: must be positive"},
	} {
		if _, err := Resolve(s.options(bad.flags)); err == nil || err.Error() != bad.want {
			t.Errorf("Resolve(%+v): %v, want %s", bad.flags, err, bad.want)
		}
	}
}

func TestResolveModelLimitsFromTheConfigFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{"maxModelOutputBytes": 1048576, "maxModelCallTime": "90s"}`)
	r := resolve(t, s.options(Flags{MaxModelCallTime: time.Minute}))
	want := llm.Limits{MaxOutputBytes: 1 << 20, MaxCallTime: time.Minute}
	if r.ModelLimits != want {
		t.Errorf("ModelLimits = %+v, want %+v (the file's cap, the flag's time)", r.ModelLimits, want)
	}
}

func TestResolvePricesAndBudgetsFromTheConfigFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{
		"prices": {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.60, "cached_input_per_mtok": 0.075}},
		"budgets": {"owner_default": {"tokens": 1000000, "cost_usd": 5, "period": "month", "auto_resume": true}, "reserve_tokens": 2048}
	}`)
	r := resolve(t, s.options(Flags{}))
	if p := r.Prices["gpt-4o-mini"]; p != (session.Price{InputPerMTok: 0.15, OutputPerMTok: 0.60, CachedInputPerMTok: 0.075}) {
		t.Errorf("price = %+v", p)
	}
	d := r.Budgets.OwnerDefault
	if d == nil || d.Period != session.PeriodMonth || d.Budget.Tokens == nil || *d.Budget.Tokens != 1000000 ||
		d.Budget.Cost == nil || *d.Budget.Cost != 5*session.NanosPerDollar || d.Source != "default" || !d.Budget.AutoResume {
		t.Errorf("owner default = %+v", d)
	}
	if r.Budgets.ReserveTokens != 2048 {
		t.Errorf("reserve tokens = %d, want 2048", r.Budgets.ReserveTokens)
	}
}

func TestResolveWebhooksFromTheConfigFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{
		"webhooks": {"allow_cidrs": ["127.0.0.1/32", "10.20.3.4/16"], "timeout": "5s", "concurrency": 2, "retry_for": "12h", "retry_base": "1s", "retry_max": "10m", "disable_after": "48h"}
	}`)
	r := resolve(t, s.options(Flags{}))
	w := r.Webhooks
	if w.AllowPrivate || len(w.AllowCIDRs) != 2 || w.AllowCIDRs[0].String() != "127.0.0.1/32" || w.AllowCIDRs[1].String() != "10.20.0.0/16" {
		t.Errorf("allowed = %v %v", w.AllowPrivate, w.AllowCIDRs)
	}
	if w.Timeout != 5*time.Second || w.Concurrency != 2 || w.RetryFor != 12*time.Hour || w.RetryBase != time.Second || w.RetryMax != 10*time.Minute || w.DisableAfter != 48*time.Hour {
		t.Errorf("webhooks = %+v", w)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

func TestResolveModelsAndCompactionFromTheConfigFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{
		"models": {
			"gpt-4o-mini": {"context_window": 128000, "max_output_tokens": 16384},
			"local-llama": {"context_window": 8192}
		},
		"compaction": {"threshold": 90000, "output_reserve": 4096, "prune_over": 2000, "keep_recent": 20000,
			"model": "gpt-4o-mini", "prompt": "Summarise what was done and what is left."}
	}`)
	r := resolve(t, s.options(Flags{}))
	want := map[string]catalog.Limits{
		"gpt-4o-mini": {ContextWindow: 128000, MaxOutputTokens: 16384, Source: catalog.LimitsConfig},
		"local-llama": {ContextWindow: 8192, Source: catalog.LimitsConfig},
	}
	if !reflect.DeepEqual(r.Models, want) {
		t.Errorf("Models = %+v, want %+v", r.Models, want)
	}
	c := r.Compaction
	if c.Threshold != 90000 || c.OutputReserve != 4096 || c.Margin != 0 || c.PruneOver != 2000 || c.KeepRecent != 20000 ||
		c.Model != "gpt-4o-mini" || !reflect.DeepEqual(c.Prompt, []string{"Summarise what was done and what is left."}) {
		t.Errorf("Compaction = %+v", c)
	}

	// Without them, nothing is configured: the catalog's table and
	// defaults apply.
	empty := newSandbox(t)
	write(t, filepath.Join(empty.project, "agents.json"), `{"port": 9000}`)
	r = resolve(t, empty.options(Flags{}))
	if r.Models != nil || !reflect.DeepEqual(r.Compaction, catalog.Compaction{}) {
		t.Errorf("without settings: Models = %v, Compaction = %+v", r.Models, r.Compaction)
	}
}

func TestResolveWarnsAboutUnknownFields(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	write(t, filepath.Join(s.project, "agents.json"), `{"port": 9000, "prot": 9001, "keymap": "k.json"}`)
	r := resolve(t, s.options(Flags{}))
	if len(r.Warnings) != 1 || r.Warnings[0].Field != "prot" || r.Warnings[0].Reason != "unknown field; ignored" {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

func TestResolvedLoadAgents(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	agent := func(slug, extra string) string {
		return `{"tag": "OpenAIAgentDescription", "contents": {"slug": "` + slug + `", "flavor": "OpenAIv1",
			"modelUrl": "http://localhost:11434/v1", "modelName": "m", "announce": "a", "systemPrompt": []` + extra + `}}`
	}
	write(t, filepath.Join(s.project, "agents", "desk.json"), agent("desk", `, "extraAgents": [{"slug": "helper", "path": "helper/helper.json"}]`))
	write(t, filepath.Join(s.project, "agents", "helper", "helper.json"), agent("helper", ""))
	write(t, filepath.Join(s.project, "agents", "other.json"), agent("other", ""))
	write(t, filepath.Join(s.project, "agents.json"), `{"agentsDirectories": ["agents"]}`)

	r := resolve(t, s.options(Flags{}))
	all, err := r.LoadAgents()
	if err != nil || all.Len() != 3 || len(all.Errors) != 0 {
		t.Fatalf("LoadAgents: %v, %d agents, errors %v", err, all.Len(), all.Errors)
	}

	r = resolve(t, s.options(Flags{Agent: "desk"}))
	only, err := r.LoadAgents()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(only.Roots()); got != 1 || only.Len() != 2 || only.Get("other") != nil {
		t.Errorf("--agent desk: %d roots, %d agents", got, only.Len())
	}

	r = resolve(t, s.options(Flags{Agent: "nobody"}))
	set, err := r.LoadAgents()
	if !errors.Is(err, agentfile.ErrUnknownAgent) || err.Error() != `--agent: unknown agent "nobody" (known: desk, helper, other)` {
		t.Errorf("--agent nobody: %v", err)
	}
	if set == nil || set.Len() != 3 {
		t.Errorf("the full set should come back with the error")
	}
}

func TestPathsRedactsDSNPasswords(t *testing.T) {
	t.Parallel()
	cases := []struct{ db, want string }{
		{"/var/lib/agents/agents.db", "/var/lib/agents/agents.db"},
		{"postgres://agents:hunter2@db:5432/agents?sslmode=disable", "postgres://agents:xxxxx@db:5432/agents?sslmode=disable"},
		{"postgresql://db/agents?password=hunter2&user=a", "postgresql://db/agents?password=%5Bredacted%5D&user=a"},
		{"postgres://agents@db/agents", "postgres://agents@db/agents"},
	}
	for _, tc := range cases {
		r := &Resolved{DB: tc.db}
		if got := r.Paths().DB; got != tc.want {
			t.Errorf("Paths().DB for %q = %q, want %q", tc.db, got, tc.want)
		}
	}
	s := newSandbox(t)
	p := resolve(t, s.options(Flags{})).Paths()
	if p.AgentFiles == nil || p.AgentDirs == nil || p.DataDir == "" || p.ConfigDir == "" {
		t.Errorf("Paths() = %+v", p)
	}
}
