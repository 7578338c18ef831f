package bashtool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// echoed is what testdata/echo-args.sh reports about its own run.
type echoed struct {
	Argv  []string           `json:"argv"`
	Stdin string             `json:"stdin"`
	Cwd   string             `json:"cwd"`
	Env   map[string]*string `json:"env"`
	// Exported is the name of every variable in the environment.
	Exported []string `json:"exported"`
}

// argsOf is a call's arguments as the tool package hands them to Run.
func argsOf(t *testing.T, argsJSON string) map[string]json.RawMessage {
	t.Helper()
	var values map[string]json.RawMessage
	if err := json.Unmarshal([]byte(argsJSON), &values); err != nil {
		t.Fatalf("arguments %s: %v", argsJSON, err)
	}
	return values
}

func runEcho(t *testing.T, argsJSON string, env Env) echoed {
	t.Helper()
	return runEchoTool(t, mustDescribe(t, "echo-args.sh"), argsJSON, env)
}

func runEchoTool(t *testing.T, tool Tool, argsJSON string, env Env) echoed {
	t.Helper()
	res := tool.Run(context.Background(), argsOf(t, argsJSON), env)
	if res.IsError || res.ExitCode != 0 {
		t.Fatalf("Run(%s) failed: exit %d: %s", argsJSON, res.ExitCode, res.Text)
	}
	var got echoed
	if err := json.Unmarshal([]byte(res.Text), &got); err != nil {
		t.Fatalf("echo-args output is not JSON (%v): %s", err, res.Text)
	}
	return got
}

func TestRunPassesEachModeExactly(t *testing.T) {
	dir := t.TempDir()
	injected := filepath.Join(dir, "pwned")
	hostile := `it's "quoted" $(touch ` + injected + `) ; touch ` + injected + ` && echo $HOME ` + "`id`" + ` \ *`

	for _, tc := range []struct {
		name      string
		args      string
		wantArgv  []string
		wantStdin string
		wantToken *string
	}{
		{
			name:     "only the required positional",
			args:     `{"first": "hello world"}`,
			wantArgv: []string{"run", "hello world"},
		},
		{
			name: "every mode, declaration order whatever the JSON order",
			args: `{"last": "z", "body": "line one\nline two", "verbose": true, "ratio": 2.5, "count": 42,
				"eq": "a b", "flag": "x y", "first": "héllo ✓", "api-token": "s3cr3t"}`,
			wantArgv:  []string{"run", "héllo ✓", "--flag", "x y", "--eq=a b", "--count=42", "--ratio", "2.5", "--verbose=true", "z"},
			wantStdin: "line one\nline two\n",
			wantToken: ptr("s3cr3t"),
		},
		{
			name:     "shell syntax is never interpreted",
			args:     mustJSON(t, map[string]string{"first": hostile, "flag": hostile, "eq": hostile, "last": hostile}),
			wantArgv: []string{"run", hostile, "--flag", hostile, "--eq=" + hostile, hostile},
		},
		{
			name:     "values that look like options or are empty stay single words",
			args:     `{"first": "--help", "flag": "-n", "last": ""}`,
			wantArgv: []string{"run", "--help", "--flag", "-n", ""},
		},
		{
			name:     "null is an omitted optional argument",
			args:     `{"first": "a", "flag": null, "eq": null}`,
			wantArgv: []string{"run", "a"},
		},
		{
			name:     "an integer written as a float",
			args:     `{"first": "a", "count": 3.0}`,
			wantArgv: []string{"run", "a", "--count=3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runEcho(t, tc.args, Env{})
			if !reflect.DeepEqual(got.Argv, tc.wantArgv) {
				t.Errorf("argv =\n%q\nwant\n%q", got.Argv, tc.wantArgv)
			}
			if got.Stdin != tc.wantStdin {
				t.Errorf("stdin = %q, want %q", got.Stdin, tc.wantStdin)
			}
			if !reflect.DeepEqual(got.Env["API_TOKEN"], tc.wantToken) {
				t.Errorf("API_TOKEN = %v, want %v", deref(got.Env["API_TOKEN"]), deref(tc.wantToken))
			}
		})
	}
	if _, err := os.Stat(injected); err == nil {
		t.Error("a value was run by a shell: the injected command created its file")
	}
}

