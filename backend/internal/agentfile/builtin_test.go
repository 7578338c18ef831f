package agentfile

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The agents-exe test agents for builtin toolboxes load: keys as
// agents-exe decodes them (Name, Versioning, Capabilities, FileSandbox
// with fsb… fields) and as its documentation writes them (name,
// versioning, the older path and access, fileSandbox with predicate…).
// What this server leaves out is a warning naming the capability.
func TestBuiltinToolboxesLoadAsAgentsExeWritesThem(t *testing.T) {
	t.Parallel()
	loader, dir := testdataLoader(t)
	set := loader.Load([]string{"builtin/sqlite-tester.json", "builtin/file-system-tester.json", "builtin/readonly.json"}, nil)
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}
	res := filepath.Join(dir, "builtin", "resources")
	project := filepath.Join(dir, "builtin", "project")

	sq := set.Get("sqlite-tester").BuiltinToolboxes
	if len(sq) != 3 {
		t.Fatalf("sqlite-tester toolboxes = %+v", sq)
	}
	if b := sq[0]; b.Kind != SqliteToolboxKind || b.Name != "testdb_rw" || b.Sqlite.Access != SqliteReadWrite || b.Sqlite.Path != filepath.Join(res, "test-smoke.db") {
		t.Errorf("testdb_rw = %+v", b)
	}
	if b := sq[1]; b.Sqlite.Access != SqliteVersioned || b.Sqlite.Path != filepath.Join(res, "test-smoke.db") || b.Sqlite.StorageRoot != "" {
		t.Errorf("testdb_ver = %+v", b)
	}
	var names []string
	for _, b := range sq {
		names = append(names, b.ToolNames()...)
	}
	if want := []string{"sqlite_testdb_rw_query", "sqlite_testdb_ver_query", "sqlite_testdb_ver_promote", "system_testsys_system_info"}; !slices.Equal(names, want) {
		t.Errorf("tool names = %v, want %v", names, want)
	}

	fs := set.Get("file-system-tester").BuiltinToolboxes
	if got := strings.Join(fs[0].Capabilities, ","); got != "date,operating-system,running-user,hostname,working-directory,list-directory,execute-command" {
		t.Errorf("system capabilities = %s", got)
	}
	dev := fs[1]
	if dev.Kind != DeveloperToolboxKind || strings.Join(dev.Capabilities, ",") != "read-file-range,write-file-range,patch-file,list-directory,help" {
		t.Errorf("developer toolbox = %+v", dev)
	}
	if dev.Sandbox.Name != "test-file-access" || dev.Sandbox.MaxFileSize != 10485760 {
		t.Errorf("sandbox = %+v", dev.Sandbox)
	}
	want := "Any(DirectoryRecursive " + filepath.Join(project, "src") + ", FileExactly " + filepath.Join(project, "README.md") +
		", And(DirectoryShallow " + project + ", Not(FileExtension [md])))"
	if got := dev.Sandbox.Predicate.String(); got != want {
		t.Errorf("predicate = %s\nwant        %s", got, want)
	}

	ro := set.Get("guidelines").BuiltinToolboxes
	if ro[0].Sqlite.Access != SqliteReadOnly || ro[1].Sqlite.Access != SqliteVersioned || ro[1].Toolgroup != "" || ro[2].Sandbox.MaxFileSize != 1024 || ro[2].Sandbox.Name != "docs" {
		t.Errorf("guidelines toolboxes = %+v", ro)
	}

	wantWarnings := map[string]string{
		"builtin/sqlite-tester.json: contents.builtinToolboxes[0].contents.Versioning.path":      "does not exist",
		"builtin/sqlite-tester.json: contents.builtinToolboxes[1].contents.Versioning.basePath":  "does not exist",
		"builtin/file-system-tester.json: contents.builtinToolboxes[0].contents.Capabilities[7]": `capability "env-vars" is not offered by this server: the server's environment holds its API keys`,
		"builtin/file-system-tester.json: contents.builtinToolboxes[0].contents.Capabilities[8]": `capability "list-sessions" is not offered by this server`,
		"builtin/file-system-tester.json: contents.builtinToolboxes[1].contents.Capabilities[5]": `capability "scaffold-tool" is not offered by this server; the toolbox is offered without it`,
		"builtin/readonly.json: contents.builtinToolboxes[1].contents.path":                      "does not exist",
		"builtin/readonly.json: contents.builtinToolboxes[3].contents.capabilities[0]":           `capability "env-vars" is not offered`,
		"builtin/readonly.json: contents.builtinToolboxes[3].contents.capabilities":              "the toolbox offers no tool",
	}
	if len(set.Warnings) != len(wantWarnings) {
		t.Errorf("warnings:\n%s", strings.Join(errorStrings(set.Warnings), "\n"))
	}
	for _, w := range set.Warnings {
		if want, ok := wantWarnings[w.File+": "+w.Field]; !ok || !strings.Contains(w.Reason, want) {
			t.Errorf("unexpected warning %v", w)
		}
	}
}

