package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/tools/fakellm"
)

// Only an admin sets budgets; an owner reads its own budget and usage,
// not another's.
func TestOnlyAnAdminSetsBudgetsAndOwnersReadTheirOwn(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript(), withSecurity(server.Security{Tokens: testTokens(t)}))
	put := request{method: "PUT", path: "/v1/owners/alice/budget", body: `{"tokens": 1000, "cost_usd": 2.5, "period": "month", "auto_resume": true}`}

	put.header = bearer(aliceToken)
	if status, _, body := e.send(put); status != http.StatusForbidden {
		t.Fatalf("PUT as alice = %d %s, want 403", status, body)
	}
	put.header = bearer(adminToken)
	status, _, body := e.send(put)
	if status != http.StatusOK {
		t.Fatalf("PUT as admin = %d %s", status, body)
	}
	var got struct {
		Owner  string `json:"owner"`
		Period string `json:"period"`
		Source string `json:"source"`
		Budget struct {
			Tokens     int64   `json:"tokens"`
			CostUSD    float64 `json:"cost_usd"`
			AutoResume bool    `json:"auto_resume"`
		} `json:"budget"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Owner != "alice" || got.Period != "month" || got.Source != "owner" || got.Budget.Tokens != 1000 || got.Budget.CostUSD != 2.5 || !got.Budget.AutoResume {
		t.Fatalf("budget = %s", body)
	}

	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"alice reads her budget", "/v1/owners/alice/budget", aliceToken, 200},
		{"alice reads her usage", "/v1/owners/alice/usage", aliceToken, 200},
		{"alice reads the admin's usage", "/v1/owners/admin/usage", aliceToken, 403},
		{"the admin reads alice's usage", "/v1/owners/alice/usage", adminToken, 200},
	} {
		if status, _, body := e.send(request{method: "GET", path: tc.path, header: bearer(tc.token)}); status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.want)
		}
	}
}

// An answer's usage carries its cost under the price table, the session
// its tree's spend, and /metrics the tokens and cost by owner and model.
func TestUsageCarriesCostAndMetricsCountItByOwnerAndModel(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{Default: &fakellm.Reply{Text: "hi", Usage: fakellm.Usage{PromptTokens: 1000, CompletionTokens: 500, CachedTokens: 200}}}
	e := start(t, rules, withMetrics(), withSecurity(server.Security{Tokens: testTokens(t)}), withRunner(func(o *runner.Options) {
		o.Budgets.Prices = map[string]session.Price{"test-model": {InputPerMTok: 1, CachedInputPerMTok: 0.5, OutputPerMTok: 2}}
	}))
	status, _, body := e.send(request{method: "POST", path: "/v1/sessions?wait=true", body: `{"agent": "boss", "message": {"text": "hi"}, "budget": {"tokens": 10000}}`, header: bearer(aliceToken)})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var s struct {
		Usage struct {
			CostUSD *float64 `json:"cost_usd"`
		} `json:"usage"`
		Budget struct {
			Spent struct {
				Tokens int64 `json:"tokens"`
			} `json:"spent"`
			Left struct {
				Tokens int64 `json:"tokens"`
			} `json:"left"`
		} `json:"budget"`
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	// 800 input tokens at $1, 200 cached at $0.5, 500 output at $2 per
	// million.
	if s.Usage.CostUSD == nil || *s.Usage.CostUSD != 0.0019 {
		t.Fatalf("cost = %v, want 0.0019: %s", s.Usage.CostUSD, body)
	}
	if s.Budget.Spent.Tokens != 1500 || s.Budget.Left.Tokens != 8500 {
		t.Fatalf("budget = %+v, want 1500 spent and 8500 left", s.Budget)
	}
	var out string
	for range 200 {
		_, _, b := e.send(request{method: "GET", path: "/metrics", header: bearer(adminToken)})
		out = string(b)
		if strings.Contains(out, "agents_model_cost_usd_total") {
			break
		}
	}
	for series, want := range map[string]float64{
		`agents_model_tokens_total{model="test-model",owner="alice",type="input"}`:        1000,
		`agents_model_tokens_total{model="test-model",owner="alice",type="output"}`:       500,
		`agents_model_tokens_total{model="test-model",owner="alice",type="cached_input"}`: 200,
		`agents_model_cost_usd_total{model="test-model",owner="alice"}`:                   0.0019,
	} {
		if v := metricValue(t, out, series); v != want {
			t.Errorf("%s = %v, want %v", series, v, want)
		}
	}
}

// PATCH changes a root session's budget and title; it refuses a request
// that changes nothing and limits that are negative, naming the field.
func TestPatchChangesASessionsBudgetAndTitle(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript())
	status, _, body := e.send(request{method: "POST", path: "/v1/sessions", body: `{"agent": "boss"}`})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	path := "/v1/sessions/" + created.ID
	status, _, body = e.send(request{method: "PATCH", path: path, body: `{"budget": {"tokens": 500, "cost_usd": 0.25, "auto_resume": true}, "title": "capped"}`})
	if status != http.StatusOK {
		t.Fatalf("patch: %d %s", status, body)
	}
	var meta struct {
		Title  string `json:"title"`
		Budget struct {
			Budget *struct {
				Tokens     int64   `json:"tokens"`
				CostUSD    float64 `json:"cost_usd"`
				AutoResume bool    `json:"auto_resume"`
			} `json:"budget"`
		} `json:"budget"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Title != "capped" || meta.Budget.Budget == nil || meta.Budget.Budget.Tokens != 500 || meta.Budget.Budget.CostUSD != 0.25 || !meta.Budget.Budget.AutoResume {
		t.Fatalf("after the patch: %s", body)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"nothing to change", `{}`, "set budget or title"},
		{"negative tokens", `{"budget": {"tokens": -1}}`, "budget.tokens is -1: it must not be negative"},
		{"negative cost", `{"budget": {"cost_usd": -0.5}}`, "budget.cost_usd must be a number of US dollars from 0 to 1000000000, got -0.5"},
	} {
		status, _, body := e.send(request{method: "PATCH", path: path, body: tc.body})
		if status != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want 400 saying %q", tc.name, status, body, tc.want)
		}
	}
	status, _, body = e.send(request{method: "PATCH", path: path, body: `{"budget": {}}`})
	if status != http.StatusOK || !strings.Contains(string(body), `"budget":{"budget":null`) {
		t.Errorf("removing the limits: %d %s", status, body)
	}
}

