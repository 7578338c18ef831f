package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
)

// TestOpenAPIDescribesWhatIsServed sends a request to every route of
// /openapi.json, and some that fail, and validates each request and its
// answer against the document the server serves.
func TestOpenAPIDescribesWhatIsServed(t *testing.T) {
	t.Parallel()
	e := start(t, twoQuestions())
	_, _, spec := e.do("GET", "/openapi.json", "")
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("the document does not load: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		t.Fatalf("the document is not valid OpenAPI: %v", verrs)
	}

	covered := map[string]bool{}
	// call sends a request, validates it and its answer, and returns the
	// answer's body; route is the operation it covers.
	call := func(route, method, path, body string, want int) []byte {
		t.Helper()
		req, err := http.NewRequestWithContext(ctxFor(t), method, e.http.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := e.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		_ = res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != want {
			t.Fatalf("%s %s = %d %s, want %d", method, path, res.StatusCode, b, want)
		}
		res.Body = io.NopCloser(bytes.NewReader(b))
		req.Body = io.NopCloser(strings.NewReader(body))
		// A request meant to fail is not one the document describes;
		// its answer is.
		validate := v.ValidateHttpRequestResponse
		if res.StatusCode >= 400 {
			validate = func(_ *http.Request, res *http.Response) (bool, []*verrors.ValidationError) {
				return v.ValidateHttpResponse(req, res)
			}
		}
		if ok, verrs := validate(req, res); !ok {
			for _, ve := range verrs {
				t.Errorf("%s %s: %s: %s %v", method, path, ve.Message, ve.Reason, ve.SchemaValidationErrors)
			}
		}
		if route != "" {
			covered[route] = true
		}
		return b
	}
	field := func(b []byte, path ...string) string {
		t.Helper()
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		for _, p := range path {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				v = x[0]
			}
		}
		s, _ := v.(string)
		return s
	}

	call("GET /v1/agents", "GET", "/v1/agents", "", 200)
	call("GET /v1/agents/{slug}", "GET", "/v1/agents/clienty", "", 200)
	call("POST /v1/agents:reload", "POST", "/v1/agents:reload", "", 200)
	stored := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "kept", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "modelName": "m"}}`
	call("POST /v1/agents", "POST", "/v1/agents", stored, 201)
	call("PUT /v1/agents/{slug}", "PUT", "/v1/agents/kept?expected_version=1", strings.Replace(stored, `"m"}`, `"m2"}`, 1), 200)
	call("GET /v1/agents/{slug}/versions", "GET", "/v1/agents/kept/versions", "", 200)
	call("POST /v1/agents/{slug}/rollback", "POST", "/v1/agents/kept/rollback", `{"version": 1, "expected_version": 2}`, 200)
	call("", "POST", "/v1/agents/kept/rollback", `{"version": 9}`, 404)
	call("", "PUT", "/v1/agents/kept?expected_version=1", stored, 409)
	call("", "POST", "/v1/agents", `{"tag": "OpenAIAgentDescription", "contents": {"slug": "bad"}}`, 400)
	call("DELETE /v1/agents/{slug}", "DELETE", "/v1/agents/kept", "", 200)
	created := call("POST /v1/sessions", "POST", "/v1/sessions?wait=true", `{"agent": "clienty", "message": {"text": "ask me"}}`, 201)
	id := field(created, "id")
	call("GET /v1/sessions", "GET", "/v1/sessions?limit=1&status=waiting", "", 200)
	got := call("GET /v1/sessions/{id}", "GET", "/v1/sessions/"+id, "", 200)
	var pending struct {
		DeferredCalls []struct{ Token string } `json:"deferred_calls"`
	}
	if err := json.Unmarshal(got, &pending); err != nil || len(pending.DeferredCalls) != 2 {
		t.Fatalf("deferred calls of %s: %v", got, err)
	}
	call("GET /v1/sessions/{id}", "GET", "/v1/sessions/"+id+"?view=meta", "", 200)
	call("POST /v1/calls/{token}/complete", "POST", "/v1/calls/"+pending.DeferredCalls[0].Token+"/complete", `{"text": "blue"}`, 200)
	call("POST /v1/calls/{token}/complete", "POST", "/v1/calls/"+pending.DeferredCalls[1].Token+"/complete", `{"error": "no idea", "resume": true}`, 200)
	call("GET /v1/sessions/{id}", "GET", "/v1/sessions/"+id+"?wait=true&after_turn=1", "", 200)
	call("POST /v1/sessions/{id}/mail", "POST", "/v1/sessions/"+id+"/mail", `{"text": "a note", "priority": "normal"}`, 201)
	call("GET /v1/sessions/{id}/mail", "GET", "/v1/sessions/"+id+"/mail?pending=true", "", 200)
	call("POST /v1/sessions/{id}/messages", "POST", "/v1/sessions/"+id+"/messages", `{"text": "and this"}`, 200)
	call("POST /v1/sessions/{id}/pause", "POST", "/v1/sessions/"+id+"/pause", "", 200)
	call("POST /v1/sessions/{id}/resume", "POST", "/v1/sessions/"+id+"/resume", `{"params": {}}`, 200)
	call("POST /v1/sessions/{id}/cancel-attached", "POST", "/v1/sessions/"+id+"/cancel-attached", "", 200)
	call("POST /v1/sessions/{id}/cancel", "POST", "/v1/sessions/"+id+"/cancel", "", 200)
	call("POST /v1/sessions/{id}/rename", "POST", "/v1/sessions/"+id+"/rename", `{"title": "renamed"}`, 200)
	call("POST /v1/sessions/{id}/compact", "POST", "/v1/sessions/"+id+"/compact", `{"instruction": "keep the colour"}`, 200)
	call("PATCH /v1/sessions/{id}", "PATCH", "/v1/sessions/"+id, `{"budget": {"tokens": 100000, "cost_usd": 1.5}, "title": "budgeted"}`, 200)
	call("PUT /v1/owners/{owner}/budget", "PUT", "/v1/owners/local/budget", `{"tokens": 1000000, "period": "month"}`, 200)
	call("GET /v1/owners/{owner}/budget", "GET", "/v1/owners/local/budget", "", 200)
	call("GET /v1/owners/{owner}/usage", "GET", "/v1/owners/local/usage", "", 200)
	hook := call("POST /v1/webhooks", "POST", "/v1/webhooks", `{"url": "https://93.184.215.14/hook", "events": ["run.stopped", "call.waiting"]}`, 201)
	hookID := field(hook, "webhook", "id")
	call("GET /v1/webhooks", "GET", "/v1/webhooks?scope=all", "", 200)
	call("GET /v1/webhooks/{id}", "GET", "/v1/webhooks/"+hookID, "", 200)
	call("PATCH /v1/webhooks/{id}", "PATCH", "/v1/webhooks/"+hookID, `{"enabled": false, "description": "off for now"}`, 200)
	call("GET /v1/webhooks/{id}/deliveries", "GET", "/v1/webhooks/"+hookID+"/deliveries?status=pending&limit=5", "", 200)
	call("", "POST", "/v1/webhooks", `{"url": "http://127.0.0.1/hook", "events": ["run.stopped"]}`, 400)
	call("", "GET", "/v1/webhooks/wh_none", "", 404)
	call("DELETE /v1/webhooks/{id}", "DELETE", "/v1/webhooks/"+hookID, "", 200)
	sched := field(call("POST /v1/schedules", "POST", "/v1/schedules", `{"agent": "boss", "cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "message": {"text": "good morning"}, "overlap": "queue", "missed": "once"}`, 201), "id")
	call("GET /v1/schedules", "GET", "/v1/schedules?agent=boss", "", 200)
	call("GET /v1/schedules/{id}", "GET", "/v1/schedules/"+sched, "", 200)
	call("PATCH /v1/schedules/{id}", "PATCH", "/v1/schedules/"+sched, `{"every": "1h", "name": "hourly"}`, 200)
	call("POST /v1/schedules/{id}/pause", "POST", "/v1/schedules/"+sched+"/pause", "", 200)
	call("POST /v1/schedules/{id}/resume", "POST", "/v1/schedules/"+sched+"/resume", "", 200)
	call("POST /v1/schedules/{id}/fire", "POST", "/v1/schedules/"+sched+"/fire", "", 200)
	call("GET /v1/schedules/{id}/firings", "GET", "/v1/schedules/"+sched+"/firings?limit=5", "", 200)
	call("DELETE /v1/schedules/{id}", "DELETE", "/v1/schedules/"+sched, "", 200)
	call("", "GET", "/v1/schedules/"+sched, "", 404)
	call("", "POST", "/v1/schedules", `{"agent": "boss", "cron": "0 7 * *", "message": {"text": "x"}}`, 400)
	other := field(call("", "POST", "/v1/sessions", `{"agent": "boss", "title": "idle"}`, 201), "id")
	call("POST /v1/sessions/{id}/messages", "POST", "/v1/sessions/"+other+"/messages?wait=true&timeout=10s", `{"text": "hi", "run": {"hold": true}}`, 200)
	call("POST /v1/sessions/{id}/watch", "POST", "/v1/sessions/"+id+"/watch", `{"target_id": "`+other+`", "ttl": "10m"}`, 200)
	call("DELETE /v1/sessions/{id}/watch/{target}", "DELETE", "/v1/sessions/"+id+"/watch/"+other, "", 200)
	forked := call("POST /v1/sessions/{id}/fork", "POST", "/v1/sessions/"+other+"/fork", `{"agent": "boss"}`, 201)
	call("GET /v1/sessions/{id}/export", "GET", "/v1/sessions/"+other+"/export?format=json", "", 200)
	call("GET /v1/sessions/{id}/export", "GET", "/v1/sessions/"+other+"/export", "", 200)
	call("DELETE /v1/sessions/{id}", "DELETE", "/v1/sessions/"+field(forked, "id"), "", 200)
	conv := base64.StdEncoding.EncodeToString([]byte(`{"sessionId": "0f1e2d3c-4b5a-4968-8776-655443322110", "turns": []}`))
	call("POST /v1/sessions:import", "POST", "/v1/sessions:import", `{"agent": "boss", "files": [{"name": "conv.json", "content": "`+conv+`"}, {"name": "bad.json", "content": ""}]}`, 200)

	// Errors are described too.
	call("", "GET", "/v1/sessions/00000000-0000-0000-0000-000000000000", "", 404)
	call("", "POST", "/v1/sessions", `{"agent": "nope"}`, 404)
	call("", "POST", "/v1/sessions", `{"agent": 1}`, 400)
	call("", "GET", "/v1/sessions?status=sleepy", "", 400)
	call("", "POST", "/v1/calls/nope/complete", `{"text": "x"}`, 404)

	// The event streams never end, so their answers are checked by hand:
	// the status, the type and the replay header the document declares.
	for _, path := range []string{"/v1/events", "/v1/sessions/" + id + "/events"} {
		s := e.openSSE(path + "?after=0")
		if ct := s.header.Get("Content-Type"); ct != "text/event-stream" || s.header.Get("Agents-Replay") == "" {
			t.Errorf("GET %s: Content-Type %q, Agents-Replay %q", path, ct, s.header.Get("Agents-Replay"))
		}
		s.cancel()
	}
	covered["GET /v1/events"], covered["GET /v1/sessions/{id}/events"] = true, true

	var described struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(spec, &described); err != nil {
		t.Fatal(err)
	}
	for path, ops := range described.Paths {
		for method := range ops {
			if route := strings.ToUpper(method) + " " + path; !covered[route] {
				t.Errorf("%s is described but not exercised", route)
			}
		}
	}
}
