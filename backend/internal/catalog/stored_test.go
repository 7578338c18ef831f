package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// definition is a stored agent's JSON; extra goes into contents.
func definition(slug, extra string) string {
	return fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {"slug": %q, "flavor": "OpenAIv1",
		"modelUrl": "https://example.test/v1", "modelName": "m", "announce": "the %s agent"%s}}`, slug, slug, extra)
}

// storedCatalog serves one agent file (slug "filed") and the stored
// agents *stored holds, with tools allowed under dirs.
func storedCatalog(t *testing.T, stored *[]Stored, dirs ...string) *Catalog {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "filed.json")
	writeFile(t, file, definition("filed", ""), 0o644)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{file}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	return New(context.Background(), func() *agentfile.Set { return set }, Options{
		Stored:   func(context.Context) ([]Stored, error) { return *stored, nil },
		ToolDirs: dirs,
		WorkDir:  dir,
	})
}

func TestStoredAgentsAreServedBesideFileAgents(t *testing.T) {
	var stored []Stored
	cat := storedCatalog(t, &stored)
	stored = []Stored{
		{Slug: "boss", Version: 3, Definition: definition("boss", `, "extraAgents": [{"slug": "filed"}, {"slug": "mate", "path": "ignored.json"}]`)},
		{Slug: "mate", Version: 1, Definition: definition("mate", "")},
		{Slug: "filed", Version: 1, Definition: definition("filed", "")},
		{Slug: "orphan", Version: 1, Definition: definition("orphan", `, "extraAgents": [{"slug": "nobody"}]`)},
	}
	snap := cat.ReloadStored(context.Background())
	boss, err := snap.Get("boss")
	if err != nil {
		t.Fatal(err)
	}
	if boss.Source != SourceStored || boss.Version != 3 || boss.Definition != stored[0].Definition {
		t.Errorf("boss = source %d version %d, want stored at 3 with its definition", boss.Source, boss.Version)
	}
	if !slices.Equal(boss.Helpers, []string{"filed", "mate"}) {
		t.Errorf("boss's helpers = %q, want the file agent and the stored one", boss.Helpers)
	}
	if _, ok := boss.Known().Get("prompt_agent_mate"); !ok {
		t.Error("boss is not offered its stored helper")
	}
	if filed, _ := snap.Get("filed"); filed.Source != SourceFile {
		t.Error("a stored agent took the slug of a file agent")
	}
	if _, err := snap.Get("orphan"); err == nil {
		t.Error("an agent whose helper no agent has is served")
	}
	var reasons []string
	for _, e := range snap.Errors {
		reasons = append(reasons, e.Error())
	}
	joined := strings.Join(reasons, "\n")
	for _, want := range []string{
		`stored agent filed: contents.slug: the agent file`,
		`stored agent orphan: contents.extraAgents[0].slug: no agent has the slug "nobody"`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q:\n%s", want, joined)
		}
	}
}

func TestValidateRefusesWhatAFileCheckRefuses(t *testing.T) {
	tools := t.TempDir()
	script := filepath.Join(tools, "hello.sh")
	writeFile(t, script, "#!/bin/sh\ncase \"$1\" in describe) echo '{\"slug\": \"hello\", \"description\": \"says hello\", \"args\": []}' ;; run) echo hello ;; esac\n", 0o755)
	elsewhere := filepath.Join(t.TempDir(), "x.sh")
	writeFile(t, elsewhere, "#!/bin/sh\n", 0o755)
	link := filepath.Join(tools, "escape")
	if err := os.Symlink(filepath.Dir(elsewhere), link); err != nil {
		t.Fatal(err)
	}
	var stored []Stored
	closed := storedCatalog(t, &stored)
	open := storedCatalog(t, &stored, tools)
	single := func(path string) string {
		return fmt.Sprintf(`, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}]`, path)
	}
	ctx := context.Background()
	cases := []struct {
		name   string
		cat    *Catalog
		def    string
		update bool
		kind   errs.Kind
		want   string
	}{
		{"missing model url", open, `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1", "modelName": "m"}}`, false, errs.KindInvalid, "contents.modelUrl: required"},
		{"syntax", open, `{"tag": `, false, errs.KindInvalid, "line 1"},
		{"file agent's slug", open, definition("filed", ""), false, errs.KindConflict, "read-only"},
		{"update a file agent", open, definition("filed", ""), true, errs.KindConflict, "read-only"},
		{"no tool dirs allowed", closed, definition("a", single(script)), false, errs.KindInvalid, "contents.bashToolboxes[0]: " + script + ": a stored agent runs no program unless"},
		{"outside the tool dirs", open, definition("a", single(elsewhere)), false, errs.KindInvalid, "contents.bashToolboxes[0]: " + elsewhere + " is not under"},
		{"a link out of the tool dirs", open, definition("a", single(filepath.Join(link, "x.sh"))), false, errs.KindInvalid, "is not under"},
		{"mcp program outside", open, definition("a", `, "mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "m", "executable": "sh"}}]`), false, errs.KindInvalid, "contents.mcpServers[0].executable: "},
		{"unknown helper", open, definition("a", `, "extraAgents": [{"slug": "nobody"}]`), false, errs.KindInvalid, "contents.extraAgents[0].slug: no agent has"},
		{"lua with files", open, definition("a", `, "builtinToolboxes": [{"tag": "LuaToolbox", "contents": {"name": "l", "allowedPaths": ["/"]}}]`), false, errs.KindInvalid, "contents.builtinToolboxes[0]: a stored agent's LuaToolbox may not have a file sandbox"},
		{"lua without files", open, definition("a", `, "builtinToolboxes": [{"tag": "LuaToolbox", "contents": {"name": "l", "allowedHosts": ["example.com"]}}]`), false, 0, ""},
		{"fine", open, definition("a", single(script)+`, "extraAgents": [{"slug": "filed"}, {"slug": "a", "as": "again"}]`), false, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			slug := ""
			if tc.update {
				slug = "filed"
			}
			_, err := tc.cat.Validate(ctx, slug, []byte(tc.def), tc.update)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if errs.KindOf(err) != tc.kind || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v (kind %d), want kind %d with %q", err, errs.KindOf(err), tc.kind, tc.want)
			}
		})
	}
}