// An owner's name is printed by every client: one with a control
// character (an escape sequence) is refused, not stored.
func TestAnOwnerNameWithControlCharactersIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{})
	status, _, body := e.do("PUT", "/v1/owners/eve%1B%5D0%3Bowned%07/budget", `{"tokens": 1000}`)
	if code, reason, _ := jsonError(t, body); status != 400 || reason != "invalid_argument" {
		t.Fatalf("PUT with an escape in the owner = %d %s %s", status, code, reason)
	}
}

// GET /v1/owners/{owner}/usage?bucket=day adds the usage over time: the
// owner's model calls per UTC day, by agent and model; an admin may ask
// for every owner's, each row naming its owner; a bad range is a 400.
func TestUsageSeriesSumsModelCallsPerBucket(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{Default: &fakellm.Reply{Text: "hi", Usage: fakellm.Usage{PromptTokens: 1000, CompletionTokens: 500}}}
	e := start(t, rules, withSecurity(server.Security{Tokens: testTokens(t)}), withRunner(func(o *runner.Options) {
		o.Budgets.Prices = map[string]session.Price{"test-model": {InputPerMTok: 1, OutputPerMTok: 2}}
	}))
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for _, token := range []string{aliceToken, aliceToken, bobToken} {
		if status, _, body := e.send(request{method: "POST", path: "/v1/sessions?wait=true", body: `{"agent": "boss", "message": {"text": "hi"}}`, header: bearer(token)}); status != http.StatusCreated {
			t.Fatalf("create: %d %s", status, body)
		}
	}
	type point struct {
		Start            string  `json:"start"`
		Owner            string  `json:"owner"`
		Agent            string  `json:"agent"`
		Model            string  `json:"model"`
		Calls            int64   `json:"calls"`
		PromptTokens     int64   `json:"prompt_tokens"`
		CompletionTokens int64   `json:"completion_tokens"`
		CostUSD          float64 `json:"cost_usd"`
	}
	read := func(path, token string) (since, until string, points []point) {
		t.Helper()
		status, _, body := e.send(request{method: "GET", path: path, header: bearer(token)})
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		var u struct {
			Series struct {
				Bucket string  `json:"bucket"`
				Since  string  `json:"since"`
				Until  string  `json:"until"`
				Points []point `json:"points"`
			} `json:"series"`
		}
		if err := json.Unmarshal(body, &u); err != nil {
			t.Fatal(err)
		}
		return u.Series.Since, u.Series.Until, u.Series.Points
	}
	if !time.Now().UTC().Truncate(24 * time.Hour).Equal(today) {
		t.Skip("the calls were made on both sides of a UTC midnight")
	}
	since, until, points := read("/v1/owners/alice/usage?bucket=day", aliceToken)
	if since != today.AddDate(0, 0, -29).Format(time.RFC3339) || until != today.AddDate(0, 0, 1).Format(time.RFC3339) {
		t.Errorf("default range %s – %s, want the 30 days to the end of today", since, until)
	}
	// Two calls of 1000 input tokens at $1 and 500 output at $2 per
	// million: $0.004.
	want := point{Start: today.Format(time.RFC3339), Owner: "alice", Agent: "boss", Model: "test-model", Calls: 2, PromptTokens: 2000, CompletionTokens: 1000, CostUSD: 0.004}
	if len(points) != 1 || points[0] != want {
		t.Fatalf("alice's days = %+v, want %+v", points, want)
	}
	_, _, points = read("/v1/owners/bob/usage?bucket=hour&all_owners=true&since="+today.Format(time.RFC3339), adminToken)
	if len(points) != 2 || points[0].Owner != "alice" || points[1].Owner != "bob" || points[1].Calls != 1 {
		t.Fatalf("every owner's hours = %+v, want alice's and bob's", points)
	}

	for _, tc := range []struct {
		name, path, token string
		want              int
	}{
		{"every owner's as alice", "/v1/owners/alice/usage?bucket=day&all_owners=true", aliceToken, 403},
		{"since after until", "/v1/owners/alice/usage?bucket=day&since=2026-03-05T00:00:00Z&until=2026-03-01T00:00:00Z", aliceToken, 400},
		{"too many hours", "/v1/owners/alice/usage?bucket=hour&since=2026-01-01T00:00:00Z&until=2026-03-01T00:00:00Z", aliceToken, 400},
		{"a since that is no time", "/v1/owners/alice/usage?bucket=day&since=yesterday", aliceToken, 400},
		{"an unknown bucket", "/v1/owners/alice/usage?bucket=week", aliceToken, 400},
		{"a range with no bucket", "/v1/owners/alice/usage?since=2026-03-01T00:00:00Z", aliceToken, 400},
	} {
		if status, _, body := e.send(request{method: "GET", path: tc.path, header: bearer(tc.token)}); status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.want)
		}
	}
}
