package agentfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Activation and skill sources read as agents-exe writes them, in both
// spellings; what cannot be read is an error naming the field, and a git
// repository of skills a warning.
func TestActivationAndSkillSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	parse := func(fields string) (*Agent, []*Error, error) {
		t.Helper()
		path := filepath.Join(dir, "agent.json")
		body := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1", "modelUrl": "https://x.test/v1", "modelName": "m", ` + fields + `}}`
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return Loader{WorkDir: dir}.ParseFile(path)
	}

	a, warnings, err := parse(`"bashToolboxes": [
		{"tag": "FileSystemDirectory", "contents": {"Path": "tools", "activation": "always"}},
		{"tag": "FileSystemDirectory", "contents": {"Path": "tools", "Activation": {"tag": "on-demand", "toolgroup": "write-tools"}}},
		{"tag": "SingleTool", "contents": {"path": "tools", "activation": {"tag": "on-demand", "toolgroup": "one"}}}],
		"mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "m", "executable": "true", "Activation": {"tag": "on-demand", "toolgroup": "mcp"}}}],
		"skillSources": [{"tag": "SkillDirectory", "contents": "skills"}, {"tag": "SkillDirectory", "contents": {"Path": "skills"}}, "skills",
			{"tag": "SkillGitRepo", "contents": {"url": "https://example.test/skills.git"}}],
		"autoEnableSkills": ["code-review"]`)
	if err != nil {
		t.Fatal(err)
	}
	if g := []string{a.BashToolboxes[0].Toolgroup, a.BashToolboxes[1].Toolgroup, a.BashToolboxes[2].Toolgroup, a.MCPServers[0].Toolgroup}; strings.Join(g, ",") != ",write-tools,one,mcp" {
		t.Errorf("toolgroups = %q", g)
	}
	if len(a.SkillSources) != 3 || a.SkillSources[2].Path != filepath.Join(dir, "skills") || a.SkillSources[1].Field != "contents.skillSources[1]" {
		t.Errorf("skill sources = %+v", a.SkillSources)
	}
	if len(a.AutoEnableSkills) != 1 {
		t.Errorf("autoEnableSkills = %v", a.AutoEnableSkills)
	}
	var gitWarned bool
	for _, w := range warnings {
		if strings.Contains(w.Field, "activation") || strings.Contains(w.Field, "Activation") {
			t.Errorf("activation still warned of: %v", w)
		}
		gitWarned = gitWarned || (w.Field == "contents.skillSources[3].tag" && strings.Contains(w.Reason, "not supported"))
	}
	if !gitWarned {
		t.Errorf("warnings = %v, want the git repository's", warnings)
	}

	for _, tc := range []struct{ fields, field, reason string }{
		{`"bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools", "activation": "sometimes"}}]`,
			"contents.bashToolboxes[0].contents.activation", `unknown activation "sometimes"`},
		{`"bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools", "activation": {"tag": "first-n-steps", "toolgroup": "x"}}}]`,
			"contents.bashToolboxes[0].contents.activation.tag", `unknown activation "first-n-steps"`},
		{`"bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools", "activation": {"tag": "on-demand"}}}]`,
			"contents.bashToolboxes[0].contents.activation.toolgroup", "required field is missing"},
		{`"skillSources": [{"tag": "SkillZip", "contents": "x"}]`, "contents.skillSources[0].tag", `unknown skill source "SkillZip"`},
		{`"autoEnableSkills": ["Code_Review"]`, "contents.autoEnableSkills[0]", "not a skill name"},
	} {
		_, _, err := parse(tc.fields)
		e, ok := err.(*Error)
		if !ok || e.Field != tc.field || !strings.Contains(e.Reason, tc.reason) {
			t.Errorf("%s: error %v, want %s: %s", tc.fields, err, tc.field, tc.reason)
		}
	}
}

