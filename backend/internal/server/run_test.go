package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/tools/fakellm"
)

const (
	bossPrompt   = "boss agent of the tests"
	helperPrompt = "helper agent of the tests"
)

func steps(n int) *int { return &n }

// bossScript: call a bash tool, then the helper, then answer with what the
// helper said. The helper answers from its prompt.
func bossScript() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Name: "helper", Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "helper says: {{last_user}}"}},
		{Name: "tool", Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(0)}, Reply: fakellm.Reply{
			Text:      "calling echo",
			ToolCalls: []fakellm.ToolCall{{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "hello"}`)}},
		}},
		{Name: "helper call", Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(1)}, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt": "what is up"}`)}},
		}},
		{Name: "answer", Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(2)}, Reply: fakellm.Reply{Text: "done: {{last_tool_result}}"}},
	}}
}

func TestRunCallsBashToolThenHelperThenAnswers(t *testing.T) {
	e := start(t, bossScript())
	feed := e.openSSE("/v1/events")
	if f, _ := feed.next(t); f.event != "" {
		t.Fatalf("first frame = %+v, want the opening ping", f)
	}

	created := e.create("boss", "go")
	id := created.GetMeta().GetId()
	s := e.wait(id)

	if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("status = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
	}
	turns := s.GetTurns()
	if len(turns) != 6 {
		t.Fatalf("got %d turns, want 6: %v", len(turns), turns)
	}
	if c := turns[1].GetLlm().GetToolCalls(); len(c) != 1 || c[0].GetName() != "bash_echo" || c[0].GetKind() != agentsv1.ToolKind_TOOL_KIND_BASH {
		t.Errorf("turn 1 calls = %v, want one bash_echo", c)
	}
	echo := turns[2].GetUser().GetToolResults()[0]
	if want := "echo: hello (session " + id + ")"; !strings.Contains(echo.GetText(), want) || echo.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK {
		t.Errorf("echo result = %v, want ok containing %q", echo, want)
	}
	helper := turns[4].GetUser().GetToolResults()[0]
	if helper.GetText() != "helper says: what is up" || helper.GetChildSessionId() == "" {
		t.Errorf("helper result = %v, want the helper's answer and its child session", helper)
	}
	if got := turns[5].GetLlm().GetText(); got != "done: helper says: what is up" {
		t.Errorf("final answer = %q", got)
	}

	// The child is a real session with its parent set, listed under it.
	list, err := e.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{ParentId: id}))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.Msg.GetSessions()); n != 1 {
		t.Fatalf("children listed = %d, want 1", n)
	}
	child := list.Msg.GetSessions()[0]
	if child.GetId() != helper.GetChildSessionId() || child.GetParentId() != id || child.GetAgent() != "helper" || child.GetDepth() != 1 {
		t.Errorf("child = %v, want helper session %s under %s at depth 1", child, helper.GetChildSessionId(), id)
	}
	childView := e.wait(child.GetId())
	if n := len(childView.GetTurns()); n != 2 || childView.GetTurns()[0].GetUser().GetText() != "what is up" {
		t.Errorf("child turns = %v, want the prompt and the answer", childView.GetTurns())
	}

	// The same child through the JSON route.
	status, _, body := e.do(http.MethodGet, "/v1/sessions?parent="+id, "")
	if status != http.StatusOK || !strings.Contains(string(body), child.GetId()) {
		t.Errorf("GET /v1/sessions?parent= = %d %s", status, body)
	}

	// The model saw the session id as prompt_cache_key and the tools.
	reqs := e.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("model requests = %d, want 4 (3 boss steps, 1 helper)", len(reqs))
	}
	if key := string(reqs[0].Extra["prompt_cache_key"]); key != `"`+id+`"` {
		t.Errorf("prompt_cache_key = %s, want the session id", key)
	}

	// The owner's stream saw the subcall, stamped with the parent.
	kinds := map[string]bool{}
	for {
		f, ok := feed.next(t)
		if !ok {
			t.Fatal("stream ended early")
		}
		if f.event == "" {
			continue
		}
		ev := f.eventOf(t)
		kinds[ev.GetKind()] = true
		if ev.GetKind() == "subcall.started" {
			if ev.GetSessionId() != id || ev.GetSubcallStarted().GetChildSessionId() != child.GetId() {
				t.Errorf("subcall.started = %v, want parent %s and child %s", ev, id, child.GetId())
			}
		}
		if ev.GetKind() == "run.stopped" && ev.GetSessionId() == id {
			break
		}
	}
	for _, k := range []string{"session.created", "run.started", "text.delta", "tool.started", "tool.completed", "subcall.started", "subcall.completed", "session.updated", "run.stopped"} {
		if !kinds[k] {
			t.Errorf("no %s event on the owner stream", k)
		}
	}
}

