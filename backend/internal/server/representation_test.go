package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// object decodes a JSON answer as a generic object.
func object(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("answer %s is not a JSON object: %v", body, err)
	}
	return v
}

// TestOneSessionObjectOnEveryRoute checks the session shape where routes
// answer with one: create, get, list, post, fork, the SSE session.*
// events — the summary's fields at the top, lowercase enums, numbers as
// numbers, lists present.
func TestOneSessionObjectOnEveryRoute(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	stream := e.openSSE("/v1/events")

	status, _, body := e.do("POST", "/v1/sessions?wait=true", `{"agent": "boss", "message": {"text": "hi"}, "params": {"K": "v"}}`)
	if status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	created := object(t, body)
	id, _ := created["id"].(string)
	check := func(route string, s map[string]any, withTurns bool) {
		t.Helper()
		if s["id"] != id || s["agent"] != "boss" {
			t.Errorf("%s: id %v agent %v, want %s boss at the top", route, s["id"], s["agent"], id)
		}
		if _, ok := s["meta"]; ok {
			t.Errorf("%s: a meta object, want its fields at the top", route)
		}
		if st, _ := s["status"].(string); st != "ready" && st != "running" {
			t.Errorf("%s: status %v, want a lowercase enum value", route, s["status"])
		}
		usage, _ := s["usage"].(map[string]any)
		if _, ok := usage["prompt_tokens"].(float64); !ok {
			t.Errorf("%s: usage.prompt_tokens %v, want a number", route, usage["prompt_tokens"])
		}
		turns, hasTurns := s["turns"].([]any)
		if hasTurns != withTurns {
			t.Errorf("%s: turns present = %v, want %v", route, hasTurns, withTurns)
		}
		if withTurns {
			if len(turns) == 0 {
				t.Errorf("%s: no turns", route)
			}
			if _, ok := s["seq"].(float64); !ok {
				t.Errorf("%s: seq %v, want a number", route, s["seq"])
			}
		}
	}
	check("create", created, true)
	_, _, body = e.do("GET", "/v1/sessions/"+id, "")
	check("get", object(t, body), true)
	_, _, body = e.do("GET", "/v1/sessions", "")
	list := object(t, body)
	sessions, _ := list["sessions"].([]any)
	if len(sessions) != 1 {
		t.Fatalf("list = %s", body)
	}
	check("list", sessions[0].(map[string]any), false)
	_, _, body = e.do("POST", "/v1/sessions/"+id+"/messages?wait=true", `{"text": "again", "params": {"K": "w"}}`)
	posted := object(t, body)
	if posted["mail_id"] != nil {
		t.Errorf("post: mail_id %v, want null", posted["mail_id"])
	}
	check("post", posted["session"].(map[string]any), true)
	status, _, body = e.do("POST", "/v1/sessions/"+id+"/fork", `{}`)
	if status != http.StatusCreated {
		t.Fatalf("fork = %d %s", status, body)
	}
	forked := object(t, body)
	forked["id"], forked["agent"] = id, "boss" // a new session; only its shape is checked
	check("fork", forked, true)

	for {
		f, ok := stream.next(t)
		if !ok {
			t.Fatal("the stream ended")
		}
		if f.event != "session.created" {
			continue
		}
		ev := object(t, []byte(f.data))
		if _, ok := ev["seq"].(float64); !ok || ev["kind"] != "session.created" {
			t.Errorf("event %s: want seq a number and kind beside it", f.data)
		}
		check("session.created", ev["session"].(map[string]any), false)
		break
	}
}

// TestMailBodyIsFlat reads a mail as people write it.
func TestMailBodyIsFlat(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	id := e.create("boss", "hi").GetMeta().GetId()
	e.wait(id)
	status, _, body := e.do("POST", "/v1/sessions/"+id+"/mail", `{"text": "note", "priority": "urgent"}`)
	if status != http.StatusCreated {
		t.Fatalf("send mail = %d %s", status, body)
	}
	m := object(t, body)
	from, _ := m["from"].(map[string]any)
	if m["text"] != "note" || m["kind"] != "user_message" || m["priority"] != "urgent" || from["user"] != "local" {
		t.Errorf("mail = %s, want text, kind, priority and from at the top", body)
	}
	_, _, body = e.do("GET", "/v1/sessions/"+id+"/mail", "")
	if list := object(t, body); len(list["mail"].([]any)) != 1 {
		t.Errorf("mail list = %s", body)
	}
}

// TestEveryAnswerIsJSON covers the answers no route writes itself.
func TestEveryAnswerIsJSON(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	for _, tc := range []struct {
		name, method, path, body, contentType string
		status                                int
		reason, message, allow                string
	}{
		{"unknown route", "GET", "/v1/nothing", "", "", 404, "unknown_route", "no route GET /v1/nothing", ""},
		{"wrong method", "DELETE", "/v1/agents", "", "", 405, "method_not_allowed", "DELETE is not served on /v1/agents", "GET, HEAD, POST"},
		{"wrong content type", "POST", "/v1/sessions", `agent=boss`, "application/x-www-form-urlencoded", 415, "unsupported_media_type", "curl --json", ""},
		{"the Connect paths' 415", "POST", "/agents.v1.AgentService/ListAgents", `{}`, "text/plain", 415, "unsupported_media_type", "application/json and application/proto", ""},
		{"a streaming procedure's 415 names the streaming types", "POST", "/agents.v1.EventService/Subscribe", `{}`, "application/json", 415, "unsupported_media_type", "reads application/connect+json and application/connect+proto", ""},
		{"unknown procedure", "POST", "/agents.v1.AgentService/Nope", `{}`, "application/json", 404, "", "", ""},
		{"unknown query parameter", "GET", "/v1/sessions?colour=blue", "", "", 400, "invalid_argument", "query parameter `colour` is not taken here; the parameters are agent, status", ""},
		{"query parameter where none is taken", "GET", "/v1/agents?x=1", "", "", 400, "invalid_argument", "query parameter `x` is not taken here: this route takes none", ""},
		{"wrong type in the API's words", "POST", "/v1/sessions", `{"agent": 1}`, "application/json", 400, "invalid_argument", "field `agent` must be a string", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctxFor(t), tc.method, e.http.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			res, err := e.http.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s %s, want %d JSON", res.StatusCode, res.Header.Get("Content-Type"), b, tc.status)
			}
			_, reason, message := jsonError(t, b)
			if tc.reason != "" && (reason != tc.reason || !strings.Contains(message, tc.message)) {
				t.Errorf("error %s %q, want %s …%q…", reason, message, tc.reason, tc.message)
			}
			if got := res.Header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow = %q, want %q", got, tc.allow)
			}
		})
	}
}

