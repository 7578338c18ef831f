package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// runScript is a two-step run: a tool call, then an answer quoting it.
func runScript() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{UserContains: "explode"}, Reply: fakellm.Reply{Error: &fakellm.HTTPError{Status: 400, Message: "bad request from the model"}}},
		{Match: fakellm.Match{AssistantMessages: new(0)}, Reply: fakellm.Reply{Text: "Checking.", ToolCalls: []fakellm.ToolCall{{Name: "bash_ok", Arguments: json.RawMessage(`{}`)}}}},
		{Match: fakellm.Match{AssistantMessages: new(1)}, Reply: fakellm.Reply{Text: "The tool said {{last_tool_result}}", ChunkSize: 3}},
	}}
}

func TestRunStreamsTheAnswerAndExitsZero(t *testing.T) {
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, runScript())
	writeFile(t, filepath.Join(dir, "agents", "tools", "ok"), goodTool, 0o755)
	agent := filepath.Join(dir, "agents", "runner.json")
	writeFile(t, agent, agentJSON("runner", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)

	code, stdout, stderr := run(t, env, "run", "--agent-file", agent, "-a", "runner", "--offline-model", model.URL(), "please", "check")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if want := "Checking.\nThe tool said fine\n"; stdout != want {
		t.Errorf("stdout = %q, want %q", stdout, want)
	}
	if !strings.Contains(stderr, "→ bash_ok {}") {
		t.Errorf("stderr = %q, want the tool call reported", stderr)
	}
	if reqs := model.Requests(); len(reqs) != 2 || reqs[0].LastUserText() != "please check" {
		t.Errorf("model saw %d requests, first prompt %q", len(reqs), reqs[0].LastUserText())
	}
}

func TestRunReportsAFailedRunWithANonZeroExit(t *testing.T) {
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, runScript())
	agent := filepath.Join(dir, "agents", "runner.json")
	writeFile(t, agent, agentJSON("runner", ""), 0o644)

	code, _, stderr := run(t, env, "run", "--agent-file", agent, "-a", "runner", "--offline-model", model.URL(), "explode")
	if code != exitRunFailed || !strings.Contains(stderr, "bad request from the model") {
		t.Errorf("exit %d, stderr %q: want %d and the model's error", code, stderr, exitRunFailed)
	}
	code, _, stderr = run(t, env, "run", "--agent-file", agent, "-a", "nobody", "hi")
	if code != 1 || !strings.Contains(stderr, `unknown agent "nobody"`) {
		t.Errorf("unknown agent: exit %d, stderr %q", code, stderr)
	}
	other := filepath.Join(dir, "agents", "other.json")
	writeFile(t, other, agentJSON("other", ""), 0o644)
	code, _, stderr = run(t, env, "run", "--agent-file", agent, "--agent-file", other, "hi")
	if want := "-a SLUG is required: the server has 2 agents: other, runner"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("no agent of two: exit %d, stderr %q, want %q", code, stderr, want)
	}
}

