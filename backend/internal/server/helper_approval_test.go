package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

const (
	chiefPrompt = "chief agent of the tests"
	askerPrompt = "asker agent of the tests"
)

// chiefAgents writes the agent "chief", whose helper "asker" echoes a
// word that waits for approval when it starts with rm.
func chiefAgents(t *testing.T) string {
	t.Helper()
	echo, err := filepath.Abs("testdata/tools/echo")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, file string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("chief.json", fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "chief", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Delegates to a helper that asks for approvals.", "systemPrompt": [%q],
		"extraAgents": [{"slug": "asker", "path": "asker.json"}]}}`, "You are the "+chiefPrompt+"."))
	write("asker.json", fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "asker", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Asks before it echoes rm.", "systemPrompt": [%q],
		"bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}],
		"approvals": [{"tool": "bash_echo", "when": {"arg": "word", "matches": "^rm"}}]}}`, "You are the "+askerPrompt+".", echo))
	return dir
}

func chiefScript() fakellm.Rules {
	yes := true
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: askerPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "asker read: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: askerPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "rm-it"}`)},
		}}},
		{Match: fakellm.Match{SystemContains: chiefPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "chief got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: chiefPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_asker", Arguments: json.RawMessage(`{"prompt": "echo rm-it"}`)},
		}}},
	}}
}

// Issue 20, item 6: a call inside a helper's child that waits for
// approval keeps the parent's helper call open, as a deferred call keeps
// its own round: the parent does not read "did not answer: waiting" and
// move on. Once approved, the child runs the call, answers, and its answer
// is the parent's result; after a restart between the two as well.
func TestAnApprovalInAHelpersChildKeepsTheParentsCallOpen(t *testing.T) {
	t.Parallel()
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			t.Parallel()
			e := start(t, chiefScript(), withAgentsDir(chiefAgents(t)))
			feed := e.openSSE("/v1/events")
			parent := e.create("chief", "delegate").GetMeta().GetId()
			child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
			calls := until(t, feed, kind(child, "calls.deferred")).GetCallsDeferred().GetCalls()
			if len(calls) != 1 || calls[0].GetReason() != "approval" {
				t.Fatalf("the child's calls.deferred = %v, want one approval", calls)
			}
			if c := e.wait(child); c.GetMeta().GetStatus() != waiting {
				t.Fatalf("child = %v, want waiting for the approval", c.GetMeta())
			}
			if restart {
				e.restart()
			}
			// The parent waits for its child: its call has no result.
			if p := e.get(parent); p.GetMeta().GetStatus() != running || len(p.GetTurns()) != 2 {
				t.Fatalf("parent while its child waits: status %v (%s), %d turns, last %v; want its helper call still open",
					p.GetMeta().GetStatus(), p.GetMeta().GetStatusReason(), len(p.GetTurns()), lastTurn(p))
			}
			if status, body := e.answer(calls[0].GetToken(), `{"approval": {"approve": true}}`); status != http.StatusOK {
				t.Fatalf("approve the child's call = %d %s", status, body)
			}
			p := e.wait(parent)
			results := p.GetTurns()[2].GetUser().GetToolResults()
			if len(results) != 1 || results[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || results[0].GetChildSessionId() != child ||
				!strings.HasPrefix(results[0].GetText(), "asker read: echo: rm-it") {
				t.Fatalf("the parent's helper result = %v, want the child's answer", results)
			}
			if p.GetMeta().GetStatus() != ready || !strings.HasPrefix(lastTurn(p).GetLlm().GetText(), "chief got: asker read: echo: rm-it") {
				t.Errorf("parent: status %v, last turn %v", p.GetMeta().GetStatus(), lastTurn(p))
			}
			if c := e.wait(child); c.GetMeta().GetStatus() != ready || len(c.GetTurns()) != 4 {
				t.Errorf("child: status %v, %d turns, want ready after one round", c.GetMeta().GetStatus(), len(c.GetTurns()))
			}
		})
	}
}

// Issue 20, item 6: cancelling a parent whose helper call waits for an
// approval in the child cancels the child, and the approval with it: no
// approval is left open for a run nobody waits for.
func TestCancellingAParentSettlesTheApprovalItsChildWaitsFor(t *testing.T) {
	t.Parallel()
	e := start(t, chiefScript(), withAgentsDir(chiefAgents(t)))
	feed := e.openSSE("/v1/events")
	parent := e.create("chief", "delegate").GetMeta().GetId()
	child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	token := until(t, feed, kind(child, "calls.deferred")).GetCallsDeferred().GetCalls()[0].GetToken()
	e.cancel(parent)
	if c := e.wait(child); c.GetMeta().GetStatus() != ready || c.GetMeta().GetPendingCalls() != 0 {
		t.Errorf("child after its parent was cancelled: %v, want ready with nothing pending", c.GetMeta())
	}
	p := e.wait(parent)
	if r := p.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED {
		t.Errorf("the parent's helper result = %v, want cancelled", r)
	}
	if status, body := e.answer(token, `{"approval": {"approve": true}}`); status < 400 {
		t.Errorf("approving after the cancel = %d %s, want it refused", status, body)
	}
}

// Issue 20, item 6: a child paused between its steps keeps its parent's
// helper call open too; resumed, it goes on and answers the parent.
func TestAPausedHelpersChildKeepsTheParentsCallOpen(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: askerPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "asker read: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: askerPrompt}, Reply: slowReply(fakellm.ToolCall{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "hello"}`)})},
		{Match: fakellm.Match{SystemContains: chiefPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "chief got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: chiefPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_asker", Arguments: json.RawMessage(`{"prompt": "echo hello"}`)},
		}}},
	}}, withAgentsDir(chiefAgents(t)))
	feed := e.openSSE("/v1/events")
	parent := e.create("chief", "delegate").GetMeta().GetId()
	child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	until(t, feed, kind(child, "text.delta"))
	if _, err := e.sessions.Pause(ctxFor(t), connect.NewRequest(&agentsv1.PauseRequest{SessionId: child})); err != nil {
		t.Fatal(err)
	}
	if c := e.wait(child); c.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_PAUSED {
		t.Fatalf("child = %v, want paused", c.GetMeta())
	}
	if p := e.get(parent); p.GetMeta().GetStatus() != running || len(p.GetTurns()) != 2 {
		t.Fatalf("parent while its child is paused: status %v, %d turns; want its helper call still open", p.GetMeta().GetStatus(), len(p.GetTurns()))
	}
	if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: child})); err != nil {
		t.Fatal(err)
	}
	p := e.wait(parent)
	if r := p.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || !strings.HasPrefix(r[0].GetText(), "asker read: echo: hello") {
		t.Fatalf("the parent's helper result = %v, want the child's answer", r)
	}
}
