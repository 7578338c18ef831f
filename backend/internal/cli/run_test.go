package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

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
	code, _, stderr = run(t, env, "run", "--agent-file", agent, "hi")
	if code != 1 || !strings.Contains(stderr, "-a SLUG is required") {
		t.Errorf("no agent: exit %d, stderr %q", code, stderr)
	}
}