// Every toolbox kind agents-exe gives an activation reads it, in both
// spellings, the OnDisk form of an HTTP API included: its tools belong
// to the group. A lifetime is still a warning that says why.
func TestActivationOnEveryToolboxKind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	disk := `{"SpecUrl": "http://localhost:3000/", "BaseUrl": "http://localhost:3000", "activation": {"tag": "on-demand", "toolgroup": "rows"}}`
	for name, content := range map[string]string{"rest.json": disk, "notes.db": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	body := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1", "modelUrl": "https://x.test/v1", "modelName": "m",
		"builtinToolboxes": [
			{"tag": "SqliteToolbox", "contents": {"Name": "notes", "Versioning": {"tag": "SqliteReadWrite", "path": "notes.db"},
				"Activation": {"tag": "on-demand", "toolgroup": "db"}, "Lifetime": "conversation"}},
			{"tag": "SystemToolbox", "contents": {"Name": "sys", "Capabilities": ["date"], "activation": {"tag": "on-demand", "toolgroup": "db"}}},
			{"tag": "DeveloperToolbox", "contents": {"Name": "dev", "Capabilities": ["help"], "Activation": "always"}},
			{"tag": "LuaToolbox", "contents": {"name": "lua", "activation": {"tag": "on-demand", "toolgroup": "scripts"}, "lifetime": "tool-call"}}],
		"openApiToolboxes": [{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://localhost:8765/openapi.json", "BaseUrl": "http://localhost:8765",
			"Activation": {"tag": "on-demand", "toolgroup": "api"}}}],
		"postgrestToolboxes": [{"tag": "PostgRESTServerOnDisk", "contents": "rest.json"}]}}`
	path := filepath.Join(dir, "agent.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	a, warnings, err := Loader{WorkDir: dir}.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, b := range a.BuiltinToolboxes {
		groups = append(groups, b.Toolgroup)
	}
	for _, b := range a.APIToolboxes {
		groups = append(groups, b.Toolgroup)
	}
	if got := strings.Join(groups, ","); got != "db,db,,scripts,api,rows" {
		t.Errorf("toolgroups = %s, want db,db,,scripts,api,rows", got)
	}
	want := map[string]bool{
		"contents.builtinToolboxes[0].contents.Lifetime": true,
		"contents.builtinToolboxes[3].contents.lifetime": true,
	}
	for _, w := range warnings {
		if !want[w.Field] || !strings.HasPrefix(w.Reason, "not supported by this server; ignored: how long a toolbox lives is its kind's here") {
			t.Errorf("unexpected warning %v", w)
		}
		delete(want, w.Field)
	}
	if len(want) != 0 {
		t.Errorf("no warning for %v; warnings %v", want, warnings)
	}

	// An activation that cannot be read is an error naming the field,
	// whatever the toolbox.
	for _, tc := range []struct{ fields, field, reason string }{
		{`"builtinToolboxes": [{"tag": "SqliteToolbox", "contents": {"Name": "n", "Versioning": {"tag": "SqliteReadWrite", "path": "n.db"}, "Activation": "sometimes"}}]`,
			"contents.builtinToolboxes[0].contents.Activation", `unknown activation "sometimes"`},
		{`"builtinToolboxes": [{"tag": "LuaToolbox", "contents": {"name": "l", "activation": {"tag": "first-n-steps", "toolgroup": "x"}}}]`,
			"contents.builtinToolboxes[0].contents.activation.tag", `unknown activation "first-n-steps"`},
		{`"builtinToolboxes": [{"tag": "SystemToolbox", "contents": {"Name": "s", "Capabilities": ["date"], "activation": 3}}]`,
			"contents.builtinToolboxes[0].contents.activation", `must be "always" or an object, got number`},
		{`"openApiToolboxes": [{"tag": "OpenAPIServer", "contents": {"SpecUrl": "http://h/o.json", "BaseUrl": "http://h", "Activation": {"tag": "on-demand"}}}]`,
			"contents.openApiToolboxes[0].contents.Activation.toolgroup", "required field is missing"},
		{`"postgrestToolboxes": [{"tag": "PostgRESTServer", "contents": {"SpecUrl": "http://h/", "BaseUrl": "http://h", "activation": {"tag": "lazy", "toolgroup": "x"}}}]`,
			"contents.postgrestToolboxes[0].contents.activation.tag", `unknown activation "lazy"`},
	} {
		body := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1", "modelUrl": "https://x.test/v1", "modelName": "m", ` + tc.fields + `}}`
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := Loader{WorkDir: dir}.ParseFile(path)
		e, ok := err.(*Error)
		if !ok || e.Field != tc.field || !strings.Contains(e.Reason, tc.reason) {
			t.Errorf("%s: error %v, want %s: %s", tc.fields, err, tc.field, tc.reason)
		}
	}
}
