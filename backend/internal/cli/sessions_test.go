package cli

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// sessions ls --agent (and -a) filters the list; the global --agent does
// not restrict what the in-process server loads there.
func TestSessionsListAgentFilter(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agentsDir, "good.json"), agentJSON("good", ""), 0o644)
	writeFile(t, filepath.Join(agentsDir, "other.json"), agentJSON("other", ""), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agentsDir)
	a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env, flags: config.Flags{ConfigFile: cfg}}
	good := createSession(t, a, clientFlags{}, "good", "of good")
	other := createSession(t, a, clientFlags{}, "other", "of other")

	for _, flag := range []string{"--agent", "-a"} {
		code, out, errOut := run(t, env, "sessions", "ls", "--config", cfg, flag, "good")
		if code != 0 || !strings.Contains(out, good) || strings.Contains(out, other) {
			t.Errorf("sessions ls %s good = %d:\n%s%s\nwant %s only", flag, code, out, errOut, good)
		}
	}
	// An agent the server does not load lists nothing rather than fail:
	// its file may be gone while its sessions stay.
	code, out, errOut := run(t, env, "sessions", "ls", "--config", cfg, "--agent", "gone")
	if code != 0 || strings.TrimSpace(out) != "" || !strings.Contains(errOut, "no sessions") {
		t.Errorf("sessions ls --agent gone = %d, %q, %q", code, out, errOut)
	}
}

// Session ids may be shortened to any unique prefix; an ambiguous one is
// an error listing the sessions it could be.
func TestSessionPrefixes(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agentsDir, "good.json"), agentJSON("good", ""), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agentsDir)
	a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env, flags: config.Flags{ConfigFile: cfg}}
	// Seventeen ids in sixteen hex digits: two share their first one.
	byFirst := map[byte][]string{}
	var ids []string
	for range 17 {
		id := createSession(t, a, clientFlags{}, "good", "numbered")
		ids = append(ids, id)
		byFirst[id[0]] = append(byFirst[id[0]], id)
	}
	var shared []string
	for _, list := range byFirst {
		if len(list) > 1 {
			shared = list
		}
	}

	code, _, errOut := run(t, env, "sessions", "show", "--config", cfg, shared[0][:1])
	if code != 1 || !strings.Contains(errOut, "give more of the id") || !strings.Contains(errOut, shared[0]) || !strings.Contains(errOut, shared[1]) {
		t.Errorf("show of an ambiguous prefix = %d, %q; want both ids listed", code, errOut)
	}
	id := ids[3]
	code, out, _ := run(t, env, "sessions", "show", "--config", cfg, id[:13])
	if code != 0 || !strings.Contains(out, "session  "+id) {
		t.Errorf("show PREFIX = %d:\n%s", code, out)
	}
	code, out, _ = run(t, env, "sessions", "export", "--config", cfg, "--format", "json", id[:13])
	if code != 0 || !strings.Contains(out, id) {
		t.Errorf("export PREFIX = %d:\n%s", code, out)
	}
	code, out, _ = run(t, env, "sessions", "rm", "--config", cfg, id[:13])
	if code != 0 || out != "deleted "+id+"\n" {
		t.Errorf("rm PREFIX = %d:\n%s", code, out)
	}
	code, _, errOut = run(t, env, "sessions", "show", "--config", cfg, id[:13])
	if code != 1 || !strings.Contains(errOut, "no session id starts with") {
		t.Errorf("show of a deleted prefix = %d, %q", code, errOut)
	}
}

// Deleting a session with sub-agent sessions names --cascade.
func TestSessionsRemoveNamesCascade(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "You help."}, Reply: fakellm.Reply{Text: "helped"}},
		{Match: fakellm.Match{AssistantMessages: new(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt": "help"}`)}}}},
		{Match: fakellm.Match{AssistantMessages: new(1)}, Reply: fakellm.Reply{Text: "done"}},
	}})
	boss := filepath.Join(dir, "agents", "boss.json")
	writeFile(t, boss, agentJSON("boss", `, "extraAgents": [{"slug": "helper", "path": "helper.json"}]`), 0o644)
	writeFile(t, filepath.Join(dir, "agents", "helper.json"),
		strings.Replace(agentJSON("helper", ""), `"You test."`, `"You help."`, 1), 0o644)
	server := []string{"--agent-file", boss, "--offline-model", model.URL()}

	// The helper is not a root agent: boss is the only agent to run.
	code, out, errOut := run(t, env, append([]string{"run", "delegate"}, server...)...)
	if code != 0 || out != "done\n" {
		t.Fatalf("run = %d, %q, %q", code, out, errOut)
	}
	a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env, flags: config.Flags{AgentFiles: []string{boss}}}
	c, err := a.dial(context.Background(), clientFlags{}, embedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Sessions.ListSessions(context.Background(), connect.NewRequest(&agentsv1.ListSessionsRequest{Agent: "boss"}))
	c.Close()
	if err != nil || len(res.Msg.GetSessions()) != 1 {
		t.Fatalf("boss sessions: %v %v", res, err)
	}
	id := res.Msg.GetSessions()[0].GetId()

	code, _, errOut = run(t, env, "sessions", "rm", id, "--agent-file", boss)
	if want := "session " + id + " has 1 sub-agent session: add --cascade to delete them too"; code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("rm = %d, %q; want %q", code, errOut, want)
	}
	code, out, _ = run(t, env, "sessions", "rm", "--cascade", id, "--agent-file", boss)
	if code != 0 || strings.Count(out, "deleted ") != 2 {
		t.Errorf("rm --cascade = %d:\n%s", code, out)
	}
}
