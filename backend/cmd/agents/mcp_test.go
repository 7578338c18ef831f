//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/eventually"
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

// expectProgress fails t unless a progress notification said message.
// It waits for one a moment: the client SDK hands notifications to a
// goroutine of their own, so the call's result, sent after them, may be
// read first.
func (p *mcpProc) expectProgress(t *testing.T, message string) {
	t.Helper()
	seen := func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return slices.Contains(p.progress, message)
	}
	if !eventually.Holds(10*time.Second, seen) {
		p.mu.Lock()
		defer p.mu.Unlock()
		t.Errorf("progress = %q, want %q", p.progress, message)
	}
}

// startMCP runs `agents mcp` with args in dir and connects to it.
func startMCP(t *testing.T, dir string, args ...string) *mcpProc {
	t.Helper()
	return startMCPWithEnv(t, dir, childEnv(dir), args...)
}

// startMCPWithEnv is startMCP with the environment env.
func startMCPWithEnv(t *testing.T, dir string, env []string, args ...string) *mcpProc {
	t.Helper()
	cmd := exec.Command(buildAgents(t), append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
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
	p.expectProgress(t, "asking the helper aide")
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

// aliceToken is the one token of the server startServeWithTokens starts.
const aliceToken = "alice-token-0123456789"

// startServeWithTokens runs agents serve with the boss agent and
// --auth-tokens naming alice alone.
func startServeWithTokens(t *testing.T, dir string) *serveProc {
	t.Helper()
	tokens := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(tokens, []byte(`{"tokens": [{"token": "`+aliceToken+`", "owner": "alice"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	model := fakellmtest.Start(t, mcpRules())
	return startServeAgents(t, buildAgents(t), dir, filepath.Join(dir, "agents.db"), model.URL(), []string{"testdata/agents/boss.json"}, "", "--auth-tokens", tokens)
}

func TestMCPOverStdioAttachedActsAsTheTokensOwner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startServeWithTokens(t, dir)
	tokenFile := filepath.Join(dir, "alice.token")
	if err := os.WriteFile(tokenFile, []byte(aliceToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := withoutEnv(childEnv(dir), "AGENTS_TOKEN")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"--token-file", env, []string{"--token-file", tokenFile}},
		{"$AGENTS_TOKEN", append(slices.Clone(env), "AGENTS_TOKEN="+aliceToken), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startMCPWithEnv(t, dir, tc.env, append([]string{"--attach", srv.url}, tc.args...)...)
			if got := p.tools(t); !slices.Equal(got, []string{"ask_boss"}) {
				t.Errorf("tools = %q, want ask_boss", got)
			}
			answer, session := p.ask(t, "go")
			if answer != "boss heard: aide says hello" {
				t.Errorf("answer = %q, want the boss's final text", answer)
			}
			p.expectProgress(t, "asking the helper aide")
			if got := sessionAs(t, srv, aliceToken, session); got.Owner != "alice" || got.Agent != "boss" {
				t.Errorf("session on the server = %+v, want alice's boss session", got)
			}
		})
	}
}

// sessionAs reads a session over the JSON route with a bearer token.
func sessionAs(t *testing.T, srv *serveProc, token, id string) (meta struct{ Owner, Agent string }) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxFor(t), http.MethodGet, srv.url+"/v1/sessions/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("session %s on the server: %d %v", id, resp.StatusCode, err)
	}
	return meta
}

func TestMCPOverStdioAttachedWithoutAGoodTokenFailsClearly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startServeWithTokens(t, dir)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no token", nil, "give a token with --token-file, --token or $AGENTS_TOKEN"},
		{"a wrong token", []string{"--token", "mallory-token-0123456789"}, "the bearer token is not valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.CommandContext(ctxFor(t), buildAgents(t), append([]string{"mcp", "--attach", srv.url}, tc.args...)...)
			cmd.Dir = dir
			cmd.Env = withoutEnv(childEnv(dir), "AGENTS_TOKEN")
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("agents mcp = %v, want it to exit with an error\nstderr:\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr = %q, want it to say %q", stderr.String(), tc.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing: it carries the protocol only", stdout.String())
			}
		})
	}
}

// withoutEnv is env without the variable name.
func withoutEnv(env []string, name string) []string {
	return slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}