func TestRunEnvironment(t *testing.T) {
	// What the server itself inherited must not leak: secrets, and stale
	// values of the reserved variables.
	t.Setenv(EnvSessionID, "stale-session")
	t.Setenv(EnvToolCallID, "stale-call")
	t.Setenv("OPENAI_API_KEY", "sk-of-the-server")
	t.Setenv("EXTRA_VAR", "from the server")
	t.Setenv("API_TOKEN", "from the server")
	t.Setenv("PASSED_VAR", "from the server")
	t.Setenv("HOME", "/home/agents")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LC_TIME", "C")

	t.Run("only the base variables come from the server", func(t *testing.T) {
		got := runEcho(t, `{"first": "a"}`, Env{SessionID: "session-1", AgentSlug: "helper", ToolCallID: "call-7"})
		want := map[string]*string{
			"AGENT_SESSION_ID":   ptr("session-1"),
			"AGENT_SLUG":         ptr("helper"),
			"AGENT_TOOL_CALL_ID": ptr("call-7"),
			"API_TOKEN":          nil,
			"EXTRA_VAR":          nil,
			"PASSED_VAR":         nil,
		}
		if !reflect.DeepEqual(got.Env, want) {
			t.Errorf("env = %v, want %v", show(got.Env), show(want))
		}
		if slices.Contains(got.Exported, "OPENAI_API_KEY") {
			t.Error("OPENAI_API_KEY of the server reached the tool")
		}
		// Bash exports PWD, SHLVL and _ itself.
		allowed := []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_TIME", "TZ", "TMPDIR",
			EnvSessionID, EnvAgentSlug, EnvToolCallID, "PWD", "OLDPWD", "SHLVL", "_"}
		var leaked []string
		for _, name := range got.Exported {
			if !slices.Contains(allowed, name) {
				leaked = append(leaked, name)
			}
		}
		if len(leaked) > 0 {
			t.Errorf("the tool got %v from the server", leaked)
		}
		for _, name := range []string{"PATH", "HOME", "LANG", "LC_TIME"} {
			if !slices.Contains(got.Exported, name) {
				t.Errorf("the tool did not get %s; exported: %v", name, got.Exported)
			}
		}
	})
	t.Run("variables the tool passes on come from the server", func(t *testing.T) {
		tool := mustDescribe(t, "echo-args.sh")
		tool.PassEnv = []string{"PASSED_VAR", "NOT_SET_ANYWHERE", EnvSessionID}
		got := runEchoTool(t, tool, `{"first": "a"}`, Env{AgentSlug: "helper"})
		if deref(got.Env["PASSED_VAR"]) != "from the server" {
			t.Errorf("PASSED_VAR = %s, want the server's value", deref(got.Env["PASSED_VAR"]))
		}
		if slices.Contains(got.Exported, "NOT_SET_ANYWHERE") {
			t.Error("a passed variable the server does not have is set")
		}
		if got.Env[EnvSessionID] != nil {
			t.Errorf("%s = %s, want a reserved variable never taken from the server", EnvSessionID, deref(got.Env[EnvSessionID]))
		}
		if slices.Contains(got.Exported, "OPENAI_API_KEY") || got.Env["EXTRA_VAR"] != nil {
			t.Errorf("variables not passed on reached the tool: %v", got.Exported)
		}

		got = runEchoTool(t, tool, `{"first": "a"}`, Env{Extra: map[string]string{"PASSED_VAR": "from the caller"}})
		if deref(got.Env["PASSED_VAR"]) != "from the caller" {
			t.Errorf("PASSED_VAR = %s, want the caller's value to win", deref(got.Env["PASSED_VAR"]))
		}
	})
	t.Run("unknown call variables are unset, not inherited", func(t *testing.T) {
		got := runEcho(t, `{"first": "a"}`, Env{AgentSlug: "helper"})
		if got.Env["AGENT_SESSION_ID"] != nil || got.Env["AGENT_TOOL_CALL_ID"] != nil {
			t.Errorf("env = %v, want AGENT_SESSION_ID and AGENT_TOOL_CALL_ID unset", show(got.Env))
		}
	})
	t.Run("extra variables win over the model", func(t *testing.T) {
		got := runEcho(t, `{"first": "a", "api-token": "from the model"}`, Env{
			Extra: map[string]string{"EXTRA_VAR": "from the caller", "API_TOKEN": "from the caller"},
		})
		if deref(got.Env["EXTRA_VAR"]) != "from the caller" || deref(got.Env["API_TOKEN"]) != "from the caller" {
			t.Errorf("env = %v, want the caller's EXTRA_VAR and API_TOKEN", show(got.Env))
		}
	})
	t.Run("env-mode arguments are passed", func(t *testing.T) {
		got := runEcho(t, `{"first": "a", "api-token": "from the model"}`, Env{})
		if deref(got.Env["API_TOKEN"]) != "from the model" {
			t.Errorf("API_TOKEN = %q, want the model's value", deref(got.Env["API_TOKEN"]))
		}
	})
	t.Run("extra variables may not set reserved names", func(t *testing.T) {
		tool := mustDescribe(t, "echo-args.sh")
		res := tool.Run(context.Background(), argsOf(t, `{"first": "a"}`), Env{Extra: map[string]string{EnvAgentSlug: "spoof"}})
		if !res.IsError || !strings.Contains(res.Text, "AGENT_SLUG is reserved") {
			t.Errorf("Run = %+v, want an error about the reserved name", res)
		}
	})
}

