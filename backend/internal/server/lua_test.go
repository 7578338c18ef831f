package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// luaWorld is a folder with the Lua test agent (shaped as agents-exe's
// lua-tester), its helper, and a project under its file sandbox.
func luaWorld(t *testing.T) string {
	t.Helper()
	agents := filepath.Join(t.TempDir(), "agents")
	for _, dir := range []string{"resources", "project"} {
		if err := os.MkdirAll(filepath.Join(agents, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"lua-tester.json", "lua-helper.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "builtin", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(agents, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{"project/notes.md": "first note\n", "outside.md": "not for scripts\n"} {
		if err := os.WriteFile(filepath.Join(agents, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return agents
}

// The model's message is the script: the model runs it with
// lua_testlua_execute and answers with the tool's result. The helper
// answers with what it was asked.
func luaRules() fakellm.Rules {
	no, yes := false, true
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "the Lua helper", LastIsToolResult: &no}, Reply: fakellm.Reply{Text: "helped with {{last_user}}"}},
		{Match: fakellm.Match{SystemContains: "Lua toolbox", LastIsToolResult: &no},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "lua_testlua_execute", Arguments: json.RawMessage(`{"script": "{{last_user}}"}`)}}}},
		{Match: fakellm.Match{LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "result: {{last_tool_result}}"}},
	}, Default: &fakellm.Reply{Text: "ok"}}
}

// A model's call of lua_<name>_execute runs the script in the server:
// it reads a file of its sandbox, calls the agent's SQLite and system
// tools, a helper agent by agents-exe's io_prompt_agent_ name, and
// itself; the answer carries what the script returned. A refused path,
// a tool not allowed and a failing script are error results, and the
// server goes on.
func TestLuaToolboxRunsTheModelsScripts(t *testing.T) {
	t.Parallel()
	agents := luaWorld(t)
	e := start(t, luaRules(), withAgentsDir(agents))
	ctx := ctxFor(t)

	res, err := e.agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "lua-tester"}))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tl := range res.Msg.GetAgent().GetTools() {
		if tl.GetName() == "lua_testlua_execute" {
			found = tl.GetDescription() == "Sandboxed Lua interpreter for smoke tests"
		}
	}
	if !found {
		t.Fatalf("tools = %v", res.Msg.GetAgent().GetTools())
	}
	for _, w := range res.Msg.GetAgent().GetWarnings() {
		if !strings.Contains(w.GetField(), "Versioning.path") { // the database is made at its first use
			t.Errorf("warning %v", w)
		}
	}

	ok := agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK
	failed := agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR
	ask := func(script string, status agentsv1.ToolResultStatus, part string) {
		t.Helper()
		s := e.wait(e.create("lua-tester", script).GetMeta().GetId())
		if r := lastToolResult(t, s); r.GetStatus() != status || !strings.Contains(r.GetText(), part) {
			t.Errorf("%q: %v %q, want %v holding %q", script, r.GetStatus(), r.GetText(), status, part)
		}
		turns := s.GetTurns()
		if answer := turns[len(turns)-1].GetLlm().GetText(); !strings.Contains(answer, "result: ") {
			t.Errorf("%q: the model's answer is %q", script, answer)
		}
	}

	notes := filepath.Join(agents, "project", "notes.md")
	ask(`local q = tools.call('sqlite_testdb_query', {sql = 'SELECT 40 + 2 AS n'})
local d = tools.call('system_testsys_system_info', {capability = 'date'})
return json.decode(q.result_txt).rows[1][1], d.status, text.trim(fs.read('`+notes+`'))`, ok, `{"values":[42,"ok","first note"]}`)
	ask(`local h = tools.call('io_prompt_agent_lua-helper', {prompt = 'the sum'})
return h.status, h.result_txt`, ok, `{"values":["ok","helped with the sum"]}`)
	ask(`local r = tools.call('lua_testlua_execute', {script = 'return 6 * 7'})
return json.decode(r.result_txt).values[1]`, ok, `{"values":[42]}`)
	ask(`return tools.call('bash_rm', {}).status`, ok, `{"values":["not-allowed"]}`)
	ask(`return fs.read('`+filepath.Join(agents, "outside.md")+`')`, failed, "sandbox: access denied")
	ask(`return os.execute('true')`, failed, "runtime error")
}