// TestShortAndLongFormsAreBothRead reads queries and bodies in either
// spelling.
func TestShortAndLongFormsAreBothRead(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	id := e.create("boss", "hi").GetMeta().GetId()
	e.wait(id)
	for _, q := range []string{"status=ready", "status=SESSION_STATUS_READY", "status=READY"} {
		if status, _, body := e.do("GET", "/v1/sessions?"+q, ""); status != 200 || len(object(t, body)["sessions"].([]any)) != 1 {
			t.Errorf("GET /v1/sessions?%s = %d %s", q, status, body)
		}
	}
	for _, q := range []string{"after_turn=0&wait=true&timeout=1", "afterTurn=0&wait=true&timeout=1s"} {
		if status, s, body := e.getJSON(id, q); status != 200 || s.GetFirstTurnIndex() != 1 {
			t.Errorf("GET ?%s = %d %s", q, status, body)
		}
	}
	// Both spellings at once would leave which one counts to chance.
	if status, _, body := e.getJSON(id, "after_turn=0&afterTurn=1"); status != 400 || !strings.Contains(string(body), "given twice") {
		t.Errorf("GET ?after_turn=0&afterTurn=1 = %d %s, want 400, given twice", status, body)
	}
	for _, body := range []string{`{"text": "a"}`, `{"message": {"text": "a"}}`, `{"message": {"text": "a"}, "run": {"maxSteps": 3}}`} {
		if status, _, b := e.do("POST", "/v1/sessions/"+id+"/messages?wait=true", body); status != 200 {
			t.Errorf("POST messages %s = %d %s", body, status, b)
		}
	}
}

// TestPagesCannotLoop walks every page with each spelling of the token:
// each session once, has_more false and no token at the end.
func TestPagesCannotLoop(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	for i := range 5 {
		e.create("boss", fmt.Sprint("s", i))
	}
	for _, name := range []string{"page_token", "pageToken"} {
		seen := map[string]bool{}
		token := ""
		for page := 0; ; page++ {
			if page > 5 {
				t.Fatalf("%s: more pages than sessions: the token is not honoured", name)
			}
			path := "/v1/sessions?limit=2"
			if token != "" {
				path += "&" + name + "=" + token
			}
			status, _, body := e.do("GET", path, "")
			if status != 200 {
				t.Fatalf("GET %s = %d %s", path, status, body)
			}
			res := object(t, body)
			for _, s := range res["sessions"].([]any) {
				id := s.(map[string]any)["id"].(string)
				if seen[id] {
					t.Fatalf("%s: session %s on two pages", name, id)
				}
				seen[id] = true
			}
			more, _ := res["has_more"].(bool)
			next, isString := res["next_page_token"].(string)
			if more != isString {
				t.Fatalf("has_more %v with next_page_token %v", res["has_more"], res["next_page_token"])
			}
			if !more {
				if res["next_page_token"] != nil {
					t.Errorf("last page: next_page_token %v, want null", res["next_page_token"])
				}
				break
			}
			token = next
		}
		if len(seen) != 5 {
			t.Errorf("%s: %d sessions listed, want 5", name, len(seen))
		}
	}
}

// TestUnknownAgentListsTheKnownOnes on the JSON routes and over Connect.
func TestUnknownAgentListsTheKnownOnes(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	const want = `unknown agent "nope" (known: approver, boss, clienty, guarded, helper, keeper, lead, reviewer, toolmail, vault, warden)`
	_, _, body := e.do("POST", "/v1/sessions", `{"agent": "nope"}`)
	if _, reason, msg := jsonError(t, body); reason != "unknown_agent" || msg != want {
		t.Errorf("JSON route: %s %q, want %q", reason, msg, want)
	}
	_, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "nope"}))
	if connect.CodeOf(err) != connect.CodeNotFound || !strings.Contains(err.Error(), want) {
		t.Errorf("Connect: %v, want not_found %q", err, want)
	}
}

// A Connect body the decoder refuses is explained in the API's words,
// never the decoder's ("proto: (line 1:11): …").
func TestConnectBodyErrorsSpeakTheAPIsWords(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	for _, tc := range []struct{ body, want string }{
		{`{"agent": 5}`, "field `agent` must be a string"},
		{`{"agent": "helper",`, "the body is not JSON"},
		{`{"agent": "helper", "run": {"maxSteps": "many"}}`, "field `run.maxSteps` must be a whole number"},
	} {
		status, _, body := e.send(request{method: "POST", path: "/agents.v1.SessionService/CreateSession", body: tc.body})
		msg := string(body)
		if status != http.StatusBadRequest || !strings.Contains(msg, tc.want) || strings.Contains(msg, "proto:") || strings.Contains(msg, "agentsv1.") {
			t.Errorf("%s: %d %s, want 400 saying %q", tc.body, status, body, tc.want)
		}
	}
}