// A builtin toolbox the file gets wrong is an error naming the field.
func TestBuiltinToolboxErrorsNameTheField(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	head := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "a", "flavor": "OpenAIv1", "modelUrl": "http://m/v1", "modelName": "m", "builtinToolboxes": [`
	for _, c := range []struct{ name, box, field, reason string }{
		{"unknown kind", `{"tag": "ShellToolbox", "contents": {}}`, "contents.builtinToolboxes[0].tag", `unknown builtin toolbox "ShellToolbox"`},
		{"no name", `{"tag": "SystemToolbox", "contents": {"Capabilities": ["date"]}}`, "contents.builtinToolboxes[0].contents.Name", "required field is missing"},
		{"bad name", `{"tag": "SystemToolbox", "contents": {"Name": "my box", "Capabilities": ["date"]}}`, "contents.builtinToolboxes[0].contents.Name", "system_my box_system_info"},
		{"unknown capability", `{"tag": "SystemToolbox", "contents": {"Name": "s", "Capabilities": ["telepathy"]}}`, "contents.builtinToolboxes[0].contents.Capabilities[0]", `unknown capability "telepathy"`},
		{"read-only database missing", `{"tag": "SqliteToolbox", "contents": {"Name": "g", "Versioning": {"tag": "SqliteReadOnly", "path": "nowhere.db"}}}`, "contents.builtinToolboxes[0].contents.Versioning.path", "a read-only database must exist when the agent loads"},
		{"database folder missing", `{"tag": "SqliteToolbox", "contents": {"Name": "g", "Versioning": {"tag": "SqliteReadWrite", "path": "no/such/dir/x.db"}}}`, "contents.builtinToolboxes[0].contents.Versioning.path", "its folder"},
		{"database is a folder", `{"tag": "SqliteToolbox", "contents": {"Name": "g", "Versioning": {"tag": "SqliteReadWrite", "path": "."}}}`, "contents.builtinToolboxes[0].contents.Versioning.path", "is a directory"},
		{"unknown versioning", `{"tag": "SqliteToolbox", "contents": {"Name": "g", "Versioning": {"tag": "SqliteMagic", "path": "x.db"}}}`, "contents.builtinToolboxes[0].contents.Versioning.tag", `unknown versioning "SqliteMagic"`},
		{"versioned without sharing", `{"tag": "SqliteToolbox", "contents": {"Name": "g", "Versioning": {"tag": "SqliteVersioned", "basePath": "x.db"}}}`, "contents.builtinToolboxes[0].contents.Versioning.shared", "required field is missing"},
		{"unknown predicate", `{"tag": "DeveloperToolbox", "contents": {"Name": "d", "Capabilities": ["help"], "FileSandbox": {"fsbPredicate": {"tag": "PathPrefix", "contents": "."}}}}`, "contents.builtinToolboxes[0].contents.FileSandbox.fsbPredicate.tag", `unknown path predicate "PathPrefix"`},
		{"And of one", `{"tag": "DeveloperToolbox", "contents": {"Name": "d", "Capabilities": ["help"], "FileSandbox": {"predicate": {"tag": "And", "contents": [{"tag": "AlwaysAllow"}]}}}}`, "contents.builtinToolboxes[0].contents.FileSandbox.predicate.contents", "And takes two predicates, got 1"},
		{"size not a number", `{"tag": "DeveloperToolbox", "contents": {"Name": "d", "Capabilities": ["help"], "FileSandbox": {"predicate": {"tag": "AlwaysAllow"}, "maxFileSize": "big"}}}`, "contents.builtinToolboxes[0].contents.FileSandbox.maxFileSize", "must be a whole number"},
		{"twice", `{"tag": "SystemToolbox", "contents": {"Name": "s", "Capabilities": ["date"]}}, {"tag": "SystemToolbox", "contents": {"Name": "s", "Capabilities": ["hostname"]}}`, "contents.builtinToolboxes[1].contents", "declared twice"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, _, err, _ := parse([]byte(head+c.box+`]}}`), filepath.Join(dir, "a.json"), dir)
			if err == nil || err.Field != c.field || !strings.Contains(err.Reason, c.reason) {
				t.Errorf("error = %v, want %s: …%s…", err, c.field, c.reason)
			}
		})
	}
}
