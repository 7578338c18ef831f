//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// Schedules against real servers: an interval fires once per tick, on
// one server and on two sharing PostgreSQL while one is killed, times
// missed while every server was down are caught up once, and another
// owner's schedule is out of reach.

func scheduleRules() fakellm.Rules {
	return fakellm.Rules{Default: &fakellm.Reply{Text: "done"}}
}

// call sends a JSON request to a server's routes, with a token when one
// is given, and decodes the answer into out (when not nil).
func call(t *testing.T, base, token, method, path, body string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequestWithContext(ctxFor(t), method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return res.StatusCode
}

type firingJSON struct {
	FireTime  time.Time `json:"fire_time"`
	Status    string    `json:"status"`
	SessionID string    `json:"session_id"`
	CatchUp   bool      `json:"catch_up"`
	Outcome   string    `json:"outcome"`
}

func firingsOf(t *testing.T, base, token, id string) []firingJSON {
	t.Helper()
	var out struct {
		Firings []firingJSON `json:"firings"`
	}
	if code := call(t, base, token, "GET", "/v1/schedules/"+id+"/firings?limit=500", "", &out); code != 200 {
		t.Fatalf("firings of %s: %d", id, code)
	}
	return out.Firings
}

func createSchedule(t *testing.T, base, token, body string) string {
	t.Helper()
	var sc struct {
		ID          string      `json:"id"`
		NextFirings []time.Time `json:"next_firings"`
	}
	if code := call(t, base, token, "POST", "/v1/schedules", body, &sc); code != 201 {
		t.Fatalf("create schedule: %d", code)
	}
	if len(sc.NextFirings) == 0 {
		t.Fatalf("the new schedule shows no next firing")
	}
	return sc.ID
}

// awaitFirings waits until a schedule fired n times.
func awaitFirings(t *testing.T, base, id string, n int, patience time.Duration) []firingJSON {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		f := firingsOf(t, base, "", id)
		if len(f) >= n {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d firings after %s, want %d", len(f), patience, n)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkTicks checks that firings (newest first) are one per tick: their
// times every apart, each in a session of its own, and that the sessions
// listed for the agent are exactly theirs.
func checkTicks(t *testing.T, base string, firings []firingJSON, every time.Duration) {
	t.Helper()
	sessions := map[string]bool{}
	for i, f := range firings {
		if f.Status != "started" || f.SessionID == "" || sessions[f.SessionID] {
			t.Errorf("firing %d: %+v", i, f)
		}
		sessions[f.SessionID] = true
		if i > 0 {
			if gap := firings[i-1].FireTime.Sub(f.FireTime); gap != every {
				t.Errorf("firings %d and %d are %s apart, want %s", i, i-1, gap, every)
			}
		}
	}
	var list struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if code := call(t, base, "", "GET", "/v1/sessions?agent=boss&limit=500", "", &list); code != 200 {
		t.Fatalf("list sessions: %d", code)
	}
	if len(list.Sessions) != len(firings) {
		t.Errorf("%d sessions of the agent for %d firings", len(list.Sessions), len(firings))
	}
	for _, s := range list.Sessions {
		if !sessions[s.ID] {
			t.Errorf("session %s was made by no firing", s.ID)
		}
	}
}

func TestAScheduleEveryTwoSecondsFiresOncePerTickForThirtyTicks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it for a minute")
	}
	t.Parallel()
	model := fakellmtest.Start(t, scheduleRules())
	dir := t.TempDir()
	srv := startServeAgents(t, buildAgents(t), dir, filepath.Join(dir, "agents.db"), model.URL(), crashAgentFiles(t), "")
	id := createSchedule(t, srv.url, "", `{"agent": "boss", "every": "2s", "message": {"text": "tick"}}`)
	awaitFirings(t, srv.url, id, 30, 90*time.Second)
	if code := call(t, srv.url, "", "POST", "/v1/schedules/"+id+"/pause", "", nil); code != 200 {
		t.Fatalf("pause: %d", code)
	}
	checkTicks(t, srv.url, firingsOf(t, srv.url, "", id), 2*time.Second)
}

func TestClusterAScheduleFiresOncePerTickWhileOneOfTwoServersIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	const ttl = 2 * time.Second
	model := fakellmtest.Start(t, scheduleRules())
	servers := startCluster(t, 2, pgtest.DSN(t), model.URL(), "--lease-ttl", ttl.String())
	a, b := servers[0], servers[1]
	id := createSchedule(t, a.url, "", `{"agent": "boss", "every": "2s", "message": {"text": "tick"}}`)
	awaitFirings(t, b.url, id, 8, 60*time.Second)
	a.kill(t)
	killed := time.Now()
	awaitFirings(t, b.url, id, 20, 90*time.Second)
	if code := call(t, b.url, "", "POST", "/v1/schedules/"+id+"/pause", "", nil); code != 200 {
		t.Fatalf("pause: %d", code)
	}
	firings := firingsOf(t, b.url, "", id)
	t.Logf("%d firings; A was killed at %s", len(firings), killed.Format(time.TimeOnly))
	checkTicks(t, b.url, firings, 2*time.Second)
	// The sessions A started and did not finish are finished by B once
	// their leases expire.
	for _, f := range firings {
		if s := b.waitIdleWithin(t, f.SessionID, ttl+20*time.Second); s.GetMeta().GetStatus().String() != "SESSION_STATUS_READY" {
			t.Errorf("session %s: %v", f.SessionID, s.GetMeta().GetStatus())
		}
	}
}

