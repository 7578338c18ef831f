package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/tools/fakellm"
)

const paramToken = "s3cr3t-value"

func withToken() map[string]string { return map[string]string{"API_TOKEN": paramToken} }

// evicted waits until no session is loaded.
func (e *env) evicted() {
	e.t.Helper()
	eventually.That(e.t, "every idle session is evicted", func() bool { return e.runner.LiveSessions() == 0 })
}

func quickEviction(o *runner.Options) { o.IdleEvict = 20 * time.Millisecond }

// Issue 8, item 7: params are kept with the session for as long as the
// process lives, not as long as the session stays loaded: after an idle
// eviction a message runs with them, and so does an answered call.
func TestParamsOutliveIdleEviction(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "the tool said {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: "guarded agent", AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "ask_user", Arguments: json.RawMessage(`{"question": "go on?"}`)},
		}}},
		{Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_secret"}}}},
	}}, withRunner(quickEviction))

	res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "keeper", Message: &agentsv1.Message{Text: "go"}, Params: withToken(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Msg.GetSession().GetMeta().GetId()
	e.wait(id)
	e.evicted()
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: "again"}})); err != nil {
		t.Fatalf("post without params after an eviction: %v", err)
	}
	if s := e.wait(id); !strings.Contains(lastTurn(s).GetLlm().GetText(), "token="+paramToken) {
		t.Fatalf("answer = %q, want the tool to have the param", lastTurn(s).GetLlm().GetText())
	}

	res, err = e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "guarded", Message: &agentsv1.Message{Text: "ask"}, Params: withToken(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	asker := res.Msg.GetSession().GetMeta().GetId()
	call := e.deferredTokens(asker)[0]
	e.evicted()
	status, _, body := e.do(http.MethodPost, "/v1/calls/"+call+"/complete", `{"text": "yes", "resume": true}`)
	if status != http.StatusOK {
		t.Fatalf("complete without params after an eviction = %d %s", status, body)
	}
	if s := e.wait(asker); s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "the tool said yes" {
		t.Errorf("after the answer: status %v (%s), last turn %v", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
	}
}

// Issue 8, item 7: an answer that would continue a run whose params are
// missing (a restart lost them) is refused with params_required before
// anything is stored, so the client's retry with the params is taken,
// not refused as call_completed.
func TestCompleteCallAsksForParamsBeforeItStoresTheAnswer(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "ask_user", Arguments: json.RawMessage(`{"question": "go on?"}`)},
		}}},
		{Reply: fakellm.Reply{Text: "the client said {{last_tool_result}}"}},
	}})
	res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "guarded", Message: &agentsv1.Message{Text: "ask"}, Params: withToken(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Msg.GetSession().GetMeta().GetId()
	call := e.deferredTokens(id)[0]

	e.restart()

	path := "/v1/calls/" + call + "/complete"
	status, _, body := e.do(http.MethodPost, path, `{"text": "yes", "resume": true}`)
	if _, reason, _ := jsonError(t, body); status != http.StatusPreconditionFailed || reason != "params_required" {
		t.Fatalf("complete without the params a restart lost = %d %s, want 412 params_required", status, body)
	}
	if p := e.get(id).GetPendingCalls(); len(p) != 1 || p[0].GetToken() != call {
		t.Fatalf("pending calls = %v, want the call still open", p)
	}
	status, _, body = e.do(http.MethodPost, path, `{"text": "yes", "resume": true, "params": {"API_TOKEN": "`+paramToken+`"}}`)
	if status != http.StatusOK {
		t.Fatalf("complete with the params = %d %s", status, body)
	}
	if s := e.wait(id); s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "the client said yes" {
		t.Errorf("after the answer: status %v (%s), last turn %v", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
	}
}
