package server_test

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/sqlitetool"
	"github.com/agents-os/agents/tools/fakellm"
)

// withSQLiteCopies keeps versioned SQLite toolboxes' copies under root,
// removed with their session as serve does.
func withSQLiteCopies(root string) option {
	copies := sqlitetool.NewCopies(root)
	return func(e *env) {
		e.sqlite = copies
		e.tune = append(e.tune, func(o *runner.Options) {
			o.SessionDeleted = func(id string) { _ = copies.Forget(id) }
		})
	}
}

// builtinWorld is a folder with the builtin test agents (testdata/builtin,
// shaped as agents-exe's test agents), their databases and a project
// under their developer toolbox's sandbox.
func builtinWorld(t *testing.T) (agents, root string) {
	t.Helper()
	root = t.TempDir()
	agents = filepath.Join(root, "agents")
	for _, dir := range []string{"resources", "project"} {
		if err := os.MkdirAll(filepath.Join(agents, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"sqlite-tester.json", "file-system-tester.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "builtin", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(agents, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", filepath.Join(agents, "resources", "guidelines.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE guidelines (rule TEXT); INSERT INTO guidelines VALUES ('be kind')"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	for name, text := range map[string]string{
		"project/notes.md": "first note\nsecond note\n",
		"project/big.md":   strings.Repeat("a long line of text\n", 100),
		"outside.md":       "not for the agent\n",
		"README.md":        "# agents\n",
	} {
		if err := os.WriteFile(filepath.Join(agents, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return agents, root
}

// builtinRules route each message to a tool by what it holds (SQL marked
// with a comment naming the toolbox, an absolute path, …) and answer a
// tool's result with that result.
func builtinRules() fakellm.Rules {
	no, yes := false, true
	call := func(system, contains, regexp, tool, args string) fakellm.Rule {
		return fakellm.Rule{Match: fakellm.Match{SystemContains: system, UserContains: contains, UserRegexp: regexp, LastIsToolResult: &no},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: tool, Arguments: json.RawMessage(args)}}}}
	}
	const sq, fs = "SQLite toolboxes", "file and system toolboxes"
	return fakellm.Rules{Rules: []fakellm.Rule{
		call(sq, "/*rw*/", "", "sqlite_testdb_rw_query", `{"sql": "{{last_user}}"}`),
		call(sq, "/*ver*/", "", "sqlite_testdb_ver_query", `{"sql": "{{last_user}}"}`),
		call(sq, "/*ro*/", "", "sqlite_guidelines_query", `{"sql": "{{last_user}}"}`),
		call(sq, "promote", "", "sqlite_testdb_ver_promote", `{}`),
		call(sq, "#run", "", "system_testsys_system_info", `{"capability": "execute-command", "command": "{{last_user}}"}`),
		call(fs, "date?", "", "system_testsys_system_info", `{"capability": "date"}`),
		call(fs, "", "^/", "developer_testdev_developer_tools", `{"capability": "read-file-range", "path": "{{last_user}}"}`),
		{Match: fakellm.Match{LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "result: {{last_tool_result}}"}},
	}, Default: &fakellm.Reply{Text: "ok"}}
}

// lastToolResult is the newest tool result a session holds.
func lastToolResult(t *testing.T, s *agentsv1.Session) *agentsv1.ToolResult {
	t.Helper()
	var last *agentsv1.ToolResult
	for _, turn := range s.GetTurns() {
		if res := turn.GetUser().GetToolResults(); len(res) > 0 {
			last = res[len(res)-1]
		}
	}
	if last == nil {
		t.Fatalf("session %s holds no tool result", s.GetMeta().GetId())
	}
	return last
}

// Issue 36, item 1: the builtin toolboxes of agents-exe's test agents
// load with the tools agents-exe names, each with its schema; a call of
// the model reaches each kind and the session holds its result; a
// read-only database refuses writes, a versioned one keeps each
// session's writes in its copy until promoted (the copy goes with the
// session), and the developer toolbox refuses a path outside its
// sandbox and a file over its largest size.
func TestBuiltinToolboxesAnswerTheModelsCalls(t *testing.T) {
	t.Parallel()
	agents, root := builtinWorld(t)
	copies := filepath.Join(root, "copies")
	e := start(t, builtinRules(), withAgentsDir(agents), withSQLiteCopies(copies))
	ctx := ctxFor(t)

	wantTools := map[string][]string{
		"sqlite-tester":      {"sqlite_guidelines_query", "sqlite_testdb_rw_query", "sqlite_testdb_ver_promote", "sqlite_testdb_ver_query", "system_testsys_system_info"},
		"file-system-tester": {"developer_testdev_developer_tools", "system_testsys_system_info"},
	}
	schemas := map[string]map[string]any{}
	for slug, want := range wantTools {
		res, err := e.agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: slug}))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Msg.GetAgent().GetTools() {
			names = append(names, tl.GetName())
			schemas[slug+"/"+tl.GetName()] = tl.GetParameters().AsMap()
			if tl.GetKind() != agentsv1.ToolKind_TOOL_KIND_SYSTEM {
				t.Errorf("%s kind = %v", tl.GetName(), tl.GetKind())
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("%s tools = %v, want %v", slug, names, want)
		}
		if w := res.Msg.GetAgent().GetWarnings(); len(w) != 0 && slug == "file-system-tester" {
			t.Errorf("%s warnings = %v", slug, w)
		}
	}
	props := func(key string) []string {
		p, _ := schemas[key]["properties"].(map[string]any)
		var out []string
		for k := range p {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	for key, want := range map[string][]string{
		"sqlite-tester/sqlite_testdb_rw_query":                 {"sql"},
		"sqlite-tester/sqlite_testdb_ver_promote":              nil,
		"sqlite-tester/system_testsys_system_info":             {"capability", "command"},
		"file-system-tester/system_testsys_system_info":        {"capability", "command", "include_hidden", "order_by", "path", "recursive"},
		"file-system-tester/developer_testdev_developer_tools": {"capability", "contentBlocks", "include_hidden", "patch", "path", "ranges", "recursive"},
	} {
		if got := props(key); !slices.Equal(got, want) {
			t.Errorf("%s properties = %v, want %v", key, got, want)
		}
	}
	if req, _ := schemas["sqlite-tester/sqlite_testdb_rw_query"]["required"].([]any); len(req) != 1 || req[0] != "sql" {
		t.Errorf("query's required = %v", req)
	}
	capability, _ := schemas["sqlite-tester/system_testsys_system_info"]["properties"].(map[string]any)["capability"].(map[string]any)
	if enum, _ := capability["enum"].([]any); len(enum) != 2 || enum[0] != "date" || enum[1] != "execute-command" {
		t.Errorf("system capability enum = %v", capability["enum"])
	}

	ok := agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK
	failed := agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR
	ask := func(agent, text string, status agentsv1.ToolResultStatus, part string) *agentsv1.Session {
		t.Helper()
		s := e.wait(e.create(agent, text).GetMeta().GetId())
		if r := lastToolResult(t, s); r.GetStatus() != status || !strings.Contains(r.GetText(), part) {
			t.Errorf("%s %q: %v %q, want %v holding %q", agent, text, r.GetStatus(), r.GetText(), status, part)
		}
		return s
	}

	ask("sqlite-tester", "/*rw*/ CREATE TABLE smoke (id INTEGER PRIMARY KEY, label TEXT, score REAL)", ok, `"rowCount":0`)
	ask("sqlite-tester", "/*rw*/ DELETE FROM smoke; INSERT INTO smoke (label, score) VALUES ('baseline', 1.0)", ok, `"rowCount":0`)
	ask("sqlite-tester", "/*rw*/ SELECT label FROM smoke", ok, `"rows":[["baseline"]]`)

	ask("sqlite-tester", "/*ro*/ SELECT rule FROM guidelines", ok, `"rows":[["be kind"]]`)
	ask("sqlite-tester", "/*ro*/ INSERT INTO guidelines VALUES ('be rude')", failed, "write refused: the database is read-only")
	ask("sqlite-tester", "/*ro*/ SELECT count(*) FROM guidelines", ok, `"rows":[[1]]`)

	ver := ask("sqlite-tester", "/*ver*/ INSERT INTO smoke (label, score) VALUES ('versioned', 2.0)", ok, `"rowCount":0`)
	verID := ver.GetMeta().GetId()
	ask("sqlite-tester", "/*ver*/ SELECT label FROM smoke ORDER BY id", ok, `"rows":[["baseline"]]`) // another session's copy
	ask("sqlite-tester", "/*rw*/ SELECT label FROM smoke ORDER BY id", ok, `"rows":[["baseline"]]`)
	if status, _, body := e.do("POST", "/v1/sessions/"+verID+"/messages", `{"text": "promote it"}`); status != 200 {
		t.Fatalf("post: %d %s", status, body)
	}
	if r := lastToolResult(t, e.wait(verID)); r.GetStatus() != ok || !strings.Contains(r.GetText(), `"promoted_to"`) {
		t.Errorf("promote: %v %q", r.GetStatus(), r.GetText())
	}
	ask("sqlite-tester", "/*rw*/ SELECT label FROM smoke ORDER BY id", ok, `"rows":[["baseline"],["versioned"]]`)
	if _, err := os.Stat(filepath.Join(copies, verID)); err != nil {
		t.Errorf("the session's copy: %v", err)
	}
	if status, _, body := e.do("DELETE", "/v1/sessions/"+verID, ""); status != 200 && status != 204 {
		t.Fatalf("delete: %d %s", status, body)
	}
	if _, err := os.Stat(filepath.Join(copies, verID)); !os.IsNotExist(err) {
		t.Errorf("the deleted session's copy is still there: %v", err)
	}

	ask("sqlite-tester", "echo builtin-$((40+2)) #run", ok, `"stdout":"builtin-42\n"`)

	ask("file-system-tester", "what is the date?", ok, `"capability":"date"`)
	ask("file-system-tester", filepath.Join(agents, "project", "notes.md"), ok, `1\tfirst note\n2\tsecond note\n`)
	ask("file-system-tester", filepath.Join(agents, "outside.md"), failed, "access denied")
	ask("file-system-tester", filepath.Join(agents, "project", "big.md"), failed, "over the file sandbox's maximum of 1024 bytes")
}
