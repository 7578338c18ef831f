package agentfile

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// agents-exe's Lua test agents load as it writes them (capitalised keys,
// a FileSandbox with fsb… fields), each offering lua_<name>_execute.
func TestLuaToolboxesLoadAsAgentsExeWritesThem(t *testing.T) {
	t.Parallel()
	loader, dir := testdataLoader(t)
	set := loader.Load([]string{"builtin/lua-tester.json", "builtin/lua-rlm-recursion-tester.json"}, nil)
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}
	for _, w := range set.Warnings {
		if !strings.Contains(w.Field, ".path") {
			t.Errorf("unexpected warning %v", w) // only the databases yet to be created
		}
	}
	res := filepath.Join(dir, "builtin", "resources")
	project := filepath.Join(dir, "builtin", "project")

	boxes := set.Get("lua-tester").BuiltinToolboxes
	if len(boxes) != 3 {
		t.Fatalf("lua-tester toolboxes = %+v", boxes)
	}
	lua := boxes[2]
	if lua.Kind != LuaToolboxKind || lua.Name != "testlua" || lua.Description != "Sandboxed Lua interpreter" {
		t.Errorf("lua toolbox = %+v", lua)
	}
	if want := []string{"lua_testlua_execute"}; !slices.Equal(lua.ToolNames(), want) {
		t.Errorf("tool names = %v, want %v", lua.ToolNames(), want)
	}
	if l := lua.Lua; l.MaxMemoryMB != 128 || l.Timeout != time.Minute || len(l.AllowedHosts) != 0 ||
		!slices.Equal(l.AllowedTools, []string{"bash_read-file", "bash_list-files", "system_testsys_system_info", "sqlite_testdb_query"}) {
		t.Errorf("limits = %+v", l)
	}
	want := "Any(DirectoryRecursive " + project + ", DirectoryRecursive " + res + ")"
	if got := lua.Sandbox.Predicate.String(); got != want || lua.Sandbox.Name != "lua-test-sandbox" || lua.Sandbox.MaxFileSize != 10485760 {
		t.Errorf("sandbox = %s %+v, want %s", got, lua.Sandbox, want)
	}

	rlm := set.Get("lua-rlm-recursion-tester").BuiltinToolboxes[2]
	if rlm.Lua.Timeout != 30*time.Second || !slices.Contains(rlm.Lua.AllowedTools, "lua_rlmlua_execute") {
		t.Errorf("rlm toolbox = %+v", rlm)
	}
}

// The documentation's lower-case keys, the deprecated allowedPaths, and
// the defaults of a toolbox that gives only a name.
func TestLuaToolboxFields(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	head := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1", "modelUrl": "http://m/v1", "modelName": "m", "builtinToolboxes": [`
	parseBox := func(t *testing.T, box string) (BuiltinToolbox, []*Error) {
		a, warnings, err, _ := parse([]byte(head+box+`]}}`), filepath.Join(dir, "a.json"), dir)
		if err != nil {
			t.Fatalf("error: %v", err)
		}
		return a.agent.BuiltinToolboxes[0], warnings
	}

	bare, _ := parseBox(t, `{"tag": "LuaToolbox", "contents": {"name": "lua"}}`)
	if bare.Lua.Timeout != DefaultLuaTimeout || bare.Lua.MaxMemoryMB != DefaultLuaMaxMemoryMB || bare.Lua.AllowedTools != nil || bare.Sandbox.Predicate.Kind != PredAlwaysDeny {
		t.Errorf("defaults = %+v", bare)
	}

	paths, _ := parseBox(t, `{"tag": "LuaToolbox", "contents": {"name": "lua", "description": "d", "maxMemoryMB": 64, "maxExecutionTimeSeconds": 5,
		"allowedHosts": ["localhost"], "allowedPaths": ["./data"]}}`)
	if want := "Any(DirectoryRecursive " + filepath.Join(dir, "data") + ")"; paths.Sandbox.Predicate.String() != want {
		t.Errorf("allowedPaths = %s, want %s", paths.Sandbox.Predicate, want)
	}
	if paths.Lua.MaxMemoryMB != 64 || paths.Lua.Timeout != 5*time.Second || !slices.Equal(paths.Lua.AllowedHosts, []string{"localhost"}) {
		t.Errorf("limits = %+v", paths.Lua)
	}

	both, warnings := parseBox(t, `{"tag": "LuaToolbox", "contents": {"name": "lua", "allowedPaths": ["."],
		"fileSandbox": {"predicate": {"tag": "AlwaysAllow"}}}}`)
	if both.Sandbox.Predicate.Kind != PredAlwaysAllow {
		t.Errorf("fileSandbox over allowedPaths = %+v", both.Sandbox)
	}
	if len(warnings) != 1 || warnings[0].Field != "contents.builtinToolboxes[0].contents.allowedPaths" {
		t.Errorf("warnings = %v", errorStrings(warnings))
	}

	for _, c := range []struct{ name, box, field, reason string }{
		{"no name", `{"tag": "LuaToolbox", "contents": {}}`, "contents.builtinToolboxes[0].contents.name", "required field is missing"},
		{"bad name", `{"tag": "LuaToolbox", "contents": {"name": "my lua"}}`, "contents.builtinToolboxes[0].contents.name", "lua_my lua_execute"},
		{"no time", `{"tag": "LuaToolbox", "contents": {"name": "l", "maxExecutionTimeSeconds": 0}}`, "contents.builtinToolboxes[0].contents.maxExecutionTimeSeconds", "from 1 to"},
		{"no memory", `{"tag": "LuaToolbox", "contents": {"name": "l", "MaxMemoryMB": -1}}`, "contents.builtinToolboxes[0].contents.MaxMemoryMB", "at least 1"},
		{"tools not a list", `{"tag": "LuaToolbox", "contents": {"name": "l", "allowedTools": "bash"}}`, "contents.builtinToolboxes[0].contents.allowedTools", "list"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err, _ := parse([]byte(head+c.box+`]}}`), filepath.Join(dir, "a.json"), dir)
			if err == nil || err.Field != c.field || !strings.Contains(err.Reason, c.reason) {
				t.Errorf("error = %v, want %s: …%s…", err, c.field, c.reason)
			}
		})
	}
}
