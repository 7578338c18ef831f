package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// askScript asks the client a question, then answers with what it said.
func askScript() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: new(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "ask_user", Arguments: json.RawMessage(`{"question": "name?"}`)}}}},
		{Match: fakellm.Match{AssistantMessages: new(1)}, Reply: fakellm.Reply{Text: "Hello {{last_tool_result}}"}},
	}}
}

const askTool = `, "clientTools": [{"name": "ask_user", "description": "Ask the user.", "parameters": {"type": "object", "properties": {"question": {"type": "string"}}}}]`

// advised is the command line an error advises, with its placeholder
// replaced: the line of stderr that starts with prefix (after spaces),
// without its comment.
func advised(t *testing.T, stderr, prefix, placeholder, value string) []string {
	t.Helper()
	for line := range strings.SplitSeq(stderr, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		line, _, _ = strings.Cut(line, "    #")
		args := strings.Fields(strings.Replace(line, placeholder, value, 1))
		if args[0] != "agents" {
			t.Fatalf("advised %q does not start with agents", line)
		}
		return args[1:]
	}
	t.Fatalf("stderr advises no %q:\n%s", prefix, stderr)
	return nil
}

// agents run stops at a client tool with exit 4 and prints the command
// that answers the call; that very command answers it and follows the
// run to its end.
func TestRunWaitingAdvisesTheCallsCommandThatAnswers(t *testing.T) {
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, askScript())
	agent := filepath.Join(dir, "agents", "asker.json")
	writeFile(t, agent, agentJSON("asker", askTool), 0o644)

	code, _, stderr := run(t, env, "run", "--agent-file", agent, "--offline-model", model.URL(), "greet me")
	if code != exitRunWaiting {
		t.Fatalf("run = %d, want %d; stderr %s", code, exitRunWaiting, stderr)
	}
	for _, want := range []string{"waits for 1 deferred call", "ask_user", `ask_user {"question":"name?"}`, "agents calls fail "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	// calls ls lists the call, over every session and for the session.
	code, out, errOut := run(t, env, "calls", "ls", "--agent-file", agent)
	if code != 0 || !strings.Contains(out, "ask_user") || !strings.Contains(out, "client_tool") {
		t.Fatalf("calls ls = %d:\n%s%s", code, out, errOut)
	}
	row := strings.Fields(strings.Split(out, "\n")[1])
	token, session := row[0], row[1]
	code, out, _ = run(t, env, "calls", "ls", "--agent-file", agent, "--session", session[:8], "--json")
	if code != 0 || !strings.Contains(out, `"token": "`+token+`"`) {
		t.Errorf("calls ls --session PREFIX --json = %d:\n%s", code, out)
	}

	args := advised(t, stderr, "agents calls complete", "'RESULT'", "Ada")
	code, out, errOut = run(t, env, args...)
	if code != 0 || out != "Hello Ada\n" {
		t.Errorf("%v = %d, stdout %q, stderr %q; want the run followed to its answer", args, code, out, errOut)
	}
	code, _, errOut = run(t, env, "calls", "ls", "--agent-file", agent)
	if code != 0 || !strings.Contains(errOut, "no pending calls") {
		t.Errorf("calls ls after the answer = %d, %q", code, errOut)
	}
}

func TestCallsFailAndCompleteWithJSON(t *testing.T) {
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, askScript())
	agent := filepath.Join(dir, "agents", "asker.json")
	writeFile(t, agent, agentJSON("asker", askTool), 0o644)
	server := []string{"--agent-file", agent, "--offline-model", model.URL()}
	waitingCall := func() string {
		t.Helper()
		if code, _, stderr := run(t, env, append([]string{"run", "greet me"}, server...)...); code != exitRunWaiting {
			t.Fatalf("run = %d: %s", code, stderr)
		}
		_, out, _ := run(t, env, "calls", "ls", "--agent-file", agent)
		return strings.Fields(strings.Split(out, "\n")[1])[0]
	}

	// Failing without --resume answers and says how to continue.
	token := waitingCall()
	code, _, stderr := run(t, env, append([]string{"calls", "fail", token[:6], "the", "user", "left"}, server...)...)
	if code != 0 || !strings.Contains(stderr, "answered every call") {
		t.Fatalf("calls fail = %d: %s", code, stderr)
	}
	args := advised(t, stderr, "agents sessions resume", "", "")
	code, out, errOut := run(t, env, args...)
	if code != 0 || out != "Hello Error: the user left\n" {
		t.Errorf("%v = %d, stdout %q, stderr %q", args, code, out, errOut)
	}

	// A JSON value is checked and sent compact.
	token = waitingCall()
	for _, bad := range [][]string{
		{"calls", "complete", token, "--json", "{nope"},
		{"calls", "complete", token, "words", "--json", "1"},
		{"calls", "complete", token},
	} {
		if code, _, stderr := run(t, env, append(bad, server...)...); code != 1 || !strings.Contains(stderr, "JSON") && !strings.Contains(stderr, "give the result") {
			t.Errorf("%v = %d, %q; want a usage error", bad, code, stderr)
		}
	}
	code, out, errOut = run(t, env, append([]string{"calls", "complete", token, "--resume", "--json", `{"name": "Ada"}`}, server...)...)
	if code != 0 || out != "Hello {\"name\":\"Ada\"}\n" {
		t.Errorf("complete --json = %d, stdout %q, stderr %q", code, out, errOut)
	}

	// An answer from stdin; a token nobody has.
	token = waitingCall()
	code, out, _ = runWithInput(t, env, "Grace\n", append([]string{"calls", "complete", token, "-", "--resume"}, server...)...)
	if code != 0 || out != "Hello Grace\n" {
		t.Errorf("complete - = %d, stdout %q", code, out)
	}
	if code, _, stderr := run(t, env, append([]string{"calls", "complete", "ffff", "x"}, server...)...); code != 1 || !strings.Contains(stderr, `no pending call id starts with "ffff"`) {
		t.Errorf("complete of an unknown prefix = %d, %q", code, stderr)
	}
}

