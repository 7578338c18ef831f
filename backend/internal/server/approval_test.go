package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// approvalScript: each user message makes the model echo a word that
// starts with rm (which the approver agent holds for approval), then
// answer with the tool result it read, or say it saw the mail.
func approvalScript() fakellm.Rules {
	echo := fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "rm-{{last_user}}"}`)}}}
	read := fakellm.Reply{Text: "read: {{last_tool_result}}"}
	var rules []fakellm.Rule
	for step := 0; step < 6; step += 2 {
		rules = append(rules,
			fakellm.Rule{Match: fakellm.Match{AssistantMessages: steps(step), UserContains: "stop that"}, Reply: fakellm.Reply{Text: "stopped"}},
			fakellm.Rule{Match: fakellm.Match{AssistantMessages: steps(step + 1), UserContains: "stop that"}, Reply: fakellm.Reply{Text: "stopped"}},
			fakellm.Rule{Match: fakellm.Match{AssistantMessages: steps(step)}, Reply: echo},
			fakellm.Rule{Match: fakellm.Match{AssistantMessages: steps(step + 1)}, Reply: read},
		)
	}
	return fakellm.Rules{Rules: rules}
}

// sessionJSON reads a session over the JSON route, once its run stopped.
func (e *env) sessionJSON(id string) *agentsv1.Session {
	e.t.Helper()
	status, _, body := e.do(http.MethodGet, "/v1/sessions/"+id+"?wait=true", "")
	if status != http.StatusOK {
		e.t.Fatalf("GET session = %d %s", status, body)
	}
	res := &agentsv1.GetSessionResponse{}
	if err := readAnswer(body, res); err != nil {
		e.t.Fatalf("session %s: %v", body, err)
	}
	return res.GetSession()
}

// awaitApproval starts a session of the approver and returns it with the
// token of the call that waits for approval, checked as clients see it.
func (e *env) awaitApproval(word string) (id, token string) {
	t := e.t
	t.Helper()
	feed := e.openSSE("/v1/events")
	id = e.create("approver", word).GetMeta().GetId()
	calls := until(t, feed, kind(id, "calls.deferred")).GetCallsDeferred().GetCalls()
	if len(calls) != 1 || calls[0].GetReason() != "approval" || calls[0].GetCall().GetName() != "bash_echo" {
		t.Fatalf("calls.deferred = %v, want one bash_echo call waiting for approval", calls)
	}
	s := e.sessionJSON(id)
	if p := s.GetPendingCalls(); s.GetMeta().GetStatus() != waiting || s.GetMeta().GetPendingCalls() != 1 || len(p) != 1 ||
		p[0].GetReason() != "approval" || !strings.Contains(p[0].GetCall().GetArguments(), "rm-"+word) {
		t.Fatalf("waiting session = %v, want one pending approval showing its arguments", s)
	}
	return id, calls[0].GetToken()
}

// answer posts an answer to a call and returns the status and body.
func (e *env) answer(token, body string) (int, []byte) {
	e.t.Helper()
	status, _, b := e.do(http.MethodPost, "/v1/calls/"+token+"/complete", body)
	return status, b
}

func lastText(t *testing.T, e *env, id string) string {
	t.Helper()
	return lastTurn(e.wait(id)).GetLlm().GetText()
}

func TestApprovedCallRunsAndTheModelReadsItsResult(t *testing.T) {
	e := start(t, approvalScript())
	id, token := e.awaitApproval("tmp")
	if status, body := e.answer(token, `{"text": "done"}`); status != http.StatusBadRequest {
		t.Errorf("answering an approval with text = %d %s, want 400", status, body)
	}
	if status, body := e.answer(token, `{"approval": {"approve": true}}`); status != http.StatusOK {
		t.Fatalf("approve = %d %s", status, body)
	}
	if got := lastText(t, e, id); !strings.Contains(got, "read: echo: rm-tmp") {
		t.Errorf("model's answer = %q, want it to have read the echo", got)
	}
	s := e.sessionJSON(id)
	if s.GetMeta().GetStatus() != ready || s.GetMeta().GetPendingCalls() != 0 || len(s.GetPendingCalls()) != 0 || len(s.GetMeta().GetAllowedTools()) != 0 {
		t.Errorf("after approval: %v, want ready with nothing pending and no tool allowed", s.GetMeta())
	}
	status, body := e.answer(token, `{"approval": {"approve": true}}`)
	if code, reason, _ := jsonError(t, body); status != http.StatusBadRequest && code != "failed_precondition" || reason != "call_completed" {
		t.Errorf("second answer = %d %s, want failed_precondition call_completed", status, body)
	}
}

func TestRejectedCallGivesTheModelTheReason(t *testing.T) {
	e := start(t, approvalScript())
	id, token := e.awaitApproval("tmp")
	if status, body := e.answer(token, `{"approval": {"approve": false, "reason": "not on a Friday"}}`); status != http.StatusOK {
		t.Fatalf("reject = %d %s", status, body)
	}
	if got := lastText(t, e, id); !strings.Contains(got, "the call was not approved: not on a Friday") {
		t.Errorf("model's answer = %q, want it to have read the reason", got)
	}
	s := e.wait(id)
	if r := s.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR {
		t.Errorf("tool results = %v, want one error result", r)
	}
}

func TestAlwaysAllowSkipsLaterApprovalsAcrossARestart(t *testing.T) {
	e := start(t, approvalScript())
	id, token := e.awaitApproval("a")
	if status, body := e.answer(token, `{"approval": {"approve": false, "always": true}}`); status != http.StatusBadRequest {
		t.Errorf("always with a refusal = %d %s, want 400", status, body)
	}
	if status, body := e.answer(token, `{"approval": {"approve": true, "always": true}}`); status != http.StatusOK {
		t.Fatalf("approve always = %d %s", status, body)
	}
	if got := lastText(t, e, id); !strings.Contains(got, "read: echo: rm-a (session "+id+")") {
		t.Fatalf("first answer = %q", got)
	}
	if allowed := e.sessionJSON(id).GetMeta().GetAllowedTools(); len(allowed) != 1 || allowed[0] != "bash_echo" {
		t.Fatalf("allowed tools = %v, want bash_echo", allowed)
	}
	for i, word := range []string{"b", "c"} {
		if i == 1 {
			e.restart()
		}
		if status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "`+word+`"}`); status != http.StatusOK && status != http.StatusAccepted {
			t.Fatalf("post %s = %d %s", word, status, body)
		}
		if got := lastText(t, e, id); !strings.Contains(got, "read: echo: rm-"+word+" (session "+id+")") {
			t.Errorf("answer to %s = %q, want the echo run without asking", word, got)
		}
		if m := e.sessionJSON(id).GetMeta(); m.GetStatus() != ready || m.GetPendingCalls() != 0 {
			t.Errorf("after %s: %v, want ready with nothing pending", word, m)
		}
	}
}

