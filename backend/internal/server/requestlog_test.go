package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/tools/fakellm"
)

// hangingModel answers after an hour, so a run stays running.
var hangingModel = fakellm.Rules{Default: &fakellm.Reply{InitialDelay: "1h", Text: "late"}}

// logLine is the request line of the server's log.
type logLine struct {
	Level, Msg, Method, Path, Procedure, Code string
	Status                                    int
}

// requestLines decodes the request lines of a JSON log.
func requestLines(t *testing.T, log string) []logLine {
	t.Helper()
	var out []logLine
	for _, raw := range strings.Split(strings.TrimSpace(log), "\n") {
		var l logLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		if l.Msg == "request" {
			out = append(out, l)
		}
	}
	return out
}

// findLine returns the request line of method and path that has status.
func findLine(t *testing.T, log, method, path string, status int) (logLine, bool) {
	t.Helper()
	for _, l := range requestLines(t, log) {
		if l.Method == method && l.Path == path && l.Status == status {
			return l, true
		}
	}
	return logLine{}, false
}

// TestAClientsOwnDeadlineIsDeadlineExceeded: when the deadline a Connect
// client set (Connect-Timeout-Ms) passes during a long poll, the answer is
// deadline_exceeded with the protocol's 504, logged at INFO: it is how the
// client chose the call to end, not a fault of the server.
func TestAClientsOwnDeadlineIsDeadlineExceeded(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	e := start(t, hangingModel, withLogTo(&log))
	id := e.create("boss", "go").GetMeta().GetId()

	status, _, body := e.send(request{
		method: "POST", path: "/agents.v1.SessionService/GetSession",
		body:   `{"sessionId": "` + id + `", "wait": true}`,
		header: map[string]string{"Connect-Timeout-Ms": "100"},
	})
	var got struct{ Code string }
	if err := json.Unmarshal(body, &got); err != nil || status != http.StatusGatewayTimeout || got.Code != "deadline_exceeded" {
		t.Errorf("long poll past the client's deadline = %d %s, want 504 deadline_exceeded", status, body)
	}
	e.stop()
	line, ok := findLine(t, log.String(), "POST", "/agents.v1.SessionService/GetSession", http.StatusGatewayTimeout)
	if !ok || line.Level != "INFO" || line.Code != "deadline_exceeded" {
		t.Errorf("log line = %+v (found %v), want INFO deadline_exceeded:\n%s", line, ok, log.String())
	}
}

