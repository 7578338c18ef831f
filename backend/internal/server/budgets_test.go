package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agents-os/agents/backend/internal/server"
)

// Only an admin sets budgets; an owner reads its own budget and usage,
// not another's.
func TestOnlyAnAdminSetsBudgetsAndOwnersReadTheirOwn(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript(), withSecurity(server.Security{Tokens: testTokens(t)}))
	put := request{method: "PUT", path: "/v1/owners/alice/budget", body: `{"tokens": 1000, "cost_usd": 2.5, "period": "month"}`}

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
			Tokens  int64   `json:"tokens"`
			CostUSD float64 `json:"cost_usd"`
		} `json:"budget"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Owner != "alice" || got.Period != "month" || got.Source != "owner" || got.Budget.Tokens != 1000 || got.Budget.CostUSD != 2.5 {
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
