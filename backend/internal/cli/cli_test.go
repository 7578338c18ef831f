package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/llm"
)

// testEnv is an environment with its own config and data directories, so
// no test reads the real user's files.
func testEnv(t *testing.T) (dir string, lookupEnv func(string) (string, bool)) {
	t.Helper()
	dir = t.TempDir()
	env := map[string]string{
		"HOME":            dir,
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		"XDG_DATA_HOME":   filepath.Join(dir, "data"),
		"TMPDIR":          dir,
	}
	return dir, func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// run runs the command line and returns its exit status and output.
func run(t *testing.T, lookupEnv func(string) (string, bool), args ...string) (int, string, string) {
	t.Helper()
	return runWithInput(t, lookupEnv, "", args...)
}

// checkRun reports how the run of a table's row named name differs
// from the row: its exit status wantCode, and stdout holding each of
// want and none of not. With another status it checks no output and
// returns false.
func checkRun(t *testing.T, name string, code int, out, errOut string, wantCode int, want, not []string) bool {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit status %d, want %d\nstdout: %s\nstderr: %s", name, code, wantCode, out, errOut)
		return false
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: output lacks %q:\n%s", name, w, out)
		}
	}
	for _, n := range not {
		if strings.Contains(out, n) {
			t.Errorf("%s: output shows %q:\n%s", name, n, out)
		}
	}
	return true
}