// TestClientErrorsLogAtInfoAndServerErrorsAtError: the request log tells
// the caller's mistakes (INFO) from the server's faults (ERROR), with the
// Connect code of each, including refusals no handler wrote: a wrong
// Content-Type, a wrong method, an unknown route.
func TestClientErrorsLogAtInfoAndServerErrorsAtError(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	e := start(t, hangingModel, withSecurity(server.Security{Tokens: testTokens(t)}), withLogTo(&log))
	admin := bearer(adminToken)
	id := e.createAs(aliceToken)
	if status, _, body := e.send(request{method: "POST", path: "/v1/sessions/" + id + "/messages", body: `{"text": "go"}`, header: bearer(aliceToken)}); status != http.StatusOK {
		t.Fatalf("post: %d %s", status, body)
	}

	tests := []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"wrong content type", request{method: "POST", path: "/agents.v1.SessionService/GetSession", body: `{}`, header: map[string]string{"Authorization": "Bearer " + adminToken, "Content-Type": "text/plain"}}, 415, "invalid_argument"},
		{"GET of a procedure with side effects", request{method: "GET", path: "/agents.v1.SessionService/CreateSession?encoding=json&message={}", header: admin}, 405, "unimplemented"},
		{"wrong method on a route", request{method: "PUT", path: "/v1/sessions", header: admin}, 405, "unimplemented"},
		{"unknown route", request{method: "GET", path: "/v1/nope", header: admin}, 404, "not_found"},
		{"unknown procedure", request{method: "POST", path: "/agents.v1.SessionService/Nope", body: `{}`, header: admin}, 404, "not_found"},
		{"no token", request{method: "GET", path: "/v1/sessions"}, 401, "unauthenticated"},
		{"not an admin", request{method: "GET", path: "/v1/sessions?scope=all", header: bearer(aliceToken)}, 403, "permission_denied"},
		{"bad filter", request{method: "GET", path: "/v1/sessions?status=sleepy", header: admin}, 400, "invalid_argument"},
		{"unknown session", request{method: "GET", path: "/v1/sessions/nope", header: admin}, 404, "not_found"},
		{"unknown session over Connect", request{method: "POST", path: "/agents.v1.SessionService/CancelRun", body: `{"sessionId": "nope"}`, header: admin}, 404, "not_found"},
		{"bad Connect JSON", request{method: "POST", path: "/agents.v1.SessionService/Pause", body: `{"sessionId":`, header: admin}, 400, "invalid_argument"},
		{"bad gRPC-Web message", request{method: "POST", path: "/agents.v1.SessionService/ListSessions", body: "\x00\x00\x00\x00\x03\xff\xff\xff", header: map[string]string{"Authorization": "Bearer " + adminToken, "Content-Type": "application/grpc-web+proto"}}, 200, "invalid_argument"},
		{"client's deadline", request{method: "POST", path: "/agents.v1.SessionService/GetSession", body: `{"sessionId": "` + id + `", "wait": true}`, header: map[string]string{"Authorization": "Bearer " + aliceToken, "Connect-Timeout-Ms": "50"}}, 504, "deadline_exceeded"},
	}
	for _, tc := range tests {
		if status, _, body := e.send(tc.req); status != tc.status {
			t.Errorf("%s: status = %d, want %d (%s)", tc.name, status, tc.status, body)
		}
	}

	// A client that leaves during a long poll: it cancelled the call.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { cancel() }})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.http.URL+"/v1/sessions/"+id+"?wait=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	if res, err := e.http.Client().Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("the cancelled long poll answered %d", res.StatusCode)
	}
	waitForLine := func(method, path string, status int) logLine {
		t.Helper()
		for range 200 {
			if l, ok := findLine(t, log.String(), method, path, status); ok {
				return l
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("no log line for %s %s %d:\n%s", method, path, status, log.String())
		return logLine{}
	}
	canceled := waitForLine("GET", "/v1/sessions/"+id, 499)

	// A store that is gone is the server's fault.
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	if status, _, body := e.send(request{method: "GET", path: "/v1/sessions", header: admin}); status != http.StatusInternalServerError {
		t.Errorf("listing without a store: %d %s, want 500", status, body)
	}
	internal := waitForLine("GET", "/v1/sessions", 500)

	out := log.String()
	for _, tc := range tests {
		l, ok := findLine(t, out, tc.req.method, strings.Split(tc.req.path, "?")[0], tc.status)
		if !ok {
			t.Errorf("%s: no log line", tc.name)
			continue
		}
		if l.Level != "INFO" || l.Code != tc.code {
			t.Errorf("%s: logged %s %s, want INFO %s", tc.name, l.Level, l.Code, tc.code)
		}
	}
	if canceled.Level != "INFO" || canceled.Code != "canceled" {
		t.Errorf("the cancelled long poll logged %s %s, want INFO canceled", canceled.Level, canceled.Code)
	}
	if internal.Level != "ERROR" || internal.Code != "internal" {
		t.Errorf("the failed listing logged %s %s, want ERROR internal", internal.Level, internal.Code)
	}
}

// TestProbesAndScrapesAreNotActivity: a liveness or readiness probe and
// a metrics scrape do not count as serving, so a server probed every few
// seconds and scraped every minute is still idle and gives its pages back
// (cli's releaseWhenIdle); they are counted apart, as what mapped pages
// to give back. Any other request, a refused one included, counts.
func TestProbesAndScrapesAreNotActivity(t *testing.T) {
	t.Parallel()
	e := start(t, hangingModel, withMetrics())
	before, probedBefore, _ := e.srv.Activity()
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		for _, method := range []string{"GET", "HEAD"} {
			if status, _, body := e.send(request{method: method, path: path}); status != http.StatusOK {
				t.Fatalf("%s %s = %d %s", method, path, status, body)
			}
		}
	}
	if after, probed, open := e.srv.Activity(); after != before || open != 0 || probed != probedBefore+6 {
		t.Errorf("after probes and a scrape: activity %d → %d (%d open), probes %d → %d; want activity unchanged, 6 probes", before, after, open, probedBefore, probed)
	}
	for _, req := range []request{
		{method: "GET", path: "/v1/agents"},
		{method: "POST", path: "/healthz"},
		{method: "GET", path: "/healthz/extra"},
	} {
		before, _, _ := e.srv.Activity()
		e.send(req)
		if after, _, _ := e.srv.Activity(); after == before {
			t.Errorf("%s %s did not count as activity", req.method, req.path)
		}
	}
}
