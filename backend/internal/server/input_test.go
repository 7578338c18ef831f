package server_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/tools/fakellm"
)

func TestJSONRoutesRejectBadInputWithClearErrors(t *testing.T) {
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	tests := []struct {
		name, method, path, body string
		status                   int
		code, reason, message    string
	}{
		{"unknown agent", "POST", "/v1/sessions", `{"agent": "nope", "message": {"text": "hi"}}`, 404, "not_found", "unknown_agent", `unknown agent "nope"`},
		{"malformed JSON", "POST", "/v1/sessions", `{"agent": "boss",`, 400, "invalid_argument", "invalid_argument", "the body is not JSON"},
		{"unknown field", "POST", "/v1/sessions", `{"agnet": "boss"}`, 400, "invalid_argument", "invalid_argument", "agnet"},
		{"missing agent", "POST", "/v1/sessions", `{}`, 400, "invalid_argument", "invalid_argument", "agent is required"},
		{"empty message", "POST", "/v1/sessions", `{"agent": "boss", "message": {"text": "  "}}`, 400, "invalid_argument", "invalid_argument", "message text is empty"},
		{"unknown session", "GET", "/v1/sessions/00000000-0000-0000-0000-000000000000", "", 404, "not_found", "unknown_session", "unknown session"},
		{"post to unknown session", "POST", "/v1/sessions/nope/messages", `{"text": "hi"}`, 404, "not_found", "unknown_session", "unknown session"},
		{"bad status filter", "GET", "/v1/sessions?status=sleepy", "", 400, "invalid_argument", "invalid_argument", "sleepy"},
		{"bad page token", "GET", "/v1/sessions?page_token=garbage", "", 400, "invalid_argument", "", ""},
		{"bad delete mode", "DELETE", "/v1/sessions/x?mode=all", "", 400, "invalid_argument", "invalid_argument", "cascade"},
		{"unknown agent by slug", "GET", "/v1/agents/nope", "", 404, "not_found", "unknown_agent", "nope"},
		{"watch without a target", "POST", "/v1/sessions/x/watch", `{}`, 400, "invalid_argument", "invalid_argument", "target_id is required: the session to watch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.do(tc.method, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("status = %d, want %d (%s)", status, tc.status, body)
			}
			code, reason, message := jsonError(t, body)
			if code != tc.code || (tc.reason != "" && reason != tc.reason) || !strings.Contains(message, tc.message) {
				t.Errorf("error = {%s %s %q}, want {%s %s …%q…}", code, reason, message, tc.code, tc.reason, tc.message)
			}
		})
	}
}

func TestConnectErrorsCarryCodesAndMachineCodes(t *testing.T) {
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	_, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "nope"}))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeNotFound {
		t.Fatalf("err = %v, want not_found", err)
	}
	details := ce.Details()
	if len(details) != 1 {
		t.Fatalf("details = %v, want one ErrorDetail", details)
	}
	v, err := details[0].Value()
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := v.(*agentsv1.ErrorDetail); !ok || d.GetCode() != "unknown_agent" {
		t.Errorf("detail = %v, want code unknown_agent", v)
	}

	// Malformed JSON on the Connect route is the protocol's own error.
	status, _, body := e.do(http.MethodPost, "/agents.v1.SessionService/CreateSession", `{"agent":`)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "invalid_argument") {
		t.Errorf("malformed Connect JSON = %d %s, want 400 invalid_argument", status, body)
	}
}

func TestCreateReturns201WithLocation(t *testing.T) {
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	status, header, body := e.do(http.MethodPost, "/v1/sessions", `{"agent": "boss"}`)
	if status != http.StatusCreated {
		t.Fatalf("status = %d (%s), want 201", status, body)
	}
	res := &agentsv1.CreateSessionResponse{Session: &agentsv1.Session{}}
	if err := apijson.Unmarshal(body, res.Session); err != nil {
		t.Fatal(err)
	}
	id := res.GetSession().GetMeta().GetId()
	if loc := header.Get("Location"); loc != "/v1/sessions/"+id {
		t.Errorf("Location = %q, want /v1/sessions/%s", loc, id)
	}
	if st := res.GetSession().GetMeta().GetStatus(); st != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("a session created without a message is %v, want ready", st)
	}
	status, _, body = e.do(http.MethodGet, "/v1/sessions/"+id+"/export?format=markdown", "")
	if status != http.StatusOK || !strings.Contains(string(body), "- agent: `boss`") {
		t.Errorf("export = %d %s", status, body)
	}
}

