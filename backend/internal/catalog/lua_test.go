package catalog

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// A LuaToolbox's scripts call the agent's own tools: a server-run one
// answers; one an approval holds and a client tool are refused, since a
// script can wait for neither.
func TestLuaScriptsCallTheAgentsOwnTools(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"show", "held"} {
		writeFile(t, filepath.Join(dir, "tools", name+".sh"), `#!/bin/sh
case "$1" in
  describe) echo '{"slug": "`+name+`", "description": "says its name", "args": []}' ;;
  run) printf '`+name+`' ;;
esac
`, 0o755)
	}
	agentFile := filepath.Join(dir, "agent.json")
	writeFile(t, agentFile, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "scripted", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"toolDirectory": "tools", "clientTools": [{"name": "ask_user"}],
		"approvals": [{"tool": "bash_held", "approval": "always"}],
		"builtinToolboxes": [{"tag": "LuaToolbox", "contents": {"name": "lua",
			"allowedTools": ["bash_show", "bash_held", "ask_user", "bash_missing"]}}]}}`, 0o644)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{agentFile}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{WorkDir: dir})
	agent, err := cat.Get("scripted")
	if err != nil {
		t.Fatal(err)
	}
	lua, ok := agent.Known().Get("lua_lua_execute")
	if !ok {
		t.Fatalf("no lua_lua_execute (errors: %v)", cat.Snapshot().Errors)
	}
	args, err := tool.DecodeArgs(lua.Spec(), `{"script": "local out = {} for _, n in ipairs({'bash_show', 'bash_held', 'ask_user', 'bash_missing'}) do local r = tools.call(n, {}) out[#out+1] = r.status .. ': ' .. r.result_txt end return out"}`)
	if err != nil {
		t.Fatal(err)
	}
	res := lua.Execute(context.Background(), tool.Call{ID: "c1", Args: args})
	if res.Status != session.ResultOK {
		t.Fatalf("script: %s", res.Text)
	}
	for _, want := range []string{`"ok: show"`, `not-allowed: tool \"bash_held\": calls of it wait for approval`, `answered by a client`, `not-found: tool \"bash_missing\": the agent has no such tool`} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("answer lacks %s:\n%s", want, res.Text)
		}
	}
}

// A name in allowedTools that is none of the agent's tools (a misspelt
// one) loads with a warning naming it: a script's call of it could only
// be not-found. A helper under agents-exe's io_ name and a tool under an
// MCP server's prefix, known once the server runs, are taken.
func TestLuaAllowedToolsTheAgentLacksWarn(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tools", "show.sh"), `#!/bin/sh
case "$1" in
  describe) echo '{"slug": "show", "description": "says show", "args": []}' ;;
  run) printf show ;;
esac
`, 0o755)
	agentFile := filepath.Join(dir, "agent.json")
	writeFile(t, agentFile, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "scripted", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"toolDirectory": "tools", "extraAgents": [{"slug": "scripted", "path": "agent.json"}],
		"builtinToolboxes": [{"tag": "LuaToolbox", "contents": {"name": "lua",
			"allowedTools": ["bash_show", "bash_shwo", "io_prompt_agent_scripted", "prompt_agent_scripted", "lua_lua_execute"]}}]}}`, 0o644)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{agentFile}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{WorkDir: dir})
	if _, err := cat.Get("scripted"); err != nil {
		t.Fatalf("%v (errors %v)", err, cat.Snapshot().Errors)
	}
	w := cat.Snapshot().Warnings
	if len(w) != 1 || w[0].Field != "contents.builtinToolboxes[0].contents.allowedTools[1]" || !strings.Contains(w[0].Reason, `"bash_shwo"`) {
		t.Errorf("warnings = %v, want one about bash_shwo", w)
	}
}
