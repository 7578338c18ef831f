//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// mcpRules make the boss ask its aide, then answer with what it said.
func mcpRules() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: aidePrompt}, Reply: fakellm.Reply{Text: "aide says {{last_user}}"}},
		{Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_aide", Arguments: json.RawMessage(`{"prompt": "hello"}`)}},
		}},
		{Match: fakellm.Match{SystemContains: bossPrompt}, Reply: fakellm.Reply{Text: "boss heard: {{last_tool_result}}"}},
	}}
}

// mcpProc is `agents mcp` driven by the SDK's client over its stdio.
type mcpProc struct {
	session  *mcp.ClientSession
	mu       sync.Mutex
	progress []string
}

// startMCP runs `agents mcp` with args in dir and connects to it.
func startMCP(t *testing.T, dir string, args ...string) *mcpProc {
	t.Helper()
	cmd := exec.Command(buildAgents(t), append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = childEnv(dir)
	stderr := &lineLog{}
	cmd.Stderr = stderr
	p := &mcpProc{}
	c := mcp.NewClient(&mcp.Implementation{Name: "agents-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.progress = append(p.progress, req.Params.Message)
		},
	})
	cs, err := c.Connect(ctxFor(t), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to agents mcp: %v\n%s", err, stderr.String())
	}
	p.session = cs
	t.Cleanup(func() {
		// Closing stdin ends the server; it must exit on its own.
		if err := cs.Close(); err != nil {
			t.Errorf("agents mcp did not end cleanly: %v\n%s", err, stderr.String())
		}
		if t.Failed() {
			t.Logf("agents mcp stderr:\n%s", stderr.String())
		}
	})
	return p
}

// ask calls ask_boss with a progress token and returns its answer and
// session id.
func (p *mcpProc) ask(t *testing.T, prompt string) (answer, session string) {
	t.Helper()
	params := &mcp.CallToolParams{Name: "ask_boss", Arguments: map[string]any{"prompt": prompt}}
	params.SetProgressToken("boss")
	res, err := p.session.CallTool(ctxFor(t), params)
	if err != nil {
		t.Fatalf("call ask_boss: %v", err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Answer    string `json:"answer"`
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(b, &out); err != nil || res.IsError {
		t.Fatalf("ask_boss = %s (error %v, %v)", b, res.IsError, err)
	}
	return out.Answer, out.SessionID
}

func (p *mcpProc) tools(t *testing.T) []string {
	t.Helper()
	res, err := p.session.ListTools(ctxFor(t), nil)
	if err != nil {
		t.Fatalf("list tools: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func TestMCPOverStdioServesTheAgentsOfAnEmbeddedServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := fakellmtest.Start(t, mcpRules())
	boss, err := filepath.Abs("testdata/agents/boss.json")
	if err != nil {
		t.Fatal(err)
	}
	p := startMCP(t, dir, "--db", filepath.Join(dir, "agents.db"), "--offline-model", model.URL(), "--agent-file", boss)

	if got := p.tools(t); !slices.Equal(got, []string{"ask_boss"}) {
		t.Errorf("tools = %q, want ask_boss alone (its helper is no tool)", got)
	}
	answer, session := p.ask(t, "go")
	if answer != "boss heard: aide says hello" || session == "" {
		t.Errorf("answer %q in session %q, want the boss's final text", answer, session)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.progress, "asking the helper aide") {
		t.Errorf("progress = %q, want the helper call reported", p.progress)
	}
}

func TestMCPOverStdioAttachedServesARunningServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := fakellmtest.Start(t, mcpRules())
	srv := startServeAgents(t, buildAgents(t), dir, filepath.Join(dir, "agents.db"), model.URL(), []string{"testdata/agents/boss.json"}, "")
	p := startMCP(t, dir, "--attach", srv.url)

	answer, session := p.ask(t, "go")
	if !strings.HasPrefix(answer, "boss heard:") {
		t.Errorf("answer = %q, want the boss's final text", answer)
	}
	got, err := srv.sessions.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: session, MetaOnly: true}))
	if err != nil {
		t.Fatalf("the session on the server: %v", err)
	}
	if m := got.Msg.GetSession().GetMeta(); m.GetAgent() != "boss" || m.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("session on the server = %v", m)
	}
}
