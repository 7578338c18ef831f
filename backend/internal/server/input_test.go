package server_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
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
		{"malformed JSON", "POST", "/v1/sessions", `{"agent": "boss",`, 400, "invalid_argument", "invalid_argument", "invalid JSON body"},
		{"unknown field", "POST", "/v1/sessions", `{"agnet": "boss"}`, 400, "invalid_argument", "invalid_argument", "agnet"},
		{"missing agent", "POST", "/v1/sessions", `{}`, 400, "invalid_argument", "invalid_argument", "agent is required"},
		{"empty message", "POST", "/v1/sessions", `{"agent": "boss", "message": {"text": "  "}}`, 400, "invalid_argument", "invalid_argument", "message text is empty"},
		{"unknown session", "GET", "/v1/sessions/00000000-0000-0000-0000-000000000000", "", 404, "not_found", "unknown_session", "unknown session"},
		{"post to unknown session", "POST", "/v1/sessions/nope/messages", `{"text": "hi"}`, 404, "not_found", "unknown_session", "unknown session"},
		{"bad status filter", "GET", "/v1/sessions?status=sleepy", "", 400, "invalid_argument", "invalid_argument", "sleepy"},
		{"bad page token", "GET", "/v1/sessions?page_token=garbage", "", 400, "invalid_argument", "", ""},
		{"bad delete mode", "DELETE", "/v1/sessions/x?mode=all", "", 400, "invalid_argument", "invalid_argument", "cascade"},
		{"unknown agent by slug", "GET", "/v1/agents/nope", "", 404, "not_found", "unknown_agent", "nope"},
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
	res := &agentsv1.CreateSessionResponse{}
	if err := protojson.Unmarshal(body, res); err != nil {
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