// A call the run's helper waits for stops agents run as the run's own
// would (exit 4, the command that answers it), instead of leaving it
// waiting for an answer nobody was told of; the advised command answers
// it and follows the helper's run to its answer.
func TestRunWaitingForItsHelpersCallAdvisesTheCommandThatAnswers(t *testing.T) {
	dir, env := testEnv(t)
	yes := true
	model := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "You help.", LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "Hello {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: "You help."}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "ask_user", Arguments: json.RawMessage(`{"question": "name?"}`)}}}},
		{Match: fakellm.Match{LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "The helper said: {{last_tool_result}}"}},
		{Match: fakellm.Match{}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_aide", Arguments: json.RawMessage(`{"prompt": "greet"}`)}}}},
	}})
	writeFile(t, filepath.Join(dir, "agents", "aide.json"), strings.Replace(agentJSON("aide", askTool), "You test.", "You help.", 1), 0o644)
	agent := filepath.Join(dir, "agents", "boss.json")
	writeFile(t, agent, agentJSON("boss", `, "extraAgents": [{"slug": "aide", "path": "aide.json"}]`), 0o644)

	code, _, stderr := run(t, env, "run", "--agent-file", agent, "-a", "boss", "--offline-model", model.URL(), "delegate")
	if code != exitRunWaiting {
		t.Fatalf("run = %d, want %d; stderr %s", code, exitRunWaiting, stderr)
	}
	for _, want := range []string{"waits for its helper's session", "which waits for 1 deferred call", `ask_user {"question":"name?"}`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	args := advised(t, stderr, "agents calls complete", "'RESULT'", "Ada")
	if code, out, errOut := run(t, env, args...); code != 0 || out != "The helper said: Hello Ada\n" {
		t.Fatalf("%v = %d, stdout %q, stderr %q; want the run that waited for its helper followed to its answer", args, code, out, errOut)
	}
}

// echoTool is a bash tool that echoes its word.
const echoTool = `#!/usr/bin/env bash
case "$1" in
  describe) echo '{"slug": "echo", "description": "Echoes a word.", "args": [{"name": "word", "description": "the word", "type": "string", "backing_type": "string", "arity": "single", "mode": "positional"}]}' ;;
  run) echo "echo: $2" ;;
esac
`

