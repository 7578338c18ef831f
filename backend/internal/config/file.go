package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/session"
)

// settings is what a config file says, with paths made absolute.
type settings struct {
	AgentsFiles       []string
	AgentsDirectories []string
	DB                string
	Bind              string
	Port              int
	APIKeysFile       string
	// StoredAgentToolDirs are where stored agents' programs may lie.
	StoredAgentToolDirs []string
	// The model call limits; zero when the file does not set them.
	MaxModelOutputBytes int64
	MaxModelCallTime    time.Duration
	Prices              map[string]session.Price
	Budgets             Budgets
	Webhooks            Webhooks
	Models              map[string]catalog.Limits
	Compaction          catalog.Compaction
}

const durationWanted = `a duration such as "10m" or "90s"`

// agentsExeSetting reports the agents-exe config fields about its own
// features (logs, sessions in files, prompt aliases, the TUI keymap). They
// are accepted silently so that one file can serve both programs.
func agentsExeSetting(key string) bool {
	switch key {
	case "agentsConfigDir", "agentsLogs", "promptAliases", "selfDescribeSlug",
		"selfDescribeDescription", "keymap", "sessions":
		return true
	}
	return false
}

// readSettings reads the config file at path. Relative paths in it are
// relative to its directory; a leading "~/" is the home directory.
func readSettings(path string, home func() (string, error)) (settings, []*agentfile.Error, error) {
	var s settings
	data, err := os.ReadFile(path)
	if err != nil {
		return s, nil, fmt.Errorf("config file %s: %w", path, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		if jerr := agentfile.JSONError(path, data, err); jerr.Line > 0 {
			return s, nil, jerr
		}
		return s, nil, &agentfile.Error{File: path, Reason: "must be a JSON object"}
	}
	if _, tag := fields["tag"]; tag {
		if _, contents := fields["contents"]; contents {
			return s, nil, &agentfile.Error{File: path, Reason: "this is an agent file, not a config file (list it in agentsFiles instead)"}
		}
	}

	r := fieldReader{file: path, fields: fields, seen: map[string]bool{}}
	r.read("agentsFiles", &s.AgentsFiles, "a list of paths")
	r.read("agentsDirectories", &s.AgentsDirectories, "a list of paths")
	r.read("db", &s.DB, "a string (a SQLite path or a postgres:// DSN)")
	r.read("bind", &s.Bind, "a string (an address to listen on)")
	r.read("port", &s.Port, "a whole number")
	r.read("apiKeysFile", &s.APIKeysFile, "a string (a path)")
	r.read("storedAgentToolDirs", &s.StoredAgentToolDirs, "a list of paths")
	r.read("maxModelOutputBytes", &s.MaxModelOutputBytes, "a whole number of bytes")
	r.readBudgets(&s)
	r.readWebhooks(&s)
	r.readCompaction(&s)
	r.readModels(&s)
	var callTime string
	r.read("maxModelCallTime", &callTime, durationWanted)
	if r.err == nil && callTime != "" {
		if s.MaxModelCallTime, err = time.ParseDuration(callTime); err != nil {
			r.err = &agentfile.Error{File: path, Field: "maxModelCallTime", Reason: "must be " + durationWanted}
		}
	}
	switch {
	case r.err != nil:
	case s.Port < 0 || s.Port > 65535:
		r.err = &agentfile.Error{File: path, Field: "port", Reason: fmt.Sprintf("must be between 1 and 65535, got %d", s.Port)}
	case s.MaxModelOutputBytes < 0:
		r.err = &agentfile.Error{File: path, Field: "maxModelOutputBytes", Reason: fmt.Sprintf("must be positive, got %d", s.MaxModelOutputBytes)}
	case s.MaxModelCallTime < 0:
		r.err = &agentfile.Error{File: path, Field: "maxModelCallTime", Reason: fmt.Sprintf("must be positive, got %s", s.MaxModelCallTime)}
	}
	if r.err != nil {
		return settings{}, nil, r.err
	}

	dir := filepath.Dir(path)
	resolve := func(p string) (string, error) { return configPath(dir, p, home) }
	if err := mapPaths(path, "agentsFiles", s.AgentsFiles, resolve); err != nil {
		return settings{}, nil, err
	}
	if err := mapPaths(path, "agentsDirectories", s.AgentsDirectories, resolve); err != nil {
		return settings{}, nil, err
	}
	if err := mapPaths(path, "storedAgentToolDirs", s.StoredAgentToolDirs, resolve); err != nil {
		return settings{}, nil, err
	}
	for _, f := range []struct {
		field string
		value *string
	}{{"db", &s.DB}, {"apiKeysFile", &s.APIKeysFile}} {
		if *f.value == "" || isDSN(*f.value) {
			continue
		}
		if *f.value, err = resolve(*f.value); err != nil {
			return settings{}, nil, &agentfile.Error{File: path, Field: f.field, Reason: err.Error()}
		}
	}
	return s, r.unknown(), nil
}

// fieldReader decodes config fields one by one, keeping the first error.
type fieldReader struct {
	file   string
	fields map[string]json.RawMessage
	seen   map[string]bool
	err    *agentfile.Error
}

func (r *fieldReader) read(key string, into any, want string) {
	r.seen[key] = true
	raw, ok := r.fields[key]
	if !ok || r.err != nil {
		return
	}
	if err := json.Unmarshal(raw, into); err != nil {
		r.err = &agentfile.Error{File: r.file, Field: key, Reason: "must be " + want}
	}
}

// unknown reports the fields neither this server nor agents-exe knows.
func (r *fieldReader) unknown() []*agentfile.Error {
	var keys []string
	for key := range r.fields {
		if !r.seen[key] && !agentsExeSetting(key) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	var warnings []*agentfile.Error
	for _, key := range keys {
		warnings = append(warnings, &agentfile.Error{File: r.file, Field: key, Reason: "unknown field; ignored"})
	}
	return warnings
}

func mapPaths(file, field string, paths []string, resolve func(string) (string, error)) error {
	for i, p := range paths {
		if strings.TrimSpace(p) == "" {
			return &agentfile.Error{File: file, Field: fmt.Sprintf("%s[%d]", field, i), Reason: "must not be empty"}
		}
		abs, err := resolve(p)
		if err != nil {
			return &agentfile.Error{File: file, Field: fmt.Sprintf("%s[%d]", field, i), Reason: err.Error()}
		}
		paths[i] = abs
	}
	return nil
}

// configPath resolves a path written in a config file: "~/" is the home
// directory, other relative paths are relative to the file's directory.
func configPath(dir, p string, home func() (string, error)) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		h, err := home()
		if err != nil {
			return "", fmt.Errorf("cannot expand ~: %w", err)
		}
		return filepath.Join(h, strings.TrimPrefix(p, "~")), nil
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	return filepath.Join(dir, p), nil
}

// budgetSettings is the config file's "budgets" object.
type budgetSettings struct {
	// OwnerDefault is the budget of every owner that has none of its own.
	OwnerDefault *ownerBudgetSetting `json:"owner_default"`
	// ReserveTokens is the output a model call reserves of a budget when
	// its model's maximum output is not known; see Budgets.
	ReserveTokens *int64 `json:"reserve_tokens"`
}

type ownerBudgetSetting struct {
	Tokens     *int64   `json:"tokens"`
	CostUSD    *float64 `json:"cost_usd"`
	Period     string   `json:"period"`
	AutoResume bool     `json:"auto_resume"`
}

// decodeStrict decodes one config field, refusing fields it does not
// know: a misspelt price or limit must not pass silently.
func decodeStrict(raw json.RawMessage, into any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// readBudgets reads "prices" and "budgets".
func (r *fieldReader) readBudgets(s *settings) {
	for _, key := range []string{"prices", "budgets"} {
		r.seen[key] = true
	}
	if r.err != nil {
		return
	}
	if raw, ok := r.fields["prices"]; ok {
		if err := decodeStrict(raw, &s.Prices); err != nil {
			r.err = &agentfile.Error{File: r.file, Field: "prices", Reason: `must map model names to {"input_per_mtok", "output_per_mtok", "cached_input_per_mtok"} in US dollars per million tokens: ` + err.Error()}
			return
		}
		for model, p := range s.Prices {
			for _, f := range []struct {
				name  string
				price float64
			}{{"input_per_mtok", p.InputPerMTok}, {"output_per_mtok", p.OutputPerMTok}, {"cached_input_per_mtok", p.CachedInputPerMTok}} {
				if err := session.CheckDollars(f.price); err != nil {
					r.err = &agentfile.Error{File: r.file, Field: "prices." + model, Reason: f.name + " " + err.Error()}
					return
				}
			}
		}
	}
	raw, ok := r.fields["budgets"]
	if !ok {
		return
	}
	var b budgetSettings
	if err := decodeStrict(raw, &b); err != nil {
		r.err = &agentfile.Error{File: r.file, Field: "budgets", Reason: `must be {"owner_default": {"tokens", "cost_usd", "period", "auto_resume"}, "reserve_tokens"}: ` + err.Error()}
		return
	}
	if b.ReserveTokens != nil {
		if *b.ReserveTokens < 0 {
			r.err = &agentfile.Error{File: r.file, Field: "budgets.reserve_tokens", Reason: "must not be negative"}
			return
		}
		s.Budgets.ReserveTokens = *b.ReserveTokens
	}
	if d := b.OwnerDefault; d != nil {
		ob, err := ownerBudget(d)
		if err != nil {
			r.err = &agentfile.Error{File: r.file, Field: "budgets.owner_default", Reason: err.Error()}
			return
		}
		s.Budgets.OwnerDefault = &ob
	}
}

func ownerBudget(d *ownerBudgetSetting) (session.OwnerBudget, error) {
	ob := session.OwnerBudget{Source: "default", Period: session.Period(d.Period), Budget: session.Budget{AutoResume: d.AutoResume}}
	switch ob.Period {
	case "":
		ob.Period = session.PeriodTotal
	case session.PeriodDay, session.PeriodMonth, session.PeriodTotal:
	default:
		return ob, fmt.Errorf(`period must be "day", "month" or "total", got %q`, d.Period)
	}
	if d.Tokens != nil {
		if *d.Tokens < 0 {
			return ob, fmt.Errorf("tokens must not be negative")
		}
		ob.Budget.Tokens = d.Tokens
	}
	if d.CostUSD != nil {
		if err := session.CheckDollars(*d.CostUSD); err != nil {
			return ob, fmt.Errorf("cost_usd %w", err)
		}
		c := session.DollarsToNanos(*d.CostUSD)
		ob.Budget.Cost = &c
	}
	return ob, nil
}

// webhookSettings is the config file's "webhooks" object.
type webhookSettings struct {
	AllowPrivate bool     `json:"allow_private"`
	AllowCIDRs   []string `json:"allow_cidrs"`
	Timeout      string   `json:"timeout"`
	Concurrency  int      `json:"concurrency"`
	RetryFor     string   `json:"retry_for"`
	RetryBase    string   `json:"retry_base"`
	RetryMax     string   `json:"retry_max"`
	DisableAfter string   `json:"disable_after"`
}

// readWebhooks reads "webhooks".
func (r *fieldReader) readWebhooks(s *settings) {
	r.seen["webhooks"] = true
	raw, ok := r.fields["webhooks"]
	if !ok || r.err != nil {
		return
	}
	fail := func(field, reason string) {
		r.err = &agentfile.Error{File: r.file, Field: "webhooks" + field, Reason: reason}
	}
	var w webhookSettings
	if err := decodeStrict(raw, &w); err != nil {
		fail("", `must be {"allow_private", "allow_cidrs", "timeout", "concurrency", "retry_for", "retry_base", "retry_max", "disable_after"}: `+err.Error())
		return
	}
	s.Webhooks.AllowPrivate = w.AllowPrivate
	for i, c := range w.AllowCIDRs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			fail(fmt.Sprintf(".allow_cidrs[%d]", i), fmt.Sprintf("must be an address range such as 10.0.0.0/8 or fd00::/8, got %q", c))
			return
		}
		s.Webhooks.AllowCIDRs = append(s.Webhooks.AllowCIDRs, p.Masked())
	}
	if w.Concurrency < 0 {
		fail(".concurrency", "must not be negative")
		return
	}
	s.Webhooks.Concurrency = w.Concurrency
	for _, d := range []struct {
		name  string
		value string
		into  *time.Duration
	}{
		{"timeout", w.Timeout, &s.Webhooks.Timeout},
		{"retry_for", w.RetryFor, &s.Webhooks.RetryFor},
		{"retry_base", w.RetryBase, &s.Webhooks.RetryBase},
		{"retry_max", w.RetryMax, &s.Webhooks.RetryMax},
		{"disable_after", w.DisableAfter, &s.Webhooks.DisableAfter},
	} {
		if d.value == "" {
			continue
		}
		v, err := time.ParseDuration(d.value)
		if err != nil || v <= 0 {
			fail("."+d.name, "must be a positive duration such as \"10s\" or \"72h\", got "+strconv.Quote(d.value))
			return
		}
		*d.into = v
	}
}