func TestRunWorkingDirectory(t *testing.T) {
	t.Run("defaults to the script's directory", func(t *testing.T) {
		got := runEcho(t, `{"first": "a"}`, Env{})
		if got.Cwd != testdataPath(t, "") {
			t.Errorf("cwd = %q, want %q", got.Cwd, testdataPath(t, ""))
		}
	})
	t.Run("can be given", func(t *testing.T) {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		got := runEcho(t, `{"first": "a"}`, Env{WorkDir: dir})
		if got.Cwd != dir {
			t.Errorf("cwd = %q, want %q", got.Cwd, dir)
		}
	})
}

func TestRunRejectsBadArguments(t *testing.T) {
	tool := mustDescribe(t, "echo-args.sh")
	for _, tc := range []struct {
		name, args string
		want       []string
	}{
		{"missing required", `{}`, []string{`missing required argument "first" (string)`}},
		{"unknown argument", `{"first": "a", "frist": "b"}`, []string{`unknown argument "frist"`, "accepted arguments: first, flag, eq, count, ratio, verbose, body, api-token, last"}},
		{"string for an integer", `{"first": "a", "count": "3"}`, []string{`argument "count" must be an integer, got string`}},
		{"fraction for an integer", `{"first": "a", "count": 2.5}`, []string{`argument "count" must be an integer, got 2.5`}},
		{"number for a string", `{"first": 7}`, []string{`argument "first" must be a string, got number`}},
		{"string for a boolean", `{"first": "a", "verbose": "yes"}`, []string{`argument "verbose" must be a boolean, got string`}},
		{"object for a number", `{"first": "a", "ratio": {}}`, []string{`argument "ratio" must be a number, got object`}},
		{"NUL in argv", `{"first": "a\u0000b"}`, []string{`argument "first" must not contain a NUL character`}},
		{"several problems at once", `{"count": true, "zzz": 1}`, []string{`unknown argument "zzz"`, `missing required argument "first"`, `argument "count" must be an integer, got boolean`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tool.Run(context.Background(), argsOf(t, tc.args), Env{})
			if !res.IsError || res.ExitCode != -1 {
				t.Fatalf("Run = %+v, want an error result that never started the script", res)
			}
			for _, want := range tc.want {
				if !strings.Contains(res.Text, want) {
					t.Errorf("Text = %q, want it to contain %q", res.Text, want)
				}
			}
		})
	}
}

