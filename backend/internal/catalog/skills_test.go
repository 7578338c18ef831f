package catalog

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/session"
)

// An agent's skills and on-demand toolboxes: a malformed SKILL.md is a
// load problem naming the file and the rule, and its skill is not
// offered, while the agent and its other skills load; a field the
// specification does not define is a warning; autoEnableSkills makes a
// skill's group active from the start; an on-demand toolbox's tools are
// left out until their group is active.
func TestSkillsAndToolgroupsOfAnAgent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "skills", "good", "SKILL.md"), "---\nname: good\ndescription: Does good.\nversion: 3\n---\nThe good instructions.\n", 0o644)
	writeFile(t, filepath.Join(dir, "skills", "good", "scripts", "go.sh"), `#!/bin/sh
case "$1" in
  describe) echo '{"slug": "go", "description": "goes", "args": []}' ;;
  run) echo gone ;;
esac
`, 0o755)
	writeFile(t, filepath.Join(dir, "skills", "bad", "SKILL.md"), "---\nname: Bad_Name\ndescription: d\n---\n", 0o644)
	writeFile(t, filepath.Join(dir, "write", "w.sh"), `#!/bin/sh
case "$1" in
  describe) echo '{"slug": "w", "description": "writes", "args": []}' ;;
esac
`, 0o755)
	agentFile := filepath.Join(dir, "agent.json")
	writeFile(t, agentFile, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "skilled", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "write", "Activation": {"tag": "on-demand", "toolgroup": "writing"}}}],
		"skillSources": [{"tag": "SkillDirectory", "contents": "skills"}],
		"autoEnableSkills": ["good"],
		"approvals": [{"tool": "meta_activate_tool", "when": {"arg": "toolgroup", "matches": "^writing$"}}]}}`, 0o644)

	set := agentfile.Loader{WorkDir: dir}.Load([]string{agentFile}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{})
	snap := cat.Snapshot()
	agent, err := cat.Get("skilled")
	if err != nil {
		t.Fatalf("the agent did not load: %v (errors %v)", err, snap.Errors)
	}
	bad := filepath.Join(dir, "skills", "bad", "SKILL.md")
	if len(snap.Errors) != 1 || snap.Errors[0].Field != "contents.skillSources[0]" ||
		!strings.Contains(snap.Errors[0].Reason, bad+`: name: "Bad_Name" may hold only lower-case letters`) {
		t.Errorf("errors = %v, want the bad skill's file and rule", snap.Errors)
	}
	if len(snap.Warnings) != 1 || !strings.Contains(snap.Warnings[0].Reason, "version: not a field of the Agent Skills specification") {
		t.Errorf("warnings = %v, want the unknown front matter field", snap.Warnings)
	}
	if len(agent.Warnings) != 1 {
		t.Errorf("the agent's own warnings = %v, want the skill's", agent.Warnings)
	}

	names := func(active map[string]bool) string {
		var out []string
		for _, tl := range agent.Disclose(agent.Known(), active).List() {
			out = append(out, tl.Spec().Name)
		}
		return strings.Join(out, " ")
	}
	start := agent.ActiveGroups(nil)
	if got, want := names(start), "meta_activate_tool meta_deactivate_tool meta_discover_tools skill_describe_good skill_read_good skill_good_go"; got != want {
		t.Errorf("at the start: %s, want %s", got, want)
	}
	turns := []session.Turn{
		{LLM: &session.LLMTurn{ToolCalls: []session.ToolCall{{ID: "1", Name: "meta_activate_tool", Arguments: `{"toolgroup":"writing"}`}}}},
		{User: &session.UserTurn{ToolResults: []session.ToolResult{{CallID: "1", Status: session.ResultOK}}}},
	}
	if got := names(agent.ActiveGroups(turns)); !strings.Contains(got, "bash_w") || strings.Contains(got, "meta_activate_tool") {
		t.Errorf("after activating writing: %s", got)
	}
}