// Only keeps a stored agent and its helpers, stored or filed, at every
// change of the stored agents; a slug no agent has keeps them all.
func TestOnlyKeepsAStoredAgentAndItsHelpers(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, slug := range []string{"filed", "other"} {
		files = append(files, filepath.Join(dir, slug+".json"))
		writeFile(t, files[len(files)-1], definition(slug, ""), 0o644)
	}
	set := agentfile.Loader{WorkDir: dir}.Load(files, nil)
	stored := []Stored{
		{Slug: "boss", Version: 1, Definition: definition("boss", `, "extraAgents": [{"slug": "mate"}]`)},
		{Slug: "mate", Version: 1, Definition: definition("mate", `, "extraAgents": [{"slug": "filed"}]`)},
		{Slug: "unused", Version: 1, Definition: definition("unused", "")},
	}
	slugs := func(snap *Snapshot) []string {
		var out []string
		for _, a := range snap.Agents() {
			out = append(out, a.Slug)
		}
		return out
	}
	catalog := func(only string) *Catalog {
		return New(context.Background(), func() *agentfile.Set { return set }, Options{
			Stored: func(context.Context) ([]Stored, error) { return stored, nil },
			Only:   only,
		})
	}
	cat := catalog("boss")
	if got := slugs(cat.Snapshot()); !slices.Equal(got, []string{"boss", "filed", "mate"}) {
		t.Errorf("only boss = %q, want boss and its helpers", got)
	}
	stored = append(stored, Stored{Slug: "late", Version: 1, Definition: definition("late", "")})
	if got := slugs(cat.ReloadStored(context.Background())); !slices.Equal(got, []string{"boss", "filed", "mate"}) {
		t.Errorf("only boss after a change = %q, want boss and its helpers", got)
	}
	if got := slugs(catalog("nobody").Snapshot()); len(got) != 6 {
		t.Errorf("only a slug no agent has = %q, want every agent", got)
	}
}

// Under Only, a stored agent left out still holds its slug, and may be
// named as a helper.
func TestOnlyLeavesTheSlugsOfTheOthersTaken(t *testing.T) {
	stored := []Stored{
		{Slug: "boss", Version: 1, Definition: definition("boss", "")},
		{Slug: "unused", Version: 1, Definition: definition("unused", "")},
	}
	cat := New(context.Background(), func() *agentfile.Set { return &agentfile.Set{} }, Options{
		Stored: func(context.Context) ([]Stored, error) { return stored, nil },
		Only:   "boss",
	})
	ctx := context.Background()
	if _, err := cat.Validate(ctx, "", []byte(definition("unused", "")), false); errs.KindOf(err) != errs.KindConflict {
		t.Errorf("create under a stored slug left out = %v, want a conflict", err)
	}
	if _, err := cat.Validate(ctx, "", []byte(definition("new", `, "extraAgents": [{"slug": "unused"}]`)), false); err != nil {
		t.Errorf("create naming a stored agent left out as a helper = %v", err)
	}
}

// Issue 33: a program's path is judged where it really leads, also when
// the program is not there yet: a link that points nowhere yet, a file
// not there yet behind a link out, a ".." after a link.
func TestValidateFollowsLinksToProgramsNotThereYet(t *testing.T) {
	tools, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(filepath.Join(outside, "later"), filepath.Join(tools, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(outside, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "sub"), filepath.Join(tools, "escape")); err != nil {
		t.Fatal(err)
	}
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	cat := New(context.Background(), func() *agentfile.Set { return &agentfile.Set{} }, Options{ToolDirs: []string{tools}, MCP: pool})
	mcp := func(path string) string {
		return definition("a", fmt.Sprintf(`, "mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "m", "executable": %q}}]`, path))
	}
	for name, path := range map[string]string{
		"a link to a file not there yet":      filepath.Join(tools, "dangling"),
		"a file not there yet behind a link":  filepath.Join(tools, "escape", "later"),
		"a folder not there yet behind links": filepath.Join(tools, "escape", "new", "later"),
		"dot-dot after a link":                filepath.Join(tools, "escape") + "/../later",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := cat.Validate(context.Background(), "", []byte(mcp(path)), false)
			if errs.KindOf(err) != errs.KindInvalid || !strings.Contains(err.Error(), "is not under") {
				t.Fatalf("Validate(%s) = %v, want it refused as outside", path, err)
			}
		})
	}
}