func TestRunAcceptsNoArgumentsForToolWithoutArgs(t *testing.T) {
	tool := mustDescribe(t, "dir/one.sh")
	for _, args := range []map[string]json.RawMessage{nil, {}} {
		res := tool.Run(context.Background(), args, Env{})
		if res.IsError || res.Text != "one\n" {
			t.Errorf("Run(%v) = %+v, want success with \"one\\n\"", args, res)
		}
	}
}

func TestRunNonZeroExitIsAnErrorResult(t *testing.T) {
	tool := mustDescribe(t, "fail.sh")
	res := tool.Run(context.Background(), nil, Env{})
	if !res.IsError || res.ExitCode != 3 {
		t.Fatalf("Run = %+v, want an error result with exit code 3", res)
	}
	want := "bash_fail failed: exit status 3\n--- stderr ---\nsomething broke: disk on fire\n--- stdout ---\npartial result"
	if res.Text != want {
		t.Errorf("Text =\n%s\nwant\n%s", res.Text, want)
	}
	if res.Stderr != "something broke: disk on fire\n" {
		t.Errorf("Stderr = %q", res.Stderr)
	}
}

func TestRunEmptyResultMessage(t *testing.T) {
	tool := mustDescribe(t, "empty-output.sh")
	res := tool.Run(context.Background(), nil, Env{})
	if res.IsError || res.Text != "No results." {
		t.Errorf("Run = %+v, want the empty-result message", res)
	}
}

func TestRunCapsOutput(t *testing.T) {
	tool := mustDescribe(t, "big-output.sh")
	tool.Limits = Limits{MaxStdout: 1000, MaxStderr: 100}

	t.Run("stdout under the cap is whole", func(t *testing.T) {
		res := tool.Run(context.Background(), argsOf(t, `{"bytes": 1000}`), Env{})
		if res.IsError || res.Truncated || res.Text != strings.Repeat("a", 1000) {
			t.Errorf("Run = IsError %v, Truncated %v, %d bytes; want exactly 1000 bytes", res.IsError, res.Truncated, len(res.Text))
		}
	})
	t.Run("stdout over the cap is cut with a note", func(t *testing.T) {
		res := tool.Run(context.Background(), argsOf(t, `{"bytes": 300000}`), Env{})
		want := strings.Repeat("a", 1000) + "\n[output truncated: 299000 of 300000 bytes cut, only the first 1000 bytes are shown]"
		if res.IsError || !res.Truncated || res.Text != want {
			t.Errorf("Run = IsError %v, Truncated %v, Text %.80q…%q", res.IsError, res.Truncated, res.Text, res.Text[max(0, len(res.Text)-90):])
		}
	})
	t.Run("stderr of a failure is cut with a note", func(t *testing.T) {
		res := tool.Run(context.Background(), argsOf(t, `{"bytes": 5000, "to-stderr": true}`), Env{})
		want := "bash_big_output failed: exit status 1\n--- stderr ---\n" + strings.Repeat("a", 100) +
			"\n[output truncated: 4900 of 5000 bytes cut, only the first 100 bytes are shown]"
		if !res.IsError || !res.Truncated || res.Text != want {
			t.Errorf("Run = IsError %v, Truncated %v, Text %q", res.IsError, res.Truncated, res.Text)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func ptr(s string) *string { return &s }

func deref(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

func show(env map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = deref(v)
	}
	return out
}