// Issue 20, item 6: agents run whose helper's child waits for an
// approval stops with the run waiting for it, the database saying so
// (waiting, for which session and what); the advised agents calls
// approve answers the child's call, and the run that waited goes on to
// its answer, which the command prints. agents calls reject refuses
// one, and the model of the child reads why.
func TestRunWaitingForItsHelpersApprovalIsApprovedFromTheCommandLine(t *testing.T) {
	dir, env := testEnv(t)
	yes := true
	model := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "You help.", LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "Hello {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: "You help."}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "rm-it"}`)}}}},
		{Match: fakellm.Match{LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "The helper said: {{last_tool_result}}"}},
		{Match: fakellm.Match{}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_aide", Arguments: json.RawMessage(`{"prompt": "greet"}`)}}}},
	}})
	echo := filepath.Join(dir, "tools", "echo")
	writeFile(t, echo, echoTool, 0o755)
	writeFile(t, filepath.Join(dir, "agents", "aide.json"), strings.Replace(agentJSON("aide", `, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": "`+echo+`"}}],
		"approvals": [{"tool": "bash_echo", "when": {"arg": "word", "matches": "^rm"}}]`), "You test.", "You help.", 1), 0o644)
	agent := filepath.Join(dir, "agents", "boss.json")
	writeFile(t, agent, agentJSON("boss", `, "extraAgents": [{"slug": "aide", "path": "aide.json"}]`), 0o644)
	server := []string{"--agent-file", agent, "--offline-model", model.URL()}
	waitingRun := func() (parent, stderr string) {
		t.Helper()
		code, _, stderr := run(t, env, append([]string{"run", "-a", "boss", "delegate"}, server...)...)
		if code != exitRunWaiting {
			t.Fatalf("run = %d, want %d; stderr %s", code, exitRunWaiting, stderr)
		}
		for _, want := range []string{"waits for its helper's session", "which waits for 1 deferred call", `bash_echo {"word":"rm-it"}`, "agents calls reject "} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr, "agents calls complete") {
			t.Errorf("stderr advises calls complete for an approval:\n%s", stderr)
		}
		_, parent, _ = strings.Cut(stderr, "agents: session ")
		parent, _, _ = strings.Cut(parent, " ")
		code, out, errOut := run(t, env, "sessions", "show", parent, "--agent-file", agent)
		if code != 0 || !strings.Contains(out, "status   waiting (waits for the helper session ") || !strings.Contains(out, "which waits for approval of bash_echo)") {
			t.Fatalf("sessions show %s = %d:\n%s%s\nwant the run waiting for its helper's approval", parent, code, out, errOut)
		}
		return parent, stderr
	}

	_, stderr := waitingRun()
	args := advised(t, stderr, "agents calls approve", "", "")
	if code, out, errOut := run(t, env, args...); code != 0 || out != "The helper said: Hello echo: rm-it\n" {
		t.Fatalf("%v = %d, stdout %q, stderr %q; want the run that waited followed to its answer", args, code, out, errOut)
	}

	parent, stderr := waitingRun()
	args = advised(t, stderr, "agents calls reject", "'REASON'", "not today")
	if code, out, errOut := run(t, env, args...); code != 0 || out != "The helper said: Hello Error: the call was not approved: not today\n" {
		t.Fatalf("%v = %d, stdout %q, stderr %q; want the refusal read by the helper, and the run followed to its answer", args, code, out, errOut)
	}
	if code, out, _ := run(t, env, "sessions", "show", parent, "--agent-file", agent); code != 0 || !strings.Contains(out, "status   ready\n") {
		t.Errorf("the run after the refusal:\n%s", out)
	}
	if code, _, errOut := run(t, env, append([]string{"calls", "approve", "ffff"}, server...)...); code != 1 || !strings.Contains(errOut, `no pending call id starts with "ffff"`) {
		t.Errorf("approve of an unknown prefix = %d, %q", code, errOut)
	}
}

// An answer to a helper's call follows the run that waited for the
// helper; when the helper then waits for another call (an approval after
// a client tool's answer), the command advises the one that answers it,
// as agents run does, not a list of the waiting run's own calls, which
// has none.
func TestAnsweringAHelpersCallAdvisesItsNextCall(t *testing.T) {
	dir, env := testEnv(t)
	yes := true
	model := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "You help.", ToolResultContains: "echo:"}, Reply: fakellm.Reply{Text: "Hello {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: "You help.", LastIsToolResult: &yes}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "rm-it"}`)}}}},
		{Match: fakellm.Match{SystemContains: "You help."}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "ask_user", Arguments: json.RawMessage(`{"question": "name?"}`)}}}},
		{Match: fakellm.Match{LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "The helper said: {{last_tool_result}}"}},
		{Match: fakellm.Match{}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_aide", Arguments: json.RawMessage(`{"prompt": "greet"}`)}}}},
	}})
	echo := filepath.Join(dir, "tools", "echo")
	writeFile(t, echo, echoTool, 0o755)
	writeFile(t, filepath.Join(dir, "agents", "aide.json"), strings.Replace(agentJSON("aide", askTool+`, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": "`+echo+`"}}],
		"approvals": [{"tool": "bash_echo", "approval": "always"}]`), "You test.", "You help.", 1), 0o644)
	agent := filepath.Join(dir, "agents", "boss.json")
	writeFile(t, agent, agentJSON("boss", `, "extraAgents": [{"slug": "aide", "path": "aide.json"}]`), 0o644)

	code, _, stderr := run(t, env, "run", "--agent-file", agent, "-a", "boss", "--offline-model", model.URL(), "delegate")
	if code != exitRunWaiting {
		t.Fatalf("run = %d, want %d; stderr %s", code, exitRunWaiting, stderr)
	}
	args := advised(t, stderr, "agents calls complete", "'RESULT'", "Ada")
	code, _, stderr = run(t, env, args...)
	if code != exitRunWaiting || !strings.Contains(stderr, "waits for its helper's session") || !strings.Contains(stderr, `bash_echo {"word":"rm-it"}`) {
		t.Fatalf("%v = %d, stderr %q; want the helper's approval advised", args, code, stderr)
	}
	// sessions resume of the run that waits for its helper, which still
	// waits: the helper's call is advised too.
	_, parent, _ := strings.Cut(stderr, "agents: session ")
	parent, _, _ = strings.Cut(parent, " ")
	code, _, resumed := run(t, env, "sessions", "resume", parent, "--agent-file", agent, "--offline-model", model.URL())
	if code != exitRunWaiting || !strings.Contains(resumed, `bash_echo {"word":"rm-it"}`) {
		t.Fatalf("sessions resume %s = %d, stderr %q; want the helper's approval advised", parent, code, resumed)
	}
	args = advised(t, stderr, "agents calls approve", "", "")
	if code, out, errOut := run(t, env, args...); code != 0 || out != "The helper said: Hello echo: rm-it\n" {
		t.Fatalf("%v = %d, stdout %q, stderr %q; want the run that waited followed to its answer", args, code, out, errOut)
	}
}
