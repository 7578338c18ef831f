package server_test

import (
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// Issue 8, item 4: a helper's child that runs when the server restarts
// resumes, and the parent's call waits for it again and gets its answer,
// whichever of the two recovery takes up first (three calls, so that some
// parent's call looks for its child before recovery reaches the child).
func TestAHelperCallWaitsForItsChildAgainAfterARestart(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt}, Times: 3, Reply: fakellm.Reply{Text: slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}},
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "the helper's answer"}},
		{Match: fakellm.Match{SystemContains: bossPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "boss got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: bossPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_helper", Arguments: []byte(`{"prompt": "think"}`)},
			{Name: "prompt_agent_helper", Arguments: []byte(`{"prompt": "think"}`)},
			{Name: "prompt_agent_helper", Arguments: []byte(`{"prompt": "think"}`)},
		}}},
	}})
	feed := e.openSSE("/v1/events")
	parent := e.create("boss", "delegate").GetMeta().GetId()
	children := map[string]bool{}
	for len(children) < 3 {
		children[until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()] = true
	}
	for range 3 {
		until(t, feed, anyKind("text.delta"))
	}

	e.restart()

	s := e.wait(parent)
	if s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "boss got: the helper's answer" {
		t.Fatalf("parent after the restart: status %v (%s), last turn %v", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
	}
	results := s.GetTurns()[2].GetUser().GetToolResults()
	if len(results) != 3 {
		t.Fatalf("the helper calls' results = %v, want 3", results)
	}
	for _, r := range results {
		if r.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || !children[r.GetChildSessionId()] || r.GetText() != "the helper's answer" {
			t.Errorf("a helper call's result = %v, want the answer of its child", r)
		}
		if c := e.wait(r.GetChildSessionId()); c.GetMeta().GetStatus() != ready || len(c.GetTurns()) != 2 {
			t.Errorf("child after the restart: status %v, %d turns", c.GetMeta().GetStatus(), len(c.GetTurns()))
		}
	}
	if n := len(e.list(false)); n != 4 {
		t.Errorf("sessions = %d, want the parent and its three children", n)
	}
}
