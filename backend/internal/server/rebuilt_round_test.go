package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/mcpfake"
)

// A round that waits for clients is rebuilt from the store when its
// session was evicted or the server restarted. These tests hold it to
// what the live round does.

// mcpGuardAgents writes the agent "mcpguard": an MCP server over HTTP
// whose header takes the session param TOKEN, and every call of its echo
// tool waits for approval.
func mcpGuardAgents(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(mcpfake.Handler("s3cret"))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	file := fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "mcpguard", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Asks before it calls an MCP tool.", "systemPrompt": ["You use guarded MCP tools."],
		"params": [{"name": "TOKEN", "description": "the MCP server's token", "secret": true, "required": true}],
		"mcpServers": [{"tag": "McpStreamableHttp", "contents": {"name": "web", "url": %q, "headers": {"Authorization": "Bearer {{param:TOKEN}}"}}}],
		"approvals": [{"tool": "mcp_web_echo", "approval": "always"}]
		}}`, srv.URL)
	if err := os.WriteFile(filepath.Join(dir, "mcpguard.json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Issue 20, item 7: an approved call of an MCP tool whose server takes
// the session's params runs after an eviction and after a restart: the
// rebuilt round finds its tools as the live step does, with the params.
func TestAnApprovedMCPCallRunsInARebuiltRound(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"eviction", "restart"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
				{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: callTool("mcp_web_echo", `{"text": "over http"}`)},
				{Reply: fakellm.Reply{Text: "read: {{last_tool_result}}"}},
			}}, withAgentsDir(mcpGuardAgents(t)), withRunner(quickEviction))
			res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
				Agent: "mcpguard", Message: &agentsv1.Message{Text: "go"}, Params: map[string]string{"TOKEN": "s3cret"},
			}))
			if err != nil {
				t.Fatal(err)
			}
			id := res.Msg.GetSession().GetMeta().GetId()
			tokens := e.deferredTokens(id)
			if len(tokens) != 1 {
				t.Fatalf("pending calls = %v, want the one approval", tokens)
			}
			body := `{"approval": {"approve": true}}`
			if how == "restart" {
				e.restart()
				body = `{"approval": {"approve": true}, "params": {"TOKEN": "s3cret"}}`
			} else {
				e.evicted()
			}
			if status, b := e.answer(tokens[0], body); status != http.StatusOK {
				t.Fatalf("approve = %d %s", status, b)
			}
			s := e.wait(id)
			if r := s.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetText() != "over http" || r[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK {
				t.Fatalf("the approved call's result = %v, want the MCP tool's answer", r)
			}
			if s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "read: over http" {
				t.Errorf("after the approval: status %v (%s), last turn %v", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
			}
		})
	}
}

// Issue 20, item 7: resume given with the first answer of a round holds
// for the round: when an eviction or a restart comes between that answer
// and the last one, the last answer, given without resume, still
// continues the run instead of leaving the session waiting with nothing
// pending.
func TestResumeGivenWithAnEarlierAnswerOutlivesEvictionAndRestart(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"eviction", "restart"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			e := start(t, twoQuestions(), withRunner(quickEviction))
			id := e.create("clienty", "ask me").GetMeta().GetId()
			tokens := e.deferredTokens(id)
			if status, b := e.answer(tokens[0], `{"text": "one", "resume": true}`); status != http.StatusOK {
				t.Fatalf("first answer = %d %s", status, b)
			}
			if how == "restart" {
				e.restart()
			} else {
				e.evicted()
			}
			if status, b := e.answer(tokens[1], `{"text": "two"}`); status != http.StatusOK {
				t.Fatalf("last answer = %d %s", status, b)
			}
			s := e.wait(id)
			if s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "noted" {
				t.Fatalf("after the last answer: status %v (%s), %d pending, last turn %v; want the run to have gone on",
					s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), s.GetMeta().GetPendingCalls(), lastTurn(s))
			}
			if r := s.GetTurns()[2].GetUser().GetToolResults(); len(r) != 2 || r[0].GetText() != "one" || r[1].GetText() != "two" {
				t.Errorf("results = %v, want both answers", r)
			}
		})
	}
}
