package cli

import (
	"path/filepath"
	"testing"

	"github.com/agents-os/agents/backend/internal/tracing/otlptest"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// With an OTLP endpoint in the environment, `agents run` traces its run
// in-process and has exported every span by the time it exits: the
// batch's delay (an hour here) never comes into it.
func TestRunExportsItsTraceBeforeItExits(t *testing.T) {
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL())
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
	dir, base := testEnv(t)
	env := func(k string) (string, bool) {
		if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
			return rcv.URL(), true
		}
		return base(k)
	}
	model := fakellmtest.Start(t, runScript())
	writeFile(t, filepath.Join(dir, "agents", "tools", "ok"), goodTool, 0o755)
	agent := filepath.Join(dir, "agents", "runner.json")
	writeFile(t, agent, agentJSON("runner", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)

	code, _, stderr := run(t, env, "run", "--agent-file", agent, "-a", "runner", "--offline-model", model.URL(), "go")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// Every span was received before the command returned.
	spans := rcv.Spans()
	n := map[string]int{}
	for _, s := range spans {
		n[s.Name]++
	}
	if n["invoke_agent runner"] != 1 || n["chat m"] != 2 || n["execute_tool bash_ok"] != 1 {
		t.Fatalf("received %v by the exit, want the run, its two model calls and its tool call", n)
	}
	for _, s := range spans {
		if s.Resource["service.name"] != "agents" {
			t.Errorf("%s: service.name = %q, want agents", s.Name, s.Resource["service.name"])
		}
	}
}