func TestToolFailuresBecomeResultsTheModelSees(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "bash_crash"},
			{Name: "bash_hang"},
			{Name: "bash_echo", RawArguments: `{"word": `},
			{Name: "no_such_tool"},
		}}},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "carried on"}},
	}})
	s := e.wait(e.create("boss", "try the tools").GetMeta().GetId())
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("status = %v (%s), want ready", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
	}
	results := s.GetTurns()[2].GetUser().GetToolResults()
	if len(results) != 4 {
		t.Fatalf("results = %v, want 4", results)
	}
	for i, want := range []string{"something broke", "", "", "unknown tool"} {
		r := results[i]
		if r.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR {
			t.Errorf("result %d (%s) status = %v, want error", i, r.GetName(), r.GetStatus())
		}
		if !strings.Contains(r.GetText(), want) {
			t.Errorf("result %d (%s) = %q, want it to contain %q", i, r.GetName(), r.GetText(), want)
		}
	}
	if got := s.GetTurns()[3].GetLlm().GetText(); got != "carried on" {
		t.Errorf("answer after failures = %q", got)
	}
	// The model was told about the failures.
	reqs := e.model.Requests()
	last := reqs[len(reqs)-1].Messages
	var toolTexts []string
	for _, m := range last {
		if m.Role == "tool" {
			toolTexts = append(toolTexts, m.Content)
		}
	}
	if len(toolTexts) != 4 || !strings.HasPrefix(toolTexts[0], "Error: ") {
		t.Errorf("tool messages the model saw = %q", toolTexts)
	}
}

func TestModelErrorFailsTheRunAndTheSessionTakesInputAgain(t *testing.T) {
	e := start(t, fakellm.Rules{
		Rules: []fakellm.Rule{
			{Match: fakellm.Match{UserContains: "boom"}, Reply: fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "the model exploded"}}},
		},
		Default: &fakellm.Reply{Text: "fine again"},
	})
	feed := e.openSSE("/v1/events")
	id := e.create("boss", "boom").GetMeta().GetId()
	s := e.wait(id)
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_FAILED {
		t.Fatalf("status = %v, want failed", s.GetMeta().GetStatus())
	}
	if reason := s.GetMeta().GetStatusReason(); !strings.Contains(reason, "the model exploded") {
		t.Errorf("status reason = %q, want the endpoint's message", reason)
	}
	for {
		f, ok := feed.next(t)
		if !ok {
			t.Fatal("stream ended before session.failed")
		}
		if f.event == "session.failed" {
			ev := f.eventOf(t)
			if ev.GetSessionId() != id || !strings.Contains(ev.GetSessionFailed().GetReason(), "the model exploded") || ev.GetSessionFailed().GetCode() != "model_error" {
				t.Errorf("session.failed = %v", ev)
			}
			break
		}
	}

	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: "again"}})); err != nil {
		t.Fatalf("post after failure: %v", err)
	}
	s = e.wait(id)
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("status after retry = %v (%s), want ready", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
	}
	turns := s.GetTurns()
	if got := turns[len(turns)-1].GetLlm().GetText(); got != "fine again" {
		t.Errorf("answer = %q", got)
	}
}

func TestRestartKeepsEverySessionAndTurn(t *testing.T) {
	e := start(t, bossScript())
	id := e.create("boss", "go").GetMeta().GetId()
	before := e.wait(id)
	listBefore, err := e.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{}))
	if err != nil {
		t.Fatal(err)
	}

	e.restart()

	after := e.wait(id)
	if len(after.GetTurns()) != len(before.GetTurns()) {
		t.Fatalf("turns after restart = %d, before %d", len(after.GetTurns()), len(before.GetTurns()))
	}
	for i := range before.GetTurns() {
		if !proto.Equal(before.GetTurns()[i], after.GetTurns()[i]) {
			t.Errorf("turn %d after restart differs:\nbefore %v\nafter  %v", i, before.GetTurns()[i], after.GetTurns()[i])
		}
	}
	if after.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY || after.GetMeta().GetTurnCount() != before.GetMeta().GetTurnCount() {
		t.Errorf("meta after restart = %v, before %v", after.GetMeta(), before.GetMeta())
	}
	listAfter, err := e.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(listAfter.Msg.GetSessions()) != len(listBefore.Msg.GetSessions()) || len(listAfter.Msg.GetSessions()) != 2 {
		t.Errorf("sessions after restart = %d, before %d, want 2 (the boss and its helper)", len(listAfter.Msg.GetSessions()), len(listBefore.Msg.GetSessions()))
	}
}

func TestIdleSessionsAreEvictedAndLoadedAgainOnDemand(t *testing.T) {
	e := start(t, bossScript(), withRunner(func(o *runner.Options) { o.IdleEvict = 20 * time.Millisecond }))
	id := e.create("boss", "go").GetMeta().GetId()
	before := e.wait(id)

	eventually.That(t, "the idle sessions are evicted", func() bool { return e.runner.LiveSessions() == 0 })
	after := e.wait(id)
	if len(after.GetTurns()) != len(before.GetTurns()) || after.GetMeta().GetStatus() != before.GetMeta().GetStatus() {
		t.Errorf("reloaded session = %d turns %v, want %d turns %v", len(after.GetTurns()), after.GetMeta().GetStatus(), len(before.GetTurns()), before.GetMeta().GetStatus())
	}
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: "again"}})); err != nil {
		t.Fatalf("post to a reloaded session: %v", err)
	}
	if s := e.wait(id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("status = %v", s.GetMeta().GetStatus())
	}
}

func TestARoundOfOnlyUnknownToolsIsAnsweredOnce(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "nope_one"}, {Name: "nope_two"}}}},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "fine"}},
	}})
	s := e.wait(e.create("boss", "call what does not exist").GetMeta().GetId())
	if n := len(s.GetTurns()); n != 4 || s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("turns = %d, status %v: want 4 turns (prompt, calls, results, answer) and ready", n, s.GetMeta().GetStatus())
	}
	if reqs := e.model.Requests(); len(reqs) != 2 {
		t.Errorf("model calls = %d, want 2", len(reqs))
	}
}
