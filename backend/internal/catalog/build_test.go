package catalog

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestBashToolsGetTheAgentsPassEnv(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tools", "show.sh"), `#!/bin/sh
case "$1" in
  describe) echo '{"slug": "show", "description": "shows a variable", "args": []}' ;;
  run) printf '%s' "${GOPATH-unset}" ;;
esac
`, 0o755)
	agentFile := filepath.Join(dir, "agent.json")
	writeFile(t, agentFile, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "passing", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"toolDirectory": "tools", "passEnv": ["GOPATH"]}}`, 0o644)
	t.Setenv("GOPATH", "/srv/go")

	set := agentfile.Loader{WorkDir: dir}.Load([]string{agentFile}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{})
	agent, err := cat.Get("passing")
	if err != nil {
		t.Fatal(err)
	}
	found, ok := agent.Known().Get("bash_show")
	bash, isBash := found.(*tool.Bash)
	if !ok || !isBash {
		t.Fatalf("no bash_show among %d tools (errors: %v)", len(agent.Known().List()), cat.Snapshot().Errors)
	}
	if !slices.Equal(bash.Script().PassEnv, []string{"GOPATH"}) {
		t.Errorf("PassEnv = %q, want the agent file's", bash.Script().PassEnv)
	}
	res := bash.Execute(context.Background(), tool.Call{})
	if res.Status != session.ResultOK || res.Text != "/srv/go" {
		t.Errorf("Run = %+v, want the server's GOPATH", res)
	}
}

func TestApprovalsNamingUnknownToolsRefuseTheAgent(t *testing.T) {
	dir := t.TempDir()
	write := func(slug, approvals string) string {
		path := filepath.Join(dir, slug+".json")
		writeFile(t, path, `{"tag": "OpenAIAgentDescription", "contents": {
			"slug": "`+slug+`", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
			"clientTools": [{"name": "ask_user"}], "approvals": `+approvals+`}}`, 0o644)
		return path
	}
	good := write("careful", `[{"tool": "ask_user", "approval": "always"}]`)
	bad := write("typo", `[{"tool": "ask_usr", "approval": "always"}]`)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{good, bad}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{})
	if _, err := cat.Get("careful"); err != nil {
		t.Errorf("careful: %v, want it loaded", err)
	}
	if _, err := cat.Get("typo"); err == nil {
		t.Error("typo loaded, want it refused")
	}
	problems := cat.Snapshot().Errors
	if len(problems) != 1 || problems[0].Field != "contents.approvals[0].tool" || !strings.Contains(problems[0].Reason, `no tool "ask_usr"`) {
		t.Errorf("problems = %v, want one about ask_usr", problems)
	}
}

// An MCP server's tools are known only once it runs, so an approval may
// name any tool under its prefix; the bare prefix names none.
func TestApprovalsOfMCPToolsNeedAToolName(t *testing.T) {
	dir := t.TempDir()
	write := func(slug, tool string) string {
		path := filepath.Join(dir, slug+".json")
		writeFile(t, path, `{"tag": "OpenAIAgentDescription", "contents": {
			"slug": "`+slug+`", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
			"mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "files", "executable": "/bin/true", "args": []}}],
			"approvals": [{"tool": "`+tool+`", "approval": "always"}]}}`, 0o644)
		return path
	}
	good := write("named", "mcp_files_write")
	bare := write("bare", "mcp_files_")
	set := agentfile.Loader{WorkDir: dir}.Load([]string{good, bare}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{MCP: pool})
	if _, err := cat.Get("named"); err != nil {
		t.Errorf("named: %v, want it loaded", err)
	}
	if _, err := cat.Get("bare"); err == nil {
		t.Error("bare loaded, want it refused")
	}
	problems := cat.Snapshot().Errors
	if len(problems) != 1 || problems[0].Field != "contents.approvals[0].tool" || !strings.Contains(problems[0].Reason, `no tool "mcp_files_"`) {
		t.Errorf("problems = %v, want one about mcp_files_", problems)
	}
}

