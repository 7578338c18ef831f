package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/tools/fakellm"
)

// TestShortTextFieldsHaveLimits: every short free-text field of a request
// has a length limit, and going over it is invalid_argument naming the
// field and the limit, on the JSON routes and over Connect alike — never a
// 500 from deep in the store.
func TestShortTextFieldsHaveLimits(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	long := func(n int) string { return strings.Repeat("x", n) }
	body := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	status, _, created := e.do("POST", "/v1/sessions", `{"agent": "boss"}`)
	res := &agentsv1.CreateSessionResponse{Session: &agentsv1.Session{}}
	if err := apijson.Unmarshal(created, res.Session); status != http.StatusCreated || err != nil {
		t.Fatalf("create: %d %s", status, created)
	}
	id := res.GetSession().GetMeta().GetId()

	t.Run("json", func(t *testing.T) {
		tests := []struct {
			name, method, path, body string
			field, limit             string
		}{
			{"q", "GET", "/v1/sessions?q=" + long(50000), "", "q", "256"},
			{"q of wildcards", "GET", "/v1/sessions?q=" + url.QueryEscape(strings.Repeat("%_", 20000)), "", "q", "256"},
			{"agent filter", "GET", "/v1/sessions?agent=" + long(65), "", "agent", "64"},
			{"parent filter", "GET", "/v1/sessions?parent=" + long(129), "", "parent_id", "128"},
			{"page token", "GET", "/v1/sessions?page_token=" + long(513), "", "page_token", "512"},
			{"title", "POST", "/v1/sessions", body(map[string]any{"agent": "boss", "title": long(201)}), "title", "200"},
			{"agent", "POST", "/v1/sessions", body(map[string]any{"agent": long(65)}), "agent", "64"},
			{"parent", "POST", "/v1/sessions", body(map[string]any{"agent": "boss", "parentId": long(129)}), "parent_id", "128"},
			{"param name", "POST", "/v1/sessions", body(map[string]any{"agent": "boss", "params": map[string]string{long(129): "v"}}), "param name", "128"},
			{"param value", "POST", "/v1/sessions", body(map[string]any{"agent": "boss", "params": map[string]string{"k": long(65537)}}), "params", "65536"},
			{"attachment name", "POST", "/v1/sessions/" + id + "/messages", body(map[string]any{"text": "hi", "attachments": []any{map[string]any{"name": long(256), "mediaType": "text/plain", "data": "aGk="}}}), "name", "255"},
			{"media type", "POST", "/v1/sessions/" + id + "/messages", body(map[string]any{"text": "hi", "attachments": []any{map[string]any{"name": "a.txt", "mediaType": long(256), "data": "aGk="}}}), "media_type", "255"},
			{"session id", "GET", "/v1/sessions/" + long(129), "", "session_id", "128"},
			{"slug", "GET", "/v1/agents/" + long(65), "", "slug", "64"},
			{"call token", "POST", "/v1/calls/" + long(129) + "/complete", `{"text": "x"}`, "token", "128"},
			{"fork agent", "POST", "/v1/sessions/" + id + "/fork", body(map[string]any{"agent": long(65)}), "agent", "64"},
			{"watch target", "POST", "/v1/sessions/" + id + "/watch", body(map[string]any{"targetId": long(129)}), "target_id", "128"},
			{"mail sender", "POST", "/v1/sessions/" + id + "/mail", body(map[string]any{"body": map[string]any{"userMessage": map[string]any{"text": "hi"}}, "fromSessionId": long(129)}), "from_session_id", "128"},
			{"mail agent", "POST", "/v1/sessions/" + id + "/mail", body(map[string]any{"body": map[string]any{"agentMessage": map[string]any{"agent": long(65), "text": "hi"}}}), "agent", "64"},
			{"mail attachment name", "POST", "/v1/sessions/" + id + "/mail", body(map[string]any{"body": map[string]any{"userMessage": map[string]any{"text": "hi", "attachmentNames": []string{long(256)}}}}), "attachment_names", "255"},
			{"stop reason", "POST", "/v1/sessions/" + id + "/mail", body(map[string]any{"body": map[string]any{"control": map[string]any{"stopRun": map[string]any{"reason": long(1001)}}}}), "reason", "1000"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				status, _, b := e.do(tc.method, tc.path, tc.body)
				if status != http.StatusBadRequest {
					t.Fatalf("status = %d, want 400 (%.300s)", status, b)
				}
				code, _, message := jsonError(t, b)
				if code != "invalid_argument" || !strings.Contains(message, tc.field) || !strings.Contains(message, tc.limit) {
					t.Errorf("error = %s %q, want invalid_argument naming %s and %s", code, message, tc.field, tc.limit)
				}
			})
		}
	})

	t.Run("connect", func(t *testing.T) {
		tests := []struct {
			name         string
			call         func() error
			field, limit string
		}{
			{"query", func() error {
				_, err := e.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{Query: long(50000)}))
				return err
			}, "query", "256"},
			{"title", func() error {
				_, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss", Title: long(201)}))
				return err
			}, "title", "200"},
			{"session id", func() error {
				_, err := e.sessions.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: long(129)}))
				return err
			}, "session_id", "128"},
			{"slug", func() error {
				_, err := e.agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: long(65)}))
				return err
			}, "slug", "64"},
			{"call token", func() error {
				_, err := e.sessions.CompleteCall(ctxFor(t), connect.NewRequest(&agentsv1.CompleteCallRequest{Token: long(129), Result: &agentsv1.CompleteCallRequest_Text{Text: "x"}}))
				return err
			}, "token", "128"},
			{"unknown delete mode", func() error {
				_, err := e.sessions.DeleteSession(ctxFor(t), connect.NewRequest(&agentsv1.DeleteSessionRequest{SessionId: "nope", Mode: 99}))
				return err
			}, "mode", "99"},
			{"negative timeout", func() error {
				_, err := e.sessions.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, Wait: true, Timeout: durationpb.New(-5e9)}))
				return err
			}, "timeout", "negative"},
			{"subscribe session id", func() error {
				stream, err := e.events.Subscribe(ctxFor(t), connect.NewRequest(&agentsv1.SubscribeRequest{SessionId: long(129)}))
				if err != nil {
					return err
				}
				defer stream.Close()
				for stream.Receive() {
				}
				return stream.Err()
			}, "session_id", "128"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				err := tc.call()
				var ce *connect.Error
				if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument {
					t.Fatalf("err = %v, want invalid_argument", err)
				}
				if !strings.Contains(ce.Message(), tc.field) || !strings.Contains(ce.Message(), tc.limit) {
					t.Errorf("message %q does not name %s and %s", ce.Message(), tc.field, tc.limit)
				}
			})
		}
	})

	t.Run("at the limits", func(t *testing.T) {
		status, _, b := e.do("GET", "/v1/sessions?q="+url.QueryEscape(strings.Repeat("é", 256)), "")
		if status != http.StatusOK {
			t.Errorf("a query of 256 characters: %d %s", status, b)
		}
		status, _, b = e.do("POST", "/v1/sessions", body(map[string]any{"agent": "boss", "title": strings.Repeat("é", 200)}))
		if status != http.StatusCreated {
			t.Errorf("a title of 200 characters: %d %s", status, b)
		}
	})
}

// TestQueryWildcardsMatchThemselves: % and _ in q are plain characters.
func TestQueryWildcardsMatchThemselves(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	for _, title := range []string{"100% done", "1000 done", "snake_case", "snakeXcase"} {
		if status, _, b := e.do("POST", "/v1/sessions", `{"agent": "boss", "title": "`+title+`"}`); status != http.StatusCreated {
			t.Fatalf("create %q: %d %s", title, status, b)
		}
	}
	for q, want := range map[string]string{"0%": "100% done", "e_c": "snake_case", "%": "100% done", "_": "snake_case"} {
		status, _, b := e.do("GET", "/v1/sessions?q="+url.QueryEscape(q), "")
		if status != http.StatusOK {
			t.Fatalf("q=%s: %d %s", q, status, b)
		}
		res := &agentsv1.ListSessionsResponse{}
		if err := apijson.Unmarshal(b, res); err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, m := range res.GetSessions() {
			titles = append(titles, m.GetTitle())
		}
		if len(titles) != 1 || titles[0] != want {
			t.Errorf("q=%s lists %q, want only %q", q, titles, want)
		}
	}
}
