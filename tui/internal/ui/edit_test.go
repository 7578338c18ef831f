package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// scribeDefinition is a stored agent's definition laid out on lines, the
// model URL on a line of its own.
const scribeDefinition = `{
  "tag": "OpenAIAgentDescription",
  "contents": {
    "slug": "scribe",
    "flavor": "OpenAIv1",
    "modelUrl": "http://127.0.0.1:1/v1",
    "apiKeyId": "openai",
    "modelName": "gpt-4.1-mini",
    "announce": "Takes notes.",
    "systemPrompt": ["You take notes."]
  }
}
`

// editorScript is an editor that runs steps, one per time it starts, on
// the file it is given ("$1"), keeping a copy of each file it was given
// as seen.N in dir.
func editorScript(t *testing.T, dir string, steps ...string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "#!/usr/bin/env bash\nset -e\ncd '%s'\nn=$(ls seen.* 2>/dev/null | wc -l)\ncp \"$1\" seen.$n\ncase $n in\n", dir)
	for i, s := range steps {
		fmt.Fprintf(&b, "%d) %s ;;\n", i, s)
	}
	b.WriteString("*) echo 'started too often' >&2; exit 1 ;;\nesac\n")
	path := filepath.Join(dir, "editor")
	if err := os.WriteFile(path, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func seen(t *testing.T, dir string, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("seen.%d", n)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The Agents tab edits a stored agent in $EDITOR until the server takes
// it: broken JSON and a definition the server refuses reopen the editor
// with the error on top; a file saved unchanged cancels; a file agent is
// not opened at all.
func TestFlowEditAStoredAgent(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", editorScript(t, dir,
		`sed -i 's/"announce": "Takes notes.",/"announce": "Takes careful notes."/' "$1"`,
		`sed -i 's/"Takes careful notes."/"Takes careful notes.",/; /modelUrl/d' "$1"`,
		`sed -i 's|"modelName": "gpt-4.1-mini",|"modelName": "gpt-4.1-mini", "modelUrl": "http://127.0.0.1:2/v1",|' "$1"`,
		`true`,
	))
	fl := startFlow(t, nil, nil)
	fl.f.mu.Lock()
	fl.f.agents = append(fl.f.agents, &agentsv1.AgentDescriptor{
		Slug: "scribe", Announce: "Takes notes.", Source: agentsv1.AgentSource_AGENT_SOURCE_STORED, Version: 1, Definition: scribeDefinition,
		Model: &agentsv1.ModelDescriptor{Flavor: "OpenAIv1", Name: "gpt-4.1-mini", Url: "http://127.0.0.1:1/v1", ApiKeyId: "openai"},
	})
	fl.f.mu.Unlock()
	fl.f.emit(&agentsv1.Event{Body: &agentsv1.Event_AgentsChanged{AgentsChanged: &agentsv1.AgentsChanged{}}})
	fl.press("tab")
	fl.waitFor("the stored agent listed", func(s string) bool { return strings.Contains(s, "scribe") && strings.Contains(s, "v1") })

	// coder comes from a file.
	fl.press("e")
	fl.waitFor("the file agent refused", func(s string) bool {
		return strings.Contains(s, "coder is read-only: a file agent")
	})

	fl.press("down", "down", "down")
	fl.waitFor("the stored agent", func(s string) bool { return strings.Contains(s, "stored · version 1") })
	fl.press("e")
	fl.waitFor("version 2 saved", func(s string) bool { return strings.Contains(s, "saved scribe, version 2") })
	if first := seen(t, dir, 0); !strings.HasPrefix(first, "# Agent scribe, version 1. Saved, it becomes version 2.\n") || !strings.Contains(first, scribeDefinition) {
		t.Errorf("the first file:\n%s", first)
	}
	if second := seen(t, dir, 1); !strings.Contains(second, "# error: not JSON: line 10, column 5: ") || !strings.Contains(second, `"Takes careful notes."`) {
		t.Errorf("the file reopened after broken JSON:\n%s", second)
	}
	if third := seen(t, dir, 2); !strings.Contains(third, "# error: invalid_argument: contents.modelUrl: required\n") {
		t.Errorf("the file reopened after the server refused it:\n%s", third)
	}
	fl.waitFor("the new version listed", func(s string) bool {
		return strings.Contains(s, "stored · version 2") && strings.Contains(s, "Takes careful notes.")
	})

	fl.press("e")
	fl.waitFor("the edit cancelled", func(s string) bool { return strings.Contains(s, "edit of scribe cancelled: no change") })
	fl.quit()

	fl.f.mu.Lock()
	defer fl.f.mu.Unlock()
	if n := len(fl.f.agentUpdates); n != 2 {
		t.Fatalf("UpdateAgent calls = %d, want 2 (the refused one and the good one)", n)
	}
	if u := fl.f.agentUpdates[0]; u.GetExpectedVersion() != 1 || strings.Contains(u.GetDefinition(), "#") {
		t.Errorf("the first update expects version %d, sends:\n%s", u.GetExpectedVersion(), u.GetDefinition())
	}
}

// An agent changed elsewhere while it was edited is not overwritten: the
// status line says to edit it again.
func TestFlowEditOfAnAgentChangedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", editorScript(t, dir, `sed -i 's/Takes notes./Takes short notes./' "$1"`))
	fl := startFlow(t, nil, nil)
	fl.f.mu.Lock()
	fl.f.agents = []*agentsv1.AgentDescriptor{{Slug: "scribe", Source: agentsv1.AgentSource_AGENT_SOURCE_STORED, Version: 1, Definition: scribeDefinition,
		Model: &agentsv1.ModelDescriptor{Name: "gpt-4.1-mini"}}}
	fl.f.afterGetAgent = func() { fl.f.agents[0].Version = 2 }
	fl.f.mu.Unlock()
	fl.f.emit(&agentsv1.Event{Body: &agentsv1.Event_AgentsChanged{AgentsChanged: &agentsv1.AgentsChanged{}}})
	fl.press("tab")
	fl.waitFor("the stored agent", func(s string) bool { return strings.Contains(s, "stored · version 1") })
	fl.press("e")
	fl.waitFor("the conflict", func(s string) bool {
		return strings.Contains(s, "scribe changed while you edited it, nothing saved")
	})
	fl.quit()
	fl.f.mu.Lock()
	defer fl.f.mu.Unlock()
	if len(fl.f.agentUpdates) != 1 || fl.f.agents[0].GetDefinition() != scribeDefinition {
		t.Errorf("%d updates, definition now:\n%s", len(fl.f.agentUpdates), fl.f.agents[0].GetDefinition())
	}
}