// A rule on an argument the tool's schema spells otherwise, or does not
// take at all, would never hold a call: the agent is not loaded.
func TestApprovalRulesOnArgumentsNoCallGivesRefuseTheAgent(t *testing.T) {
	dir := t.TempDir()
	write := func(slug, rule string) string {
		path := filepath.Join(dir, slug+".json")
		writeFile(t, path, `{"tag": "OpenAIAgentDescription", "contents": {
			"slug": "`+slug+`", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
			"osTools": ["spawn_session"],
			"clientTools": [{"name": "ask_user", "parameters": {"type": "object", "properties": {"question": {"type": "string"}}}}],
			"approvals": [{"tool": "os_spawn_session", "when": `+rule+`}, {"tool": "ask_user", "when": {"arg": "anything", "matches": "x"}}]}}`, 0o644)
		return path
	}
	paths := []string{
		write("careful", `{"arg": "agent", "matches": "^boss$"}`),
		write("cased", `{"arg": "Agent", "matches": "^boss$"}`),
		write("unknown", `[{"arg": "agent", "matches": "x"}, {"arg": "agent_slug", "matches": "^boss$"}]`),
	}
	set := agentfile.Loader{WorkDir: dir}.Load(paths, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{})
	if _, err := cat.Get("careful"); err != nil {
		t.Errorf("careful: %v, want it loaded (an open schema takes any other key)", err)
	}
	want := map[string]string{"cased": `os_spawn_session takes "agent", not "Agent"`, "unknown": `os_spawn_session takes no argument "agent_slug"`}
	for slug := range want {
		if _, err := cat.Get(slug); err == nil {
			t.Errorf("%s loaded, want it refused", slug)
		}
	}
	problems := cat.Snapshot().Errors
	if len(problems) != 2 {
		t.Fatalf("problems = %v, want one for each of %v", problems, want)
	}
	for _, p := range problems {
		slug := strings.TrimSuffix(filepath.Base(p.File), ".json")
		if p.Field != "contents.approvals[0].when" || !strings.Contains(p.Reason, want[slug]) || !strings.Contains(p.Reason, "can never match") {
			t.Errorf("%s: problem %s: %s, want it to say %q", slug, p.Field, p.Reason, want[slug])
		}
	}
}

// Every operating system tool an agent file may ask for exists, under
// the name the file writes with os_ before it.
func TestEveryOSToolNameHasItsTool(t *testing.T) {
	t.Parallel()
	for _, name := range agentfile.OSToolNames() {
		got, ok := tool.System(name)
		if !ok || got.Spec().Name != tool.SystemPrefix+name {
			t.Errorf("tool.System(%q) = %v, %v; want the tool %s%s", name, got, ok, tool.SystemPrefix, name)
		}
	}
}

// A tool whose parameters schema cannot be read would have its calls'
// arguments go unchecked, and with them what an approval judges: it is
// refused at load, said why, and the agent's other tools are offered.
func TestAToolWhoseSchemaCannotBeReadIsRefused(t *testing.T) {
	dir := t.TempDir()
	agentFile := filepath.Join(dir, "agent.json")
	writeFile(t, agentFile, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "schemas", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"clientTools": [
			{"name": "loose", "parameters": {"type": "object", "properties": {"cmd": "string"}}},
			{"name": "typo", "parameters": {"type": "object", "properties": {"n": {"type": 5}}}},
			{"name": "fine", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}}
		]}}`, 0o644)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{agentFile}, nil)
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{})
	agent, err := cat.Get("schemas")
	if err != nil {
		t.Fatalf("%v (errors: %v)", err, cat.Snapshot().Errors)
	}
	var offered []string
	for _, tl := range agent.Known().List() {
		offered = append(offered, tl.Spec().Name)
	}
	if !slices.Equal(offered, []string{"fine"}) {
		t.Errorf("offered %v, want only the tool whose schema reads", offered)
	}
	var said []string
	for _, e := range cat.Snapshot().Errors {
		said = append(said, e.Error())
	}
	for _, w := range agent.Warnings {
		said = append(said, w.Error())
	}
	all := strings.Join(said, "\n")
	for _, name := range []string{`"loose"`, `"typo"`} {
		if !strings.Contains(all, name) {
			t.Errorf("nothing says why %s is not offered:\n%s", name, all)
		}
	}
}

// The problems found while the tools are built name the file as the
// loader's own do: relative to the working directory when inside it,
// so one agent's problems show one file, however they were found.
func TestToolProblemsNameTheFileAsTheLoaderDoes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agents", "desk.json")
	writeFile(t, path, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "desk", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"sytemPrompt": ["a warning of the loader"],
		"bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "missing-tools"}}],
		"clientTools": [{"name": "ask_user"}], "approvals": [{"tool": "ask_usr", "approval": "always"}]}}`, 0o644)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{path}, nil)
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{})
	snap := cat.Snapshot()
	want := filepath.Join("agents", "desk.json")
	all := append(append([]*agentfile.Error(nil), snap.Errors...), snap.Warnings...)
	if len(snap.Errors) == 0 || len(snap.Warnings) == 0 {
		t.Fatalf("errors %v, warnings %v: want both", snap.Errors, snap.Warnings)
	}
	for _, e := range all {
		if e.File != want {
			t.Errorf("%v: file %q, want %q", e, e.File, want)
		}
	}
}