func TestOpenApprovalSurvivesARestart(t *testing.T) {
	e := start(t, approvalScript())
	id, token := e.awaitApproval("later")
	e.restart()
	if s := e.sessionJSON(id); s.GetMeta().GetStatus() != waiting || s.GetMeta().GetPendingCalls() != 1 || len(s.GetPendingCalls()) != 1 || s.GetPendingCalls()[0].GetToken() != token {
		t.Fatalf("after restart: %v, want the approval still open", s)
	}
	if status, body := e.answer(token, `{"approval": {"approve": true}}`); status != http.StatusOK {
		t.Fatalf("approve = %d %s", status, body)
	}
	if got := lastText(t, e, id); !strings.Contains(got, "read: echo: rm-later") {
		t.Errorf("model's answer = %q, want it to have read the echo", got)
	}
}

func TestApprovedCallInFlightAtARestartIsAbortedNotAskedAgain(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_hang"}}}},
		{Reply: fakellm.Reply{Text: "read: {{last_tool_result}}"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("approver", "hang").GetMeta().GetId()
	token := until(t, feed, kind(id, "calls.deferred")).GetCallsDeferred().GetCalls()[0].GetToken()
	if status, body := e.answer(token, `{"approval": {"approve": true}}`); status != http.StatusOK {
		t.Fatalf("approve = %d %s", status, body)
	}
	until(t, feed, kind(id, "tool.started"))

	e.restart()

	s := e.wait(id)
	if s.GetMeta().GetPendingCalls() != 0 || len(s.GetPendingCalls()) != 0 || s.GetMeta().GetStatus() != ready {
		t.Fatalf("after restart: %v with pending %v, want ready with nothing pending", s.GetMeta(), s.GetPendingCalls())
	}
	if r := s.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED {
		t.Errorf("results = %v, want the approved call aborted by the restart", r)
	}
	if status, body := e.answer(token, `{"approval": {"approve": true}}`); status < 400 {
		t.Errorf("answer after the restart = %d %s, want it refused", status, body)
	}
}

// TestNoApprovalIsLeftDangling settles an open approval every way a run
// can end without an answer; nothing stays pending and a late answer says
// what happened.
func TestNoApprovalIsLeftDangling(t *testing.T) {
	cases := []struct {
		name   string
		settle func(e *env, id string)
		// status and reason of the late answer; text is part of its message.
		status       int
		reason, text string
		// answer is the model's last text afterwards, "" when the session is gone.
		answer string
	}{
		{"cancelled", func(e *env, id string) {
			e.mustPost("/v1/sessions/"+id+"/cancel", "")
		}, http.StatusPreconditionFailed, "approval_settled", "the run was cancelled", ""},
		{"interrupted", func(e *env, id string) {
			e.mustPost("/v1/sessions/"+id+"/messages", `{"text": "stop that", "interrupt": true}`)
		}, http.StatusPreconditionFailed, "approval_settled", "a new message interrupted the run", "stopped"},
		{"attached calls cancelled", func(e *env, id string) {
			e.mustPost("/v1/sessions/"+id+"/cancel-attached", "")
		}, http.StatusPreconditionFailed, "approval_settled", "its approval was cancelled", "the call was not run: its approval was cancelled"},
		{"deleted", func(e *env, id string) {
			status, _, body := e.do(http.MethodDelete, "/v1/sessions/"+id, "")
			if status != http.StatusOK && status != http.StatusNoContent {
				e.t.Fatalf("delete = %d %s", status, body)
			}
		}, http.StatusNotFound, "unknown_token", "its session was deleted", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, approvalScript())
			id, token := e.awaitApproval("x")
			tc.settle(e, id)
			if tc.reason != "unknown_token" {
				s := e.sessionJSON(id)
				if s.GetMeta().GetPendingCalls() != 0 || len(s.GetPendingCalls()) != 0 || s.GetMeta().GetStatus() == waiting {
					t.Errorf("after settling: %v, want nothing pending", s.GetMeta())
				}
				if tc.answer != "" {
					if got := lastText(t, e, id); !strings.Contains(got, tc.answer) {
						t.Errorf("model's answer = %q, want it to say %q", got, tc.answer)
					}
				}
			}
			status, body := e.answer(token, `{"approval": {"approve": true}}`)
			_, reason, message := jsonError(t, body)
			if status != tc.status || reason != tc.reason || !strings.Contains(message, tc.text) {
				t.Errorf("late answer = %d %s, want %d %s saying %q", status, body, tc.status, tc.reason, tc.text)
			}
		})
	}
}

// mustPost posts to a JSON route and fails the test unless it succeeds.
func (e *env) mustPost(path, body string) {
	e.t.Helper()
	status, _, b := e.do(http.MethodPost, path, body)
	if status >= 300 {
		e.t.Fatalf("POST %s = %d %s", path, status, b)
	}
}
