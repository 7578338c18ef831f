package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/tools/fakellm"
)

// A dollar limit above the most a budget holds is refused with 400 on
// every route that sets one, naming the field and the range, rather than
// stored wrapped around to a negative limit that stops every call.
func TestBudgetCostsOutOfRangeAreRefusedOnEveryRoute(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript())
	const want = "must be a number of US dollars from 0 to 1000000000"
	status, _, body := e.do("POST", "/v1/sessions", `{"agent": "boss"}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var created struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	id := created.ID

	for _, tc := range []struct{ name, method, path, body, field string }{
		{"owner budget", "PUT", "/v1/owners/alice/budget", `{"cost_usd": 1e10}`, "cost_usd"},
		{"new session", "POST", "/v1/sessions", `{"agent": "boss", "budget": {"cost_usd": 1e10}}`, "budget.cost_usd"},
		{"session patch", "PATCH", "/v1/sessions/" + id, `{"budget": {"cost_usd": 9223372037}}`, "budget.cost_usd"},
	} {
		status, _, body := e.do(tc.method, tc.path, tc.body)
		if status != http.StatusBadRequest || !strings.Contains(string(body), tc.field+" "+want) || !strings.Contains(string(body), "invalid_argument") {
			t.Errorf("%s: %d %s, want 400 invalid_argument saying %q", tc.name, status, body, tc.field+" "+want)
		}
	}
	// The largest amount is a limit like any other.
	if status, _, body := e.do("PUT", "/v1/owners/alice/budget", `{"cost_usd": 1e9}`); status != http.StatusOK || !strings.Contains(string(body), `"cost_usd":1e+09`) {
		t.Errorf("the largest limit: %d %s", status, body)
	}

	ctx := ctxFor(t)
	owners := agentsv1connect.NewOwnerServiceClient(e.http.Client(), e.http.URL)
	huge := proto.Float64(1e10)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"SetOwnerBudget", func() error {
			_, err := owners.SetOwnerBudget(ctx, connect.NewRequest(&agentsv1.SetOwnerBudgetRequest{Owner: "alice", CostUsd: huge}))
			return err
		}},
		{"CreateSession", func() error {
			_, err := e.sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss", Budget: &agentsv1.Budget{CostUsd: huge}}))
			return err
		}},
		{"UpdateSession", func() error {
			_, err := e.sessions.UpdateSession(ctx, connect.NewRequest(&agentsv1.UpdateSessionRequest{SessionId: id, Budget: &agentsv1.Budget{CostUsd: huge}}))
			return err
		}},
	} {
		var ce *connect.Error
		if err := tc.call(); !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.Contains(ce.Message(), want) {
			t.Errorf("%s: %v, want invalid_argument saying %q", tc.name, err, want)
		}
	}
}

// An agent's maxSteps beyond what the API carries is refused when the
// agent is stored, not shown as -1.
func TestStoredAgentMaxStepsOutOfRangeIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	def := storedDef("clerk", "You are the clerk.", `, "maxSteps": 9223372036854775807`)
	_, err := e.agents.CreateAgent(ctxFor(t), connect.NewRequest(&agentsv1.CreateAgentRequest{Definition: def}))
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument || !strings.Contains(ce.Message(), "maxSteps") || !strings.Contains(ce.Message(), "2147483647") {
		t.Fatalf("create: %v, want invalid_argument naming maxSteps and its range", err)
	}
}

// A run's max_steps beyond its int32 range is refused as it is read.
func TestRunMaxStepsOutOfRangeIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, bossScript())
	status, _, body := e.do("POST", "/v1/sessions", `{"agent": "boss", "message": {"text": "hi"}, "run": {"max_steps": 9223372036854775807}}`)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "max_steps") {
		t.Fatalf("create: %d %s, want 400 naming max_steps", status, body)
	}
}
