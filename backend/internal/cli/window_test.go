package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// check prints, for each agent, its model's window and maximum output
// with where they come from, and the input above which its sessions are
// compacted with where that comes from; agents show prints them too.
func TestCheckAndShowPrintEachAgentsWindow(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	agent := func(slug, model, extra string) {
		writeFile(t, filepath.Join(agentsDir, slug+".json"), strings.Replace(agentJSON(slug, extra), `"modelName": "m"`, `"modelName": "`+model+`"`, 1), 0o644)
	}
	agent("own", "gpt-4o", `, "contextWindow": 50000, "compaction": {"threshold": 30000}`)
	agent("configured", "local-llama", "")
	agent("known", "gpt-4o-mini-2024-07-18", "")
	agent("unknown", "m", "")
	b, err := json.Marshal(map[string]any{
		"agentsDirectories": []string{agentsDir},
		"db":                filepath.Join(dir, "agents.db"),
		"models":            map[string]any{"local-llama": map[string]any{"context_window": 16000, "max_output_tokens": 2000}},
		"compaction":        map[string]any{"threshold": 100000},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "agents.json")
	writeFile(t, cfg, string(b), 0o644)

	code, out, errOut := run(t, env, "check", "--config", cfg)
	checkRun(t, "check", code, out, errOut, 0, []string{
		"own: model gpt-4o: context window 50,000, max output 16,384 (agent); compacts above 30,000 tokens (agent)\n",
		// 16,000 − 2,000 − 800: the config's threshold does not fit.
		"configured: model local-llama: context window 16,000, max output 2,000 (config); compacts above 13,200 tokens (computed)\n",
		"known: model gpt-4o-mini-2024-07-18: context window 128,000, max output 16,384 (builtin); compacts above 100,000 tokens (config)\n",
		"unknown: model m: context window 32,768, max output 4,096 (default); compacts above 27,034 tokens (computed)\n",
		"4 agents loaded, 0 problems",
	}, nil)

	code, out, errOut = run(t, env, "agents", "show", "known", "--config", cfg)
	checkRun(t, "agents show", code, out, errOut, 0, []string{
		"context   128,000 tokens, max output 16,384 (builtin); compacts above 100,000\n",
	}, nil)
}

func TestThousandsGroupsDigitsInThrees(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 32768: "32,768", 1047576: "1,047,576", -4096: "-4,096"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// agents show prints an agent's budget, which its sessions get when
// their client sets none.
func TestShowPrintsAnAgentsBudget(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agentsDir, "frugal.json"), agentJSON("frugal", `, "budget": {"tokens": 50000, "costUsd": 1.5}`), 0o644)
	b, err := json.Marshal(map[string]any{"agentsDirectories": []string{agentsDir}, "db": filepath.Join(dir, "agents.db")})
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "agents.json")
	writeFile(t, cfg, string(b), 0o644)
	code, out, errOut := run(t, env, "agents", "show", "frugal", "--config", cfg)
	checkRun(t, "agents show", code, out, errOut, 0, []string{
		"budget    50,000 tokens, $1.50 for a session tree started with none\n",
	}, nil)
}