func TestTimesMissedWhileEveryServerWasDownAreCaughtUpOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes")
	}
	t.Parallel()
	model := fakellmtest.Start(t, scheduleRules())
	dir := t.TempDir()
	db := filepath.Join(dir, "agents.db")
	bin := buildAgents(t)
	first := startServeAgents(t, bin, dir, db, model.URL(), crashAgentFiles(t), "")
	id := createSchedule(t, first.url, "", `{"agent": "boss", "every": "2s", "message": {"text": "tick"}, "missed": "once"}`)
	before := len(awaitFirings(t, first.url, id, 2, 30*time.Second))
	first.kill(t)
	// Longer than the grace (15 s): the times in between were missed.
	time.Sleep(20 * time.Second)
	again := startServeAgents(t, bin, dir, db, model.URL(), crashAgentFiles(t), "")
	firings := awaitFirings(t, again.url, id, before+3, 30*time.Second)
	catchUps := 0
	for _, f := range firings {
		if f.CatchUp {
			catchUps++
		}
	}
	if catchUps != 1 {
		t.Fatalf("%d catch-up firings, want 1: %+v", catchUps, firings)
	}
}

func TestAnotherOwnerCannotListFireOrReadASchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(tokens, []byte(`{"tokens": [{"token": "alice-token-0123456789", "owner": "alice"}, {"token": "bob-token-0123456789", "owner": "bob"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	model := fakellmtest.Start(t, scheduleRules())
	srv := startServeAgents(t, buildAgents(t), dir, filepath.Join(dir, "agents.db"), model.URL(), crashAgentFiles(t), "", "--auth-tokens", tokens)
	const alice, bob = "alice-token-0123456789", "bob-token-0123456789"
	id := createSchedule(t, srv.url, alice, `{"agent": "boss", "cron": "0 7 * * 1-5", "timezone": "Europe/Paris", "message": {"text": "morning"}}`)

	var list struct {
		Schedules []struct {
			ID string `json:"id"`
		} `json:"schedules"`
	}
	if code := call(t, srv.url, bob, "GET", "/v1/schedules", "", &list); code != 200 || len(list.Schedules) != 0 {
		t.Errorf("bob lists %d schedules (%d), want none", len(list.Schedules), code)
	}
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/schedules/" + id, ""},
		{"GET", "/v1/schedules/" + id + "/firings", ""},
		{"POST", "/v1/schedules/" + id + "/fire", ""},
		{"POST", "/v1/schedules/" + id + "/pause", ""},
		{"PATCH", "/v1/schedules/" + id, `{"every": "1s"}`},
		{"DELETE", "/v1/schedules/" + id, ""},
	} {
		if code := call(t, srv.url, bob, r.method, r.path, r.body, nil); code != 404 {
			t.Errorf("bob's %s %s = %d, want 404", r.method, r.path, code)
		}
	}
	if f := firingsOf(t, srv.url, alice, id); len(f) != 0 {
		t.Errorf("bob's fire made %d firings", len(f))
	}
	if code := call(t, srv.url, "", "GET", "/v1/schedules/"+id, "", nil); code != 401 {
		t.Errorf("without a token: %d, want 401", code)
	}
	if code := call(t, srv.url, alice, "GET", "/v1/schedules/"+id, "", nil); code != 200 {
		t.Errorf("alice reads her schedule: %d", code)
	}
}
