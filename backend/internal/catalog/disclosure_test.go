package catalog

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// The tools of an on-demand builtin or HTTP API toolbox belong to its
// toolgroup, as a bash toolbox's do: left out until a session activates
// the group, offered from then on, while the toolboxes always offered
// stay; an approval may name them and the meta tools. A Lua script
// reaches the tools its allowedTools name, active or not, as it reaches
// a bash tool of an inactive group.
func TestOnDemandBuiltinAndAPIToolboxesJoinTheirGroup(t *testing.T) {
	t.Parallel()
	srv, _ := itemsAPI(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.json")
	writeFile(t, file, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "grouped", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"builtinToolboxes": [
			{"tag": "SqliteToolbox", "contents": {"Name": "notes", "Versioning": {"tag": "SqliteReadWrite", "path": "notes.db"},
				"Activation": {"tag": "on-demand", "toolgroup": "data"}}},
			{"tag": "SystemToolbox", "contents": {"Name": "sys", "Capabilities": ["date"], "activation": "always"}},
			{"tag": "DeveloperToolbox", "contents": {"Name": "dev", "Capabilities": ["help"], "activation": {"tag": "on-demand", "toolgroup": "code"}}},
			{"tag": "LuaToolbox", "contents": {"name": "lua", "allowedTools": ["sqlite_notes_query"],
				"activation": {"tag": "on-demand", "toolgroup": "code"}}}],
		"openApiToolboxes": [{"tag": "OpenAPIServer", "contents": {"SpecUrl": "`+srv.URL+`/openapi.json", "BaseUrl": "`+srv.URL+`", "Name": "items",
			"Activation": {"tag": "on-demand", "toolgroup": "data"}}}],
		"approvals": [{"tool": "openapi_items_createItem", "when": {"arg": "b", "matches": "secret"}},
			{"tool": "meta_activate_tool", "when": {"arg": "toolgroup", "matches": "^code$"}}]}}`, 0o644)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{file}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{WorkDir: dir})
	agent, err := cat.Get("grouped")
	if err != nil {
		t.Fatalf("%v (errors %v)", err, cat.Snapshot().Errors)
	}
	var groups []string
	for _, g := range agent.Toolgroups() {
		groups = append(groups, g.Name)
	}
	if !slices.Equal(groups, []string{"data", "code"}) {
		t.Errorf("toolgroups = %v, want data, code", groups)
	}

	offered := func(turns []session.Turn) string {
		var out []string
		for _, tl := range agent.Disclose(agent.Known(), agent.ActiveGroups(turns)).List() {
			out = append(out, tl.Spec().Name)
		}
		return strings.Join(out, " ")
	}
	if got, want := offered(nil), "meta_activate_tool meta_discover_tools system_sys_system_info"; got != want {
		t.Errorf("at the start: %s, want %s", got, want)
	}
	activated := []session.Turn{
		{LLM: &session.LLMTurn{ToolCalls: []session.ToolCall{{ID: "1", Name: "meta_activate_tool", Arguments: `{"toolgroup":"data"}`}}}},
		{User: &session.UserTurn{ToolResults: []session.ToolResult{{CallID: "1", Status: session.ResultOK}}}},
	}
	if got, want := offered(activated), "meta_activate_tool meta_deactivate_tool meta_discover_tools sqlite_notes_query system_sys_system_info openapi_items_createItem"; got != want {
		t.Errorf("with data active: %s, want %s", got, want)
	}
	activated = append(activated,
		session.Turn{LLM: &session.LLMTurn{ToolCalls: []session.ToolCall{{ID: "2", Name: "meta_activate_tool", Arguments: `{"toolgroup":"code"}`}}}},
		session.Turn{User: &session.UserTurn{ToolResults: []session.ToolResult{{CallID: "2", Status: session.ResultOK}}}})
	if got, want := offered(activated), "meta_deactivate_tool meta_discover_tools sqlite_notes_query system_sys_system_info developer_dev_developer_tools lua_lua_execute openapi_items_createItem"; got != want {
		t.Errorf("with both active: %s, want %s", got, want)
	}

	lua, _ := agent.Known().Get("lua_lua_execute")
	args, err := tool.DecodeArgs(lua.Spec(), `{"script": "return tools.call('sqlite_notes_query', {sql = 'SELECT 6 * 7 AS n'}).status"}`)
	if err != nil {
		t.Fatal(err)
	}
	if res := lua.Execute(context.Background(), tool.Call{ID: "c1", Args: args}); res.Status != session.ResultOK || !strings.Contains(res.Text, `"ok"`) {
		t.Errorf("a script's call of an on-demand tool: %s", res.Text)
	}
}
