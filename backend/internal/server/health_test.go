package server_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/tools/fakellm"
)

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	for _, path := range []string{"/healthz", "/readyz"} {
		status, _, body := e.send(request{method: "GET", path: path})
		if status != http.StatusOK {
			t.Errorf("%s = %d %s, want 200", path, status, body)
		}
	}
	e.srvDrain()
	status, _, body := e.send(request{method: "GET", path: "/readyz"})
	if status != http.StatusServiceUnavailable || !strings.Contains(string(body), "shutting down") {
		t.Errorf("/readyz while draining = %d %s, want 503 saying it shuts down", status, body)
	}
	if status, _, _ := e.send(request{method: "GET", path: "/healthz"}); status != http.StatusOK {
		t.Errorf("/healthz while draining = %d, want 200 (the process is alive)", status)
	}

	_ = e.store.Close()
	status, _, body = e.send(request{method: "GET", path: "/readyz"})
	if status != http.StatusServiceUnavailable || !strings.Contains(string(body), "store unreachable") {
		t.Errorf("/readyz with the store closed = %d %s, want 503 naming the store", status, body)
	}
}

// metricValue returns the value of the sample whose name and labels are
// exactly series, -1 when it is absent.
func metricValue(t *testing.T, exposition, series string) float64 {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	m := re.FindStringSubmatch(exposition)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%s: %v", series, err)
	}
	return v
}

func TestMetricsCountRunsStepsToolsAndSessions(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript(), withMetrics(), withSecurity(server.Security{Tokens: testTokens(t)}))
	feed := e.openSSE("/v1/events?scope=all", "Authorization", "Bearer "+adminToken)
	id := e.createAs(aliceToken)
	status, _, body := e.send(request{method: "POST", path: "/v1/sessions/" + id + "/messages", body: `{"text": "go"}`, header: bearer(aliceToken)})
	if status != http.StatusOK {
		t.Fatalf("post: %d %s", status, body)
	}
	// The run is over, for the metrics too, once its run.stopped went out.
	for {
		f, ok := feed.next(t)
		if !ok {
			t.Fatal("stream ended before run.stopped")
		}
		if f.event == "run.stopped" && f.eventOf(t).GetSessionId() == id {
			break
		}
	}

	if status, _, _ := e.send(request{method: "GET", path: "/metrics"}); status != http.StatusUnauthorized {
		t.Errorf("/metrics without a token = %d, want 401", status)
	}
	if status, _, _ := e.send(request{method: "GET", path: "/metrics", header: bearer(aliceToken)}); status != http.StatusForbidden {
		t.Errorf("/metrics as a non-admin = %d, want 403", status)
	}
	// Counting is asynchronous to the stream the test read; poll briefly.
	var out string
	for range 200 {
		status, _, b := e.send(request{method: "GET", path: "/metrics", header: bearer(adminToken)})
		if status != http.StatusOK {
			t.Fatalf("/metrics as admin = %d %s", status, b)
		}
		out = string(b)
		if metricValue(t, out, `agents_runs_stopped_total{reason="done"}`) >= 2 {
			break
		}
	}
	checks := []struct {
		series string
		min    float64
	}{
		{`agents_sessions{status="ready"}`, 2}, // the boss and its helper
		{`agents_sessions{status="running"}`, 0},
		{`agents_runs_started_total{trigger="message"}`, 2},
		{`agents_runs_stopped_total{reason="done"}`, 2},
		{`agents_steps_total`, 4},
		{`agents_step_duration_seconds_count`, 4},
		{`agents_model_call_duration_seconds_count`, 4},
		{`agents_tool_call_duration_seconds_count{status="ok"}`, 2},
		{`agents_events_total{kind="text.delta"}`, 1},
		{`agents_subscribers`, 2}, // the test's stream and the metrics' own
		{`agents_subscribers_lagged_total`, 0},
		{`agents_requests_total{code="ok",procedure="POST /v1/sessions/{id}/messages"}`, 1},
		{`agents_requests_total{code="unauthenticated",procedure="other"}`, 1},
	}
	for _, c := range checks {
		if v := metricValue(t, out, c.series); v < c.min {
			t.Errorf("%s = %v, want at least %v", c.series, v, c.min)
		}
	}
	if v := metricValue(t, out, `agents_sessions{status="running"}`); v != 0 {
		t.Errorf("running sessions after the run = %v, want 0", v)
	}
}

// A stop reason is a client's own words: the metrics count it as "other",
// so no client can make a label value (and a new series) of its choice.
func TestMetricsLabelAStopReasonOfAClientsOwnAsOther(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "slow", InitialDelay: "30s"}}, withMetrics())
	feed := e.openSSE("/v1/events")
	id := e.create("boss", "talk").GetMeta().GetId()
	const reason = "made up by a client 4f2a"
	status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/mail", `{"body": {"control": {"stopRun": {"reason": "`+reason+`"}}}}`)
	if status != http.StatusCreated {
		t.Fatalf("stop_run mail: %d %s", status, body)
	}
	for {
		f, ok := feed.next(t)
		if !ok {
			t.Fatal("stream ended before run.stopped")
		}
		if f.event == "run.stopped" && f.eventOf(t).GetSessionId() == id {
			if got := f.eventOf(t).GetRunStopped().GetReason(); got != reason {
				t.Fatalf("run.stopped reason %q, want the client's %q", got, reason)
			}
			break
		}
	}
	var out string
	for range 200 {
		status, _, b := e.do(http.MethodGet, "/metrics", "")
		if status != http.StatusOK {
			t.Fatalf("/metrics = %d %s", status, b)
		}
		if out = string(b); metricValue(t, out, `agents_runs_stopped_total{reason="other"}`) >= 1 {
			break
		}
	}
	if v := metricValue(t, out, `agents_runs_stopped_total{reason="other"}`); v != 1 {
		t.Errorf(`agents_runs_stopped_total{reason="other"} = %v, want 1`, v)
	}
	if strings.Contains(out, reason) {
		t.Errorf("the client's reason is a label value:\n%s", grepLines(out, reason))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
