package server_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// Each agent's descriptor says its model's window, maximum output and
// where they come from, and the input above which its sessions are
// compacted: over Connect and on the JSON route alike, for file agents
// and stored ones. The test agents talk to the offline model and keep
// the limits of the model they name.
func TestGetAgentShowsTheModelsLimits(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t)
	editAgent(t, filepath.Join(dir, "boss.json"), map[string]any{
		"contextWindow": 64000,
		"compaction":    map[string]any{"threshold": 40000},
	})
	editAgent(t, filepath.Join(dir, "lead.json"), map[string]any{"modelName": "openai/gpt-4o-mini-2024-07-18"})
	e := start(t, fakellm.Rules{}, withAgentsDir(dir))
	status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("scribe", "You write.", `, "maxOutputTokens": 2000`))
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/agents = %d %s", status, body)
	}

	type limits struct {
		ContextWindow    int64  `json:"context_window"`
		MaxOutputTokens  int64  `json:"max_output_tokens"`
		LimitsSource     string `json:"limits_source"`
		CompactThreshold int64  `json:"compact_threshold"`
		Offline          bool   `json:"offline"`
		TokenCounting    string `json:"token_counting"`
	}
	cases := []struct {
		slug string
		want limits
	}{
		// The agent's window and threshold (below 64,000 − 4,096 − 3,200),
		// the default's output.
		{"boss", limits{64_000, 4_096, "agent", 40_000, true, "estimate"}},
		// The server's table, under a provider's prefix and a date.
		{"lead", limits{128_000, 16_384, "builtin", 113_408, true, "tokenizer"}},
		// An unknown model: the default, 32,768 − 4,096 − 1,638.
		{"keeper", limits{32_768, 4_096, "default", 27_034, true, "estimate"}},
		{"scribe", limits{32_768, 2_000, "agent", 29_130, true, "estimate"}},
	}
	for _, tc := range cases {
		res, err := e.agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: tc.slug}))
		if err != nil {
			t.Fatal(err)
		}
		m := res.Msg.GetAgent().GetModel()
		got := limits{m.GetContextWindow(), m.GetMaxOutputTokens(), m.GetLimitsSource(), m.GetCompactThreshold(), m.GetOffline(), m.GetTokenCounting()}
		if got != tc.want {
			t.Errorf("GetAgent %s: model = %+v, want %+v", tc.slug, got, tc.want)
		}

		status, _, body := e.do(http.MethodGet, "/v1/agents/"+tc.slug, "")
		if status != http.StatusOK {
			t.Fatalf("GET /v1/agents/%s = %d %s", tc.slug, status, body)
		}
		if got := decodeAs[struct{ Model limits }](t, body).Model; got != tc.want {
			t.Errorf("GET /v1/agents/%s: model = %+v, want %+v", tc.slug, got, tc.want)
		}
	}
}