// Issue 33: a stored agent's program is checked again when it starts: a
// path that was inside when the agent was stored and leads out since
// does not run.
func TestAStoredAgentsProgramsAreCheckedWhenTheyStart(t *testing.T) {
	tools, outside := t.TempDir(), t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	describe := `#!/bin/sh
case "$1" in describe) echo '{"slug": "hello", "description": "says hello", "args": []}' ;; run) echo hello ;; esac
`
	writeFile(t, filepath.Join(tools, "bash", "hello.sh"), describe, 0o755)
	writeFile(t, filepath.Join(outside, "hello.sh"), "#!/bin/sh\ntouch "+marker+"\n"+strings.TrimPrefix(describe, "#!/bin/sh\n"), 0o755)
	writeFile(t, filepath.Join(outside, "server"), "#!/bin/sh\ntouch "+marker+"\n", 0o755)
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	stored := []Stored{{Slug: "a", Version: 1, Definition: definition("a", fmt.Sprintf(
		`, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}], "mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "m", "executable": %q}}]`,
		filepath.Join(tools, "bash", "hello.sh"), filepath.Join(tools, "mcp", "server")))}}
	cat := New(context.Background(), func() *agentfile.Set { return &agentfile.Set{} }, Options{
		Stored:   func(context.Context) ([]Stored, error) { return stored, nil },
		ToolDirs: []string{tools},
		MCP:      pool,
	})
	agent, err := cat.Get("a")
	if err != nil {
		t.Fatalf("the agent does not load: %v (%v)", err, cat.Snapshot().Errors)
	}
	// Both paths lead out now: the script's folder and the server's.
	if err := os.RemoveAll(filepath.Join(tools, "bash")); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{"bash", "mcp"} {
		if err := os.Symlink(outside, filepath.Join(tools, link)); err != nil {
			t.Fatal(err)
		}
	}
	set := agent.Toolset(context.Background(), nil)
	if status := agent.MCPStatus(nil)[0]; !strings.Contains(status.Error, "is not under") {
		t.Errorf("MCP server status = %+v, want it refused as outside", status)
	}
	hello, ok := set.Get("bash_hello")
	if !ok {
		t.Fatal("no bash_hello")
	}
	if res := hello.Execute(context.Background(), tool.Call{}); res.Status != session.ResultError || !strings.Contains(res.Text, "is not under") {
		t.Errorf("bash_hello = %+v, want it refused as outside", res)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a program outside the allowed folders ran")
	}
}

// Issue 33: describing a stored agent's scripts starts them too: a script
// of an allowed folder that is a link out is not described (nor run).
func TestAStoredAgentsScriptsLeadingOutAreNotDescribed(t *testing.T) {
	tools, outside := t.TempDir(), t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	hello := `#!/bin/sh
case "$1" in describe) echo '{"slug": "hello", "description": "says hello", "args": []}' ;; run) echo hello ;; esac
`
	writeFile(t, filepath.Join(tools, "box", "hello.sh"), hello, 0o755)
	writeFile(t, filepath.Join(outside, "evil.sh"), "#!/bin/sh\ntouch "+marker+"\n", 0o755)
	if err := os.Symlink(filepath.Join(outside, "evil.sh"), filepath.Join(tools, "box", "evil.sh")); err != nil {
		t.Fatal(err)
	}
	stored := []Stored{{Slug: "a", Version: 1, Definition: definition("a", fmt.Sprintf(
		`, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": %q}}]`, filepath.Join(tools, "box")))}}
	cat := New(context.Background(), func() *agentfile.Set { return &agentfile.Set{} }, Options{
		Stored:   func(context.Context) ([]Stored, error) { return stored, nil },
		ToolDirs: []string{tools},
	})
	var reasons []string
	for _, e := range cat.Snapshot().Errors {
		reasons = append(reasons, e.Error())
	}
	if !strings.Contains(strings.Join(reasons, "\n"), "is not under") {
		t.Errorf("load errors = %q, want the link out refused", reasons)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a script outside the allowed folders ran to describe itself")
	}
}

// A file agent has no versions: asking for one is invalid, with the code
// a version a stored agent does not have gets.
func TestAFileAgentHasNoVersions(t *testing.T) {
	var stored []Stored
	cat := storedCatalog(t, &stored)
	_, err := cat.Version(context.Background(), "filed", 3)
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.KindInvalid || e.Code != errs.CodeUnknownVersion || !strings.Contains(e.Message, "which has no versions") {
		t.Errorf("version 3 of a file agent: %v, want invalid, unknown_version", err)
	}
}
