//go:build linux

package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/eventually"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

const escapePrompt = "escaping agent of the sandbox test"

// escapeRules call the escape tool with the user's message as its
// command, then answer with the tool's result.
func escapeRules() fakellm.Rules {
	return fakellm.Rules{
		Rules: []fakellm.Rule{
			{Name: "try", Match: fakellm.Match{SystemContains: escapePrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "bash_escape", Arguments: json.RawMessage(`{"command": "{{last_user}}"}`)}},
			}},
			{Name: "tell", Match: fakellm.Match{SystemContains: escapePrompt, AssistantMessages: new(1), LastIsToolResult: new(true)}, Reply: fakellm.Reply{
				Text: "done",
			}},
		},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	}
}

// escapeAgent writes an agent file of the escape tool with the sandbox
// settings given.
func escapeAgent(t *testing.T, dir, slug string, settings map[string]any) string {
	t.Helper()
	tool, err := filepath.Abs("testdata/sandbox/escape.sh")
	if err != nil {
		t.Fatal(err)
	}
	file := map[string]any{"tag": "OpenAIAgentDescription", "contents": map[string]any{
		"slug": slug, "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1",
		"apiKeyId": crashKeyID, "modelName": "test-model",
		"systemPrompt":  []string{"You are the " + escapePrompt + "."},
		"bashToolboxes": []any{map[string]any{"tag": "SingleTool", "contents": map[string]any{"Path": tool}}},
		"sandbox":       settings,
	}}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, slug+".json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// escapeResult runs one session of agent whose tool tries command, and
// returns the tool's result.
func escapeResult(t *testing.T, p *serveProc, agent, command string) (id string, result *agentsv1.ToolResult) {
	t.Helper()
	id = p.create(t, agent, command)
	s := p.waitIdle(t, id)
	turns := s.GetTurns()
	if len(turns) != 4 {
		t.Fatalf("%s %q: turns = %d, want 4 (message, call, result, answer):\n%s", agent, command, len(turns), dumpTurns(s))
	}
	results := turns[2].GetUser().GetToolResults()
	if len(results) != 1 {
		t.Fatalf("%s %q: %d tool results, want 1", agent, command, len(results))
	}
	return id, results[0]
}

// TestTheSandboxStopsAToolThatEscapesAndLetsItWhenAllowed runs a bash
// tool that tries, each in a session of its own, what the sandbox
// stops: to write outside its working folder, to read another session's
// folder, the server's database or its keys, to connect when the network
// is off, to start more processes than allowed. Each is stopped, and the
// session gets a tool error saying so and what the sandbox allows. The
// same tool under an agent whose file allows the write, the network and
// the processes does each.
func TestTheSandboxStopsAToolThatEscapesAndLetsItWhenAllowed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	if st := sandbox.New(sandbox.Options{Launcher: "agents"}).Status(); !st.Available {
		t.Skipf("the kernel cannot confine tools here: %s", st.Problem)
	}
	t.Parallel()
	bin := buildAgents(t)
	model := fakellmtest.Start(t, escapeRules())
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside")
	agents := filepath.Join(dir, "agents")
	for _, d := range []string{outside, agents} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keys := filepath.Join(dir, "keys.json")
	if err := os.WriteFile(keys, []byte(`{"keys": [{"id": "other", "value": "the secret key"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	jailed := escapeAgent(t, agents, "jailed", map[string]any{"network": false, "required": true})
	trusted := escapeAgent(t, agents, "trusted", map[string]any{
		"network": true, "required": true, "writable": []string{outside},
		"limits": map[string]any{"processes": 1000},
	})
	db := filepath.Join(dir, "agents.db")
	p := startServeAgents(t, bin, dir, db, model.URL(), []string{jailed, trusted}, "", "--api-keys", keys)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello from the network\n"))
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)

	// A session that wrote in its own folder: the others' target.
	other, res := escapeResult(t, p, "jailed", "write ./mine")
	if res.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK {
		t.Fatalf("a write in the session's own folder failed: %s", res.GetText())
	}
	work := filepath.Join(dir, "data", "agents", "work")
	if _, err := os.Stat(filepath.Join(work, other, "mine")); err != nil {
		t.Fatalf("the session's folder: %v", err)
	}

	stopped := []struct{ name, command, says string }{
		{"writes outside its folder", "write " + filepath.Join(outside, "x"), "Permission denied"},
		{"reads another session's folder", "read " + filepath.Join(work, other, "mine"), "Permission denied"},
		{"reads the database", "read " + db, "Permission denied"},
		{"reads the keys", "read " + keys, "Permission denied"},
		{"connects with the network off", "connect " + port, "connect"},
		{"forks without limit", "fork 400", "fork"},
	}
	for _, tc := range stopped {
		t.Run("stopped/"+tc.name, func(t *testing.T) {
			_, res := escapeResult(t, p, "jailed", tc.command)
			text := res.GetText()
			if res.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR {
				t.Fatalf("the tool was not stopped: %v %.300q", res.GetStatus(), text)
			}
			if !strings.Contains(text, tc.says) || !strings.Contains(text, "bash_escape runs in a sandbox") {
				t.Errorf("the error does not say what stopped the tool (%q) and what the sandbox allows:\n%s", tc.says, text)
			}
			if strings.Contains(text, "the secret key") || strings.Contains(text, "SQLite format") {
				t.Errorf("the tool read the server's files:\n%s", text)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("a stopped tool wrote outside its folder")
	}

	allowed := []struct{ name, command, says string }{
		{"writes where its agent allows", "write " + filepath.Join(outside, "y"), "wrote"},
		{"connects with the network on", "connect " + port, "hello from the network"},
		{"starts the processes its agent allows", "fork 400", "started 400"},
	}
	for _, tc := range allowed {
		t.Run("allowed/"+tc.name, func(t *testing.T) {
			_, res := escapeResult(t, p, "trusted", tc.command)
			if res.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || !strings.Contains(res.GetText(), tc.says) {
				t.Errorf("the allowed tool = %v %q, want ok saying %q", res.GetStatus(), res.GetText(), tc.says)
			}
		})
	}

	// The working folder goes with its session.
	if _, err := p.sessions.DeleteSession(ctxFor(t), connect.NewRequest(&agentsv1.DeleteSessionRequest{SessionId: other})); err != nil {
		t.Fatal(err)
	}
	eventually.That(t, "the deleted session's working folder is removed", func() bool {
		_, err := os.Stat(filepath.Join(work, other))
		return os.IsNotExist(err)
	})
}