// Without -a the only agent runs; "-" reads the prompt from stdin.
func TestRunTakesTheOnlyAgentAndAPromptFromStdin(t *testing.T) {
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "you said {{last_user}}"}})
	agent := filepath.Join(dir, "agents", "runner.json")
	writeFile(t, agent, agentJSON("runner", ""), 0o644)

	code, stdout, stderr := runWithInput(t, env, "two\nlines\n", "run", "--agent-file", agent, "--offline-model", model.URL(), "-")
	if code != 0 || stdout != "you said two\nlines\n" {
		t.Errorf("run - = %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runWithInput(t, env, "\n", "run", "--agent-file", agent, "--offline-model", model.URL(), "-")
	if code != 1 || !strings.Contains(stderr, "the prompt on stdin is empty") {
		t.Errorf("run - with nothing = %d, %q", code, stderr)
	}
}

// A run refused for want of params names --params-file, and runs with it.
func TestRunNamesParamsFile(t *testing.T) {
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	agent := filepath.Join(dir, "agents", "vault.json")
	writeFile(t, agent, agentJSON("vault", `, "params": [{"name": "API_TOKEN", "description": "a token", "required": true}]`), 0o644)

	code, _, stderr := run(t, env, "run", "--agent-file", agent, "--offline-model", model.URL(), "hi")
	if code != 1 || !strings.Contains(stderr, "API_TOKEN") || !strings.Contains(stderr, "--params-file FILE") {
		t.Errorf("run without params = %d, %q; want the param and --params-file named", code, stderr)
	}
	params := filepath.Join(dir, "params.json")
	writeFile(t, params, `{"API_TOKEN": "t0k3n"}`, 0o600)
	code, stdout, stderr := run(t, env, "run", "--agent-file", agent, "--offline-model", model.URL(), "--params-file", params, "hi")
	if code != 0 || stdout != "ok\n" {
		t.Errorf("run --params-file = %d, %q, %q", code, stdout, stderr)
	}
}

func TestVersionFlagAndCommandAgree(t *testing.T) {
	t.Parallel()
	_, env := testEnv(t)
	code, flag, _ := run(t, env, "--version")
	_, command, _ := run(t, env, "version")
	if code != 0 || flag != "agents "+Version+"\n" || flag != command {
		t.Errorf("--version = %d %q, version %q", code, flag, command)
	}
}

// termBuffer is output that says it is a terminal.
type termBuffer struct{ bytes.Buffer }

func (*termBuffer) IsTerminal() bool { return true }

// A model's answer printed on a terminal cannot drive it: the clipboard
// write (OSC 52), the DCS query and the cursor move in it are cleaned
// away, on stdout and on stderr. Into a pipe the text goes as it came.
func TestRunCleansEscapeSequencesOnATerminal(t *testing.T) {
	const hostile = "\x1b]52;c;c2VjcmV0\x07safe \x1bP+q544e\x1b\\text\x1b[2J"
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: new(0)}, Reply: fakellm.Reply{Text: hostile, ToolCalls: []fakellm.ToolCall{{Name: "bash_ok", Arguments: json.RawMessage(`{}`)}}}},
	}, Default: &fakellm.Reply{Text: "done " + hostile}})
	writeFile(t, filepath.Join(dir, "agents", "tools", "ok"), goodTool, 0o755)
	agent := filepath.Join(dir, "agents", "runner.json")
	writeFile(t, agent, agentJSON("runner", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)
	args := []string{"run", "--agent-file", agent, "-a", "runner", "--offline-model", model.URL(), "go"}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr termBuffer
	if code := execute(ctx, args, strings.NewReader(""), &stdout, &stderr, env, true); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if want := "safe text\ndone safe text\n"; stdout.String() != want {
		t.Errorf("stdout on a terminal = %q, want %q", stdout.String(), want)
	}
	if strings.ContainsAny(stderr.String(), "\x1b\x07") {
		t.Errorf("stderr on a terminal holds control characters: %q", stderr.String())
	}

	code, piped, _ := run(t, env, args...)
	if code != 0 || !strings.Contains(piped, hostile) {
		t.Errorf("stdout into a pipe = %q (exit %d), want the text as the model wrote it", piped, code)
	}
}

// Without -a, the only agent of the agent files runs even when agents
// are stored beside it: agents init's example keeps answering `agents
// run "…"` once the user stores an agent of their own, which -a names.
func TestRunTakesTheOnlyFileAgentBesideStoredOnes(t *testing.T) {
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "you said {{last_user}}"}})
	agent := filepath.Join(dir, "agents", "runner.json")
	writeFile(t, agent, agentJSON("runner", ""), 0o644)
	stored := filepath.Join(dir, "notes.json")
	writeFile(t, stored, agentJSON("notes", ""), 0o644)
	server := []string{"--agent-file", agent, "--offline-model", model.URL()}

	if code, out, errOut := run(t, env, "agents", "create", "-f", stored, "--agent-file", agent); code != 0 {
		t.Fatalf("agents create = %d: %s%s", code, out, errOut)
	}
	code, stdout, stderr := run(t, env, append([]string{"run", "--budget-tokens", "50000", "hello"}, server...)...)
	if code != 0 || stdout != "you said hello\n" {
		t.Errorf("run without -a beside a stored agent = %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, env, append([]string{"run", "-a", "notes", "hi"}, server...)...)
	if code != 0 || stdout != "you said hi\n" {
		t.Errorf("run -a of the stored agent = %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