// TestBadInputIsNeverAServerError sends the JSON routes input of every
// wrong shape: each is a 4xx with a JSON error and a client code, never a
// 500, and none is taken silently for something else.
func TestBadInputIsNeverAServerError(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withLogTo(&log))
	id := e.create("boss", "hi").GetMeta().GetId()
	e.wait(id)
	s := "/v1/sessions/" + id
	tests := []struct {
		name, method, path, body string
		status                   int
		message                  string
	}{
		{"body not an object", "POST", "/v1/sessions", `["boss"]`, 400, "the body must be a JSON object"},
		{"null body", "POST", "/v1/sessions", `null`, 400, "the body must be a JSON object"},
		{"wrong type", "POST", "/v1/sessions", `{"agent": 5}`, 400, "agent"},
		{"duplicate field", "POST", "/v1/sessions", `{"agent": "boss", "agent": "boss"}`, 400, "field `agent` is given twice"},
		{"invalid UTF-8", "POST", "/v1/sessions", "{\"agent\": \"\xff\"}", 400, "UTF-8"},
		{"int32 overflow", "POST", "/v1/sessions", `{"agent": "boss", "run": {"maxSteps": 99999999999}}`, 400, "maxSteps"},
		{"negative max steps", "POST", "/v1/sessions", `{"agent": "boss", "message": {"text": "hi"}, "run": {"maxSteps": -1}}`, 400, "max_steps"},
		{"params not strings", "POST", "/v1/sessions", `{"agent": "boss", "params": {"a": 1}}`, 400, "field `params.a` must be a string"},
		{"bad attachment base64", "POST", s + "/messages", `{"text": "hi", "attachments": [{"name": "a", "data": "!!"}]}`, 400, "data"},
		{"limit not a number", "GET", "/v1/sessions?limit=ten", "", 400, "limit"},
		{"limit negative", "GET", "/v1/sessions?limit=-1", "", 400, "limit"},
		{"limit too large", "GET", "/v1/sessions?limit=501", "", 400, "limit"},
		{"limit past int32", "GET", "/v1/sessions?limit=4294967346", "", 400, "limit"},
		{"limit past int64", "GET", "/v1/sessions?limit=99999999999999999999999", "", 400, "limit"},
		{"bad roots", "GET", "/v1/sessions?roots=maybe", "", 400, "roots"},
		{"bad scope", "GET", "/v1/sessions?scope=everyone", "", 400, "scope"},
		{"bad wait", "GET", s + "?wait=yes", "", 400, "wait"},
		{"negative timeout", "GET", s + "?wait=true&timeout=-1s", "", 400, "timeout"},
		{"timeout not a duration", "GET", s + "?wait=true&timeout=soon", "", 400, "timeout"},
		{"bad mode", "DELETE", s + "?mode=everything", "", 400, "mode"},
		{"bad format", "GET", s + "/export?format=pdf", "", 400, "format"},
		{"bad pending", "GET", s + "/mail?pending=1x", "", 400, "pending"},
		{"at turn not a number", "POST", s + "/fork", `{"atTurn": "newest"}`, 400, "atTurn"},
		{"negative at turn", "POST", s + "/fork", `{"atTurn": -1}`, 400, "at_turn"},
		{"bad ttl", "POST", s + "/watch", `{"targetId": "x", "ttl": "soon"}`, 400, "field `ttl` must be a duration"},
		{"negative ttl", "POST", s + "/watch", `{"targetId": "x", "ttl": "-5s"}`, 400, "ttl"},
		{"unknown priority", "POST", s + "/mail", `{"body": {"userMessage": {"text": "x"}}, "priority": "MAIL_PRIORITY_SOON"}`, 400, "priority"},
		{"numeric unknown priority", "POST", s + "/mail", `{"body": {"userMessage": {"text": "x"}}, "priority": 42}`, 400, "priority"},
		{"a body naming another session than the path", "POST", s + "/messages", `{"session_id": "other", "text": "x"}`, 400, "field `session_id` is \"other\", but the path names \"" + id + "\": leave it out of the body"},
		{"a body naming another token than the path", "POST", "/v1/calls/t/complete", `{"token": "u", "text": "x"}`, 400, "field `token` is \"u\", but the path names \"t\""},
		{"a field on a route that takes no body", "POST", s + "/cancel", `{"reason": "stop"}`, 400, "field `reason` is not a field here: this route takes no body"},
		{"not JSON on a route that takes no body", "POST", s + "/pause", `{x`, 400, "this route takes no body: send none, or {}"},
		{"a list on a route that takes no body", "POST", s + "/cancel-attached", `[]`, 400, "this route takes no body"},
		{"a body on a DELETE", "DELETE", s, `{"mode": "cascade"}`, 400, "field `mode` is not a field here: this route takes no body"},
		{"empty mail", "POST", s + "/mail", `{"body": {}}`, 400, "mail body is empty"},
		{"control mail without its order", "POST", s + "/mail", `{"kind": "control"}`, 400, "control mail needs its order"},
		{"a text with control mail", "POST", s + "/mail", `{"kind": "control", "control": "stop_run", "text": "x"}`, 400, "field `text` belongs to user_message or agent_message, not to the control given"},
		{"answer and error", "POST", "/v1/calls/t/complete", `{"text": "a", "error": "b"}`, 400, "field `error` cannot be given with `text`"},
		{"no answer", "POST", "/v1/calls/t/complete", `{}`, 400, "text or error"},
		{"bad after", "GET", "/v1/events?after=-1", "", 400, "event position"},
		{"bad event scope", "GET", "/v1/events?scope=mine", "", 400, "scope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.do(tc.method, tc.path, tc.body)
			if status != tc.status {
				t.Fatalf("status = %d, want %d (%s)", status, tc.status, body)
			}
			code, _, message := jsonError(t, body)
			if code != "invalid_argument" || !strings.Contains(message, tc.message) {
				t.Errorf("error = %s %q, want invalid_argument …%q…", code, message, tc.message)
			}
		})
	}
	// The same id in the body as in the path is no contradiction.
	if status, _, body := e.do("POST", s+"/rename", `{"session_id": "`+id+`", "title": "same"}`); status != 200 {
		t.Errorf("rename with the path's id in the body = %d %s", status, body)
	}
	e.stop()
	for _, l := range requestLines(t, log.String()) {
		if l.Level != "INFO" {
			t.Errorf("logged at %s: %+v", l.Level, l)
		}
	}
}
