package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// legacyAgent is an agent file with a field of the agents-exe format this
// server does not implement and a misspelt one: it loads, with a warning
// for each.
func legacyAgent(slug string) string {
	return agentJSON(slug, `, "executionMode": "asynchronous", "maxStep": 3`)
}

var legacyWarnings = []string{
	`contents.executionMode: not supported by this server; ignored`,
	`contents.maxStep: unknown field; ignored (did you mean "maxSteps"?)`,
}

// A LuaToolbox loads with no warning and offers its tool.
func TestCheckAndShowOfALuaToolbox(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	file := filepath.Join(dir, "agents", "lua.json")
	writeFile(t, file, agentJSON("lua", `, "builtinToolboxes": [{"tag": "LuaToolbox", "contents": {"name": "lua", "description": "Run Lua."}}]`), 0o644)
	withKey := func(k string) (string, bool) {
		if k == "TEST_KEY" {
			return "a key", true
		}
		return env(k)
	}
	code, out, _ := run(t, withKey, "check", "--agent-file", file)
	if code != 0 || !strings.Contains(out, "0 problems, 0 warnings") {
		t.Errorf("check = %d:\n%s", code, out)
	}
	code, out, _ = run(t, withKey, "agents", "show", "lua", "--agent-file", file, "--db", filepath.Join(dir, "a.db"))
	if code != 0 || !strings.Contains(out, "lua_lua_execute") {
		t.Errorf("agents show = %d:\n%s", code, out)
	}
}

func TestCheckPrintsTheWarningsOfAgentFiles(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agents := filepath.Join(dir, "agents")
	file := filepath.Join(agents, "legacy.json")
	writeFile(t, file, legacyAgent("legacy"), 0o644)
	withKey := func(k string) (string, bool) {
		if k == "TEST_KEY" {
			return "a key", true
		}
		return env(k)
	}

	code, out, _ := run(t, withKey, "check", "--config", writeConfig(t, dir, "agents.json", agents))
	if code != 0 {
		t.Fatalf("exit status = %d, want 0 (warnings do not fail a check); output:\n%s", code, out)
	}
	for _, w := range legacyWarnings {
		if want := "warning: " + file + ": " + w + "\n"; !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if want := "1 agent loaded, 0 problems, 2 warnings\n"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// serve logs each warning of an agent file once, at WARN, with the file.
func TestServeLogsTheWarningsOfAgentFilesAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "legacy.json")
	writeFile(t, file, legacyAgent("legacy"), 0o644)
	p := startServe(t, dir, "--agent-file", file, "--db", filepath.Join(dir, "agents.db"))

	got := loadLog(p.stderr.String(), func(msg string) bool { return msg == "agent file warning" })
	if len(got) != len(legacyWarnings) {
		t.Fatalf("%d agent file warnings logged, want %d:\n%s", len(got), len(legacyWarnings), p.stderr)
	}
	for i, w := range legacyWarnings {
		// The file is shown relative to the working directory, as
		// every load problem is.
		e := got[i]
		if e.Level != "WARN" || e.File != "legacy.json" || e.Field+": "+e.Problem != w {
			t.Errorf("logged %+v, want a WARN about %s: %s", e, file, w)
		}
	}
}

// A tokens file others can read is worth a warning only when it holds
// tokens: sha256 digests give a reader nothing to present.
func TestServeWarnsOfAReadableTokensFileOnlyWhenItHoldsTokens(t *testing.T) {
	t.Parallel()
	const warning = "the auth tokens file is readable by every user"
	for _, c := range []struct {
		name, entry string
		warned      bool
	}{
		{"digests", `{"sha256": "` + strings.Repeat("ab", 32) + `", "owner": "ops"}`, false},
		{"tokens", `{"token": "a-token-of-sixteen-or-more", "owner": "ops"}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tokens := filepath.Join(dir, "tokens.json")
			writeFile(t, tokens, `{"tokens": [`+c.entry+`]}`, 0o644)
			agent := filepath.Join(dir, "a.json")
			writeFile(t, agent, agentJSON("a", ""), 0o644)
			p := startServe(t, dir, "--auth-tokens", tokens, "--agent-file", agent, "--db", filepath.Join(dir, "agents.db"))
			if got := strings.Contains(p.stderr.String(), warning); got != c.warned {
				t.Errorf("warned %v, want %v:\n%s", got, c.warned, p.stderr)
			}
		})
	}
}

// With a price table, check warns about each model the agents use that it
// does not price: their calls cost nothing.
func TestCheckWarnsAboutModelsWithoutAPrice(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agents := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agents, "a.json"), agentJSON("a", ""), 0o644)
	config := filepath.Join(dir, "agents.json")
	writeFile(t, config, `{"agentsDirectories": ["agents"], "db": "agents.db", "prices": {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}}`, 0o644)
	withKey := func(k string) (string, bool) {
		if k == "TEST_KEY" {
			return "a key", true
		}
		return env(k)
	}
	code, out, _ := run(t, withKey, "check", "--config", config)
	if code != 0 {
		t.Fatalf("exit status = %d, want 0; output:\n%s", code, out)
	}
	if want := `warning: ` + config + `: prices: model "m" (agent a) has no price: its calls cost nothing` + "\n"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// serve logs each load problem with its file and field, and does not say
// the file was not loaded when it was: a tool folder that is missing
// leaves its agent loaded, without those tools.
func TestServeLogsLoadProblemsWithTheirFileAndField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "desk.json")
	writeFile(t, file, `{"tag": "OpenAIAgentDescription", "contents": {"slug": "desk", "flavor": "OpenAIv1",
		"modelUrl": "http://127.0.0.1:1/v1", "modelName": "m", "toolDirectory": "tools"}}`, 0o644)
	p := startServe(t, dir, "--agent-file", file, "--db", filepath.Join(dir, "agents.db"))

	got := loadLog(p.stderr.String(), func(msg string) bool { return strings.Contains(msg, "agent file") && msg != "agent file warning" })
	if len(got) != 1 {
		t.Fatalf("%d load problems logged, want 1:\n%s", len(got), p.stderr)
	}
	if e := got[0]; e.Msg != "agent file problem" || e.Level != "WARN" || e.File != "desk.json" || e.Field != "contents.toolDirectory" || e.Problem == "" {
		t.Errorf("logged %+v, want an agent file problem of desk.json's contents.toolDirectory", e)
	}
}

// loadLogEntry is a line serve logs about an agent file.
type loadLogEntry struct {
	Level   string `json:"level"`
	Msg     string `json:"msg"`
	File    string `json:"file"`
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

// loadLog reads the JSON log lines of stderr whose message keep takes.
func loadLog(stderr string, keep func(msg string) bool) []loadLogEntry {
	var got []loadLogEntry
	for _, line := range strings.Split(stderr, "\n") {
		var e loadLogEntry
		if json.Unmarshal([]byte(line), &e) == nil && keep(e.Msg) {
			got = append(got, e)
		}
	}
	return got
}
