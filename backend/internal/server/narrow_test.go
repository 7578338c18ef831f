package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

const (
	leadPrompt     = "lead agent of the tests"
	reviewerPrompt = "reviewer agent of the tests"
	reviewContext  = "Review Go code only."
)

// toolNamed returns the tool of this name a model request offered.
func toolNamed(req fakellm.Request, name string) (fakellm.Tool, bool) {
	i := slices.IndexFunc(req.Tools, func(t fakellm.Tool) bool { return t.Name == name })
	if i < 0 {
		return fakellm.Tool{}, false
	}
	return req.Tools[i], true
}

// requestsOf returns the model requests whose system prompt holds text.
func requestsOf(e *env, text string) []fakellm.Request {
	var out []fakellm.Request
	for _, r := range e.model.Requests() {
		if len(r.Messages) > 0 && r.Messages[0].Role == "system" && strings.Contains(r.Messages[0].Content, text) {
			out = append(out, r)
		}
	}
	return out
}

// Issue 12, item 4: a narrowed helper's bindings reach its tool, and its
// context its model, across a restart that lands while the child runs.
// The child's REPO param comes only from the binding (the lead has no
// params), so a child that lost its narrowing would stop for it.
func TestANarrowedHelperKeepsItsBindingsAndContextAcrossARestart(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: reviewerPrompt, AssistantMessages: steps(0)}, Times: 1, Reply: fakellm.Reply{Text: slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}},
		{Match: fakellm.Match{SystemContains: reviewerPrompt, AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_repo", Arguments: json.RawMessage(`{}`)}}}},
		{Match: fakellm.Match{SystemContains: reviewerPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "reviewed {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: leadPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "lead got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: leadPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_go_reviewer", Arguments: json.RawMessage(`{"prompt": "check the parser"}`)},
		}}},
	}})
	feed := e.openSSE("/v1/events")
	lead := e.create("lead", "get the parser reviewed").GetMeta().GetId()
	child := until(t, feed, kind(lead, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	until(t, feed, kind(child, "text.delta"))

	e.restart()

	s := e.wait(lead)
	if got := lastTurn(s).GetLlm().GetText(); s.GetMeta().GetStatus() != ready || strings.TrimSpace(got) != "lead got: reviewed repo=agents-os/agents" {
		t.Fatalf("lead after the restart: status %v (%s), answer %q; want the bound REPO to reach the reviewer's tool", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), got)
	}
	c := e.wait(child)
	if c.GetMeta().GetStatus() != ready || c.GetTurns()[0].GetUser().GetText() != "check the parser" {
		t.Errorf("child: status %v (%s), first turn %v", c.GetMeta().GetStatus(), c.GetMeta().GetStatusReason(), c.GetTurns()[0])
	}

	reviews := requestsOf(e, reviewerPrompt)
	if len(reviews) < 3 {
		t.Fatalf("reviewer model requests = %d, want the cut step, its retry and the step after the tool", len(reviews))
	}
	for i, r := range reviews {
		if !strings.HasSuffix(r.Messages[0].Content, "\n"+reviewContext) {
			t.Errorf("reviewer request %d: system prompt %q, want it to end with the context %q", i, r.Messages[0].Content, reviewContext)
		}
	}
	leads := requestsOf(e, leadPrompt)
	if len(leads) == 0 {
		t.Fatal("no model request of the lead")
	}
	offered := leads[0]
	if _, ok := toolNamed(offered, "prompt_agent_reviewer"); ok {
		t.Errorf("the lead was offered prompt_agent_reviewer; want the helper only under its \"as\" names")
	}
	if tl, ok := toolNamed(offered, "prompt_agent_go_reviewer"); !ok || !strings.Contains(string(tl.Parameters), `"prompt"`) {
		t.Errorf("prompt_agent_go_reviewer = %+v, %v; want it offered with its prompt argument", tl, ok)
	}
	if tl, ok := toolNamed(offered, "prompt_agent_nightly"); !ok || strings.Contains(string(tl.Parameters), `"prompt"`) {
		t.Errorf("prompt_agent_nightly = %+v, %v; want it offered without the bound prompt", tl, ok)
	}
	for _, tl := range offered.Tools {
		if strings.HasPrefix(tl.Name, "os_") {
			t.Errorf("the lead, which does not ask for osTools, was offered %s", tl.Name)
		}
	}
}

// A bound prompt is the child's first message: the model calls the tool
// with no arguments, and the child's other binding reaches its tool.
func TestABoundPromptIsTheChildsMessage(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: reviewerPrompt, AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_repo", Arguments: json.RawMessage(`{}`)}}}},
		{Match: fakellm.Match{SystemContains: reviewerPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "asked {{last_user}}; {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: leadPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "{{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: leadPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_nightly", Arguments: json.RawMessage(`{}`)},
		}}},
	}})
	s := e.wait(e.create("lead", "run the nightly review").GetMeta().GetId())
	want := "asked Review last night's changes.; repo=agents-os/nightly"
	if got := strings.TrimSpace(lastTurn(s).GetLlm().GetText()); got != want {
		t.Errorf("lead's answer = %q, want %q", got, want)
	}
	for _, r := range requestsOf(e, reviewerPrompt) {
		if strings.Contains(r.Messages[0].Content, reviewContext) {
			t.Errorf("the nightly child got the go_reviewer's context: %q", r.Messages[0].Content)
		}
	}
}
