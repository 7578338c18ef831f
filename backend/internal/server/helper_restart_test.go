package server_test

import (
	"strings"
	"testing"

	"connectrpc.com/connect"

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

// A helper's child goes on after a restart even when its parent's params
// were lost with it: the parent's call still waits for the same child and
// gets its answer, the round is stored, and only then does the parent stop
// for its params; Resume with them finishes the run.
func TestAHelperCallWaitsForItsChildAfterARestartThatLostTheParentsParams(t *testing.T) {
	t.Parallel()
	yes := true
	const wardenPrompt = "warden agent of the tests"
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt}, Times: 1, Reply: fakellm.Reply{Text: slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}},
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "the helper's answer"}},
		{Match: fakellm.Match{SystemContains: wardenPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "warden got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: wardenPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_helper", Arguments: []byte(`{"prompt": "think"}`)},
		}}},
	}})
	feed := e.openSSE("/v1/events")
	res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "warden", Message: &agentsv1.Message{Text: "delegate"}, Params: map[string]string{"API_TOKEN": "secret"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	parent := res.Msg.GetSession().GetMeta().GetId()
	child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	until(t, feed, anyKind("text.delta"))

	e.restart()

	s := e.wait(parent)
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_FAILED || !strings.Contains(s.GetMeta().GetStatusReason(), "API_TOKEN") {
		t.Fatalf("parent after the restart: status %v (%s), want failed for its params", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
	}
	results := s.GetTurns()[2].GetUser().GetToolResults()
	if len(results) != 1 || results[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || results[0].GetChildSessionId() != child || results[0].GetText() != "the helper's answer" {
		t.Fatalf("the helper call's result = %v, want the answer of child %s", results, child)
	}
	if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: parent, Params: map[string]string{"API_TOKEN": "secret"}})); err != nil {
		t.Fatal(err)
	}
	if s := e.wait(parent); s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "warden got: the helper's answer" {
		t.Fatalf("parent after Resume: status %v (%s), last turn %v", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
	}
	if n := len(e.list(false)); n != 2 {
		t.Errorf("sessions = %d, want the parent and its one child", n)
	}
}