// runWithInput is run with stdin.
func runWithInput(t *testing.T, lookupEnv func(string) (string, bool), stdin string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := execute(ctx, args, strings.NewReader(stdin), &stdout, &stderr, lookupEnv, true)
	return code, stdout.String(), stderr.String()
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

const goodTool = `#!/usr/bin/env bash
case "$1" in
  describe) echo '{"slug": "ok", "description": "Works.", "args": []}' ;;
  run) echo fine ;;
esac
`

const brokenTool = `#!/usr/bin/env bash
case "$1" in
  describe) echo 'this is not JSON' ;;
esac
`

func agentJSON(slug, extra string) string {
	return `{"tag": "OpenAIAgentDescription", "contents": {"slug": "` + slug + `", "flavor": "OpenAIv1",
		"modelUrl": "http://127.0.0.1:1/v1", "apiKeyId": "test-key", "modelName": "m",
		"announce": "a test agent", "systemPrompt": ["You test."]` + extra + `}}`
}

func TestCheckReportsEachProblemAsFileFieldReason(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	good := filepath.Join(dir, "good")
	writeFile(t, filepath.Join(good, "good.json"), agentJSON("good", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)
	writeFile(t, filepath.Join(good, "tools", "ok"), goodTool, 0o755)

	bad := filepath.Join(dir, "bad")
	writeFile(t, filepath.Join(bad, "no-model.json"), `{"tag": "OpenAIAgentDescription", "contents": {"slug": "nomodel", "flavor": "OpenAIv1", "modelUrl": "http://x/v1", "apiKeyId": "k", "announce": "", "systemPrompt": []}}`, 0o644)
	writeFile(t, filepath.Join(bad, "tooly.json"), agentJSON("tooly", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)
	writeFile(t, filepath.Join(bad, "tools", "broken"), brokenTool, 0o755)
	writeFile(t, filepath.Join(bad, "syntax.json"), "{\"tag\": \n", 0o644)

	t.Run("problems", func(t *testing.T) {
		code, out, _ := run(t, env, "check", "--config", writeConfig(t, dir, "bad.agents.json", good, bad))
		if code != 1 {
			t.Fatalf("exit status = %d, want 1; output:\n%s", code, out)
		}
		for _, want := range []string{
			filepath.Join(bad, "no-model.json") + ": contents.modelName: ",
			filepath.Join(bad, "tooly.json") + ": contents.bashToolboxes[0]: " + filepath.Join(bad, "tools", "broken") + ": describe: ",
			filepath.Join(bad, "syntax.json") + ":1:9: ",
			"warning: " + filepath.Join(good, "good.json") + `: contents.apiKeyId: no key "test-key"`,
			"2 agents loaded, 3 problems, ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("clean", func(t *testing.T) {
		env := func(k string) (string, bool) {
			if k == "TEST_KEY" {
				return "a key", true
			}
			return env(k)
		}
		code, out, _ := run(t, env, "check", "--config", writeConfig(t, dir, "good.agents.json", good))
		if code != 0 || !strings.Contains(out, "1 agent loaded, 0 problems, 0 warnings") {
			t.Errorf("exit status = %d, output:\n%s\nwant 0 and no problem", code, out)
		}
	})
}

// writeConfig writes a config file naming agent directories.
func writeConfig(t *testing.T, dir, name string, agentDirs ...string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"agentsDirectories": agentDirs, "db": filepath.Join(dir, name+".db")})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	writeFile(t, path, string(b), 0o644)
	return path
}

func TestInitWritesAWorkingSkeletonAndKeepsExistingFiles(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	target := filepath.Join(dir, "project")

	code, out, errOut := run(t, env, "init", target)
	if code != 0 {
		t.Fatalf("init = %d: %s%s", code, out, errOut)
	}
	for _, f := range []string{"agents.json", "agents/example.json", "agents/tools/hello", "offline-rules.json"} {
		if !strings.Contains(out, "created "+filepath.Join(target, f)) {
			t.Errorf("init did not report creating %s:\n%s", f, out)
		}
	}
	if !strings.Contains(out, "  cd "+target+"\n") {
		t.Errorf("init into another folder does not say to go there first:\n%s", out)
	}
	info, err := os.Stat(filepath.Join(target, "agents", "tools", "hello"))
	if err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Fatalf("the bash tool is not executable: %v %v", info, err)
	}

	// What init wrote passes check: the agent loads and its tool describes.
	code, out, _ = run(t, env, "check", "--config", filepath.Join(target, "agents.json"))
	if code != 0 || !strings.Contains(out, "1 agent loaded, 0 problems") {
		t.Fatalf("check of the skeleton = %d:\n%s", code, out)
	}

	// A second init overwrites nothing.
	mine := filepath.Join(target, "agents", "example.json")
	writeFile(t, mine, "my own edits", 0o644)
	code, out, _ = run(t, env, "init", target)
	if code != 0 || !strings.Contains(out, "kept    "+mine) || strings.Contains(out, "created") {
		t.Errorf("second init = %d:\n%s\nwant every file kept", code, out)
	}
	if b, _ := os.ReadFile(mine); string(b) != "my own edits" {
		t.Errorf("init overwrote %s: %q", mine, b)
	}
}

// init writes in the folder it runs in and says what to run next; what
// it says works at once, offline: check says the agent talks to the
// offline model, and run gets the example agent's scripted answer, its
// tool called.
func TestInitWritesHereAndItsNextCommandsWorkOffline(t *testing.T) {
	dir, env := testEnv(t)
	here := filepath.Join(dir, "here")
	if err := os.MkdirAll(here, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(here)
	code, out, errOut := run(t, env, "init")
	if code != 0 {
		t.Fatalf("init = %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"created agents.json", "created offline-rules.json", "created " + filepath.Join("agents", "example.json"),
		"next:", `agents run --offline-model offline-rules.json "hello"`, "OPENAI_API_KEY"} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "config", "agents", "agents.json")); err == nil {
		t.Errorf("init wrote into the user config directory too")
	}

	code, out, _ = run(t, env, "check", "--offline-model", "offline-rules.json")
	if code != 0 || !strings.Contains(out, `example: no key "openai": talks to the offline model (offline-rules.json)`) ||
		strings.Contains(out, "cannot reach its model") || !strings.Contains(out, "0 warnings") {
		t.Errorf("check --offline-model = %d:\n%s", code, out)
	}
	// Without it, the missing key is a warning, as before.
	if _, out, _ = run(t, env, "check"); !strings.Contains(out, "cannot reach its model") {
		t.Errorf("check without an offline model does not warn of the missing key:\n%s", out)
	}

	code, stdout, stderr := run(t, env, "run", "--offline-model", "offline-rules.json", "hello")
	if code != 0 || !strings.Contains(stdout, "(offline) My tool says: Hello, you! Edit offline-rules.json") || !strings.Contains(stderr, "→ bash_hello") {
		t.Errorf("run right after init = %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}

// A broken rules file is a problem of check's, named.
func TestCheckReadsTheOfflineRulesFile(t *testing.T) {
	dir, env := testEnv(t)
	t.Chdir(dir)
	if code, out, _ := run(t, env, "init"); code != 0 {
		t.Fatal(out)
	}
	writeFile(t, filepath.Join(dir, "bad-rules.json"), `{"rules": [{"match": {"nope": 1}}]}`, 0o644)
	code, out, _ := run(t, env, "check", "--offline-model", "bad-rules.json")
	if code != 1 || !strings.Contains(out, "bad-rules.json: the offline model's rules:") {
		t.Errorf("check with a broken rules file = %d:\n%s", code, out)
	}
}

func TestPathsPrintsWhatTheConfigurationUses(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	// An explicit, empty config file: no search up from the test's
	// directory, and the defaults show.
	cfg := filepath.Join(dir, "empty.json")
	writeFile(t, cfg, "{}", 0o644)
	code, out, errOut := run(t, env, "paths", "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("paths = %d: %s", code, errOut)
	}
	var p struct {
		ConfigDir, DataDir, DB, TUILog string
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("paths --json: %v\n%s", err, out)
	}
	if p.ConfigDir != filepath.Join(dir, "config", "agents") || p.DB != filepath.Join(dir, "data", "agents", "agents.db") ||
		p.TUILog != filepath.Join(dir, "data", "agents", "tui.log") {
		t.Errorf("paths = %+v", p)
	}
	code, out, _ = run(t, env, "paths", "--config", cfg)
	if code != 0 || !strings.Contains(out, "database") || !strings.Contains(out, p.DB) || !strings.Contains(out, cfg) || !strings.Contains(out, p.TUILog) {
		t.Errorf("paths = %d:\n%s", code, out)
	}
}

// Every command that may start a server in-process takes the model call
// limits, and they reach the resolved configuration.
func TestModelLimitFlags(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	cfg := filepath.Join(dir, "agents.json")
	writeFile(t, cfg, `{"maxModelCallTime": "5m"}`, 0o644)
	for _, command := range [][]string{{"serve"}, {"tui"}, {"run"}, {"sessions", "ls"}, {"agents", "ls"}} {
		t.Run(strings.Join(command, " "), func(t *testing.T) {
			t.Parallel()
			a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env}
			args := slices.Concat(command, []string{"--config", cfg, "--max-model-output-bytes", "1000"})
			cmd, rest, err := a.rootCommand().Find(args)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatalf("%s: %v", cmd.CommandPath(), err)
			}
			res, err := a.resolve()
			if err != nil {
				t.Fatal(err)
			}
			want := llm.Limits{MaxOutputBytes: 1000, MaxCallTime: 5 * time.Minute}
			if res.ModelLimits != want {
				t.Errorf("limits %+v, want %+v", res.ModelLimits, want)
			}
		})
	}

	code, _, errOut := run(t, env, "serve", "--config", cfg, "--max-model-call-time", "-1s")
	if code != 1 || !strings.Contains(errOut, "--max-model-call-time -1s: must be positive") {
		t.Errorf("serve with a negative call time = %d: %s", code, errOut)
	}
}

// An MCP server that cannot start is a problem check names, with the
// agent that declares it; the agent's other tools still load.
func TestCheckNamesAnMCPServerThatDoesNotStart(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	missing := filepath.Join(dir, "no-such-server")
	writeFile(t, filepath.Join(dir, "mcp.json"), agentJSON("mcpuser",
		`, "mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "files", "executable": "`+missing+`", "args": []}}]`), 0o644)
	code, out, _ := run(t, env, "check", "--config", writeConfig(t, dir, "mcp.agents.json", dir))
	if code != 1 {
		t.Fatalf("exit status = %d, want 1; output:\n%s", code, out)
	}
	for _, want := range []string{"mcp.json", "files", "1 agent loaded, 1 problem"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
