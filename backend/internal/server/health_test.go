package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

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

// fakeLeases reports the lease counts a test sets.
type fakeLeases struct {
	mu sync.Mutex
	st server.LeaseStats
}

func (f *fakeLeases) LeaseStats() server.LeaseStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}

func (f *fakeLeases) set(st server.LeaseStats) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st = st
}

type fakeFeed time.Duration

func (f fakeFeed) Lag() time.Duration { return time.Duration(f) }

// On a database shared with other servers /readyz reports the leases, and
// fails when the ones held were not renewed for longer than they last.
func TestReadinessReportsTheLeasesAndFailsWhenTheyAreNotRenewed(t *testing.T) {
	t.Parallel()
	leases := &fakeLeases{}
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withCluster(leases, fakeFeed(0)))
	renewed := time.Now().Add(-time.Second)
	leases.set(server.LeaseStats{Held: 2, RenewedAt: renewed, TTL: 10 * time.Second})
	status, _, body := e.send(request{method: "GET", path: "/readyz"})
	var got struct {
		Status, Database string
		Problems         []string
		Leases           struct {
			Held       int
			RenewedAt  time.Time `json:"renewed_at"`
			TTLSeconds float64   `json:"ttl_seconds"`
		}
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("/readyz body %s: %v", body, err)
	}
	if status != http.StatusOK || got.Status != "ready" || got.Database != "ok" || got.Leases.Held != 2 || got.Leases.TTLSeconds != 10 || !got.Leases.RenewedAt.Equal(renewed) {
		t.Errorf("/readyz with leases renewed a second ago = %d %s, want 200 ready with the database ok, 2 leases held, renewed at %v, lasting 10s", status, body, renewed)
	}

	leases.set(server.LeaseStats{Held: 2, RenewedAt: time.Now().Add(-30 * time.Second), TTL: 10 * time.Second})
	status, _, body = e.send(request{method: "GET", path: "/readyz"})
	if status != http.StatusServiceUnavailable || !strings.Contains(string(body), "leases not renewed for 30s (they last 10s)") {
		t.Errorf("/readyz with leases renewed 30s ago = %d %s, want 503 saying they were not renewed", status, body)
	}

	// Holding none, a renewal long ago is no problem.
	leases.set(server.LeaseStats{RenewedAt: time.Now().Add(-time.Hour), TTL: 10 * time.Second})
	if status, _, body := e.send(request{method: "GET", path: "/readyz"}); status != http.StatusOK {
		t.Errorf("/readyz holding no lease = %d %s, want 200", status, body)
	}
}

// /metrics reads the lease counts and the cross-server lag at each
// scrape; a server alone on its database has no such series.
func TestMetricsReportLeasesAndCrossServerLag(t *testing.T) {
	t.Parallel()
	leases := &fakeLeases{}
	leases.set(server.LeaseStats{Held: 3, Claims: 7, Failovers: 2, Lost: 1, RenewedAt: time.Now(), TTL: 10 * time.Second})
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withMetrics(), withCluster(leases, fakeFeed(250*time.Millisecond)))
	status, _, body := e.send(request{method: "GET", path: "/metrics"})
	if status != http.StatusOK {
		t.Fatalf("/metrics = %d %s", status, body)
	}
	for series, want := range map[string]float64{
		"agents_leases_held":               3,
		"agents_lease_claims_total":        7,
		"agents_lease_failovers_total":     2,
		"agents_leases_lost_total":         1,
		"agents_cluster_event_lag_seconds": 0.25,
	} {
		if got := metricValue(t, string(body), series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if age := metricValue(t, string(body), "agents_lease_renewal_age_seconds"); age < 0 || age > 60 {
		t.Errorf("agents_lease_renewal_age_seconds = %v, want the few seconds since the renewal", age)
	}

	alone := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withMetrics())
	_, _, body = alone.send(request{method: "GET", path: "/metrics"})
	for _, series := range []string{"agents_leases_held", "agents_cluster_event_lag_seconds"} {
		if got := metricValue(t, string(body), series); got != -1 {
			t.Errorf("%s = %v on a server alone on its database, want no such series", series, got)
		}
	}
}

// Issue 33, item 1: on PostgreSQL, /readyz fails while what is written
// cannot reach readers though the database answers reads: another
// connection holds the lock every numbering of events takes. It is ready
// again once the lock is free.
func TestReadinessFailsWhileTheStoreCannotWrite(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, on(onPostgres))
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT last FROM event_positions FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	status, _, body := e.send(request{method: "GET", path: "/readyz"})
	var got struct {
		Database string
		Problems []string
	}
	_ = json.Unmarshal(body, &got)
	if status != http.StatusServiceUnavailable || got.Database != "cannot write" || !slices.Contains(got.Problems, "store cannot write") {
		t.Errorf("/readyz while another holds the event positions' lock = %d %s, want 503, the store cannot write", status, body)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if status, _, body := e.send(request{method: "GET", path: "/readyz"}); status != http.StatusOK {
		t.Errorf("/readyz once the lock is free = %d %s, want 200", status, body)
	}
}
