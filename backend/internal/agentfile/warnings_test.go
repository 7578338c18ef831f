package agentfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A field this server does not know loads with a warning naming the file
// and the field: an agents-exe field it does not implement says so (and
// what the agent goes without), a misspelt one names the field meant.
// The warnings are on the Set and on the agent whose file they are about.
func TestLoadWarnsOfEveryUnknownOrUnsupportedField(t *testing.T) {
	t.Parallel()
	loader, _ := testdataLoader(t)
	set := loader.Load([]string{"warnings/legacy.json", "warnings/misspelt.json"}, nil)
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}

	wantByFile := map[string]map[string]string{
		"warnings/legacy.json": {
			"contents.fileSandboxes":        "not supported by this server; ignored",
			"contents.executionMode":        "not supported by this server; ignored",
			"contents.toolCallPolicy":       `not supported by this server; ignored: no call is held or deferred by it (write approval rules in "approvals")`,
			"contents.toolCallPolicyConfig": `not supported by this server; ignored: no call is held or deferred by it (write approval rules in "approvals")`,
			"contents.wakeOn":               "not supported by this server; ignored",
			"contents.bindings":             "not supported by this server; ignored",
			// An empty one declares nothing: no warning. Its LuaToolbox
			// loads: no warning either.
		},
		"warnings/misspelt.json": {
			"contents.sytemPrompt":                `unknown field; ignored (did you mean "systemPrompt"?)`,
			"contents.maxstep":                    `unknown field; ignored (did you mean "maxSteps"?)`,
			"contents.bultinToolboxes":            `unknown field; ignored (did you mean "builtinToolboxes"?)`,
			"contents.colour":                     "unknown field; ignored",
			"contents.clientTools[0].descripton":  `unknown field; ignored (did you mean "description"?)`,
			"contents.mcpServers[0].contents.arg": `unknown field; ignored (did you mean "args"?)`,
		},
	}
	want := 0
	for _, fields := range wantByFile {
		want += len(fields)
	}
	if len(set.Warnings) != want {
		t.Errorf("%d warnings, want %d:\n%s", len(set.Warnings), want, strings.Join(errorStrings(set.Warnings), "\n"))
	}
	for _, w := range set.Warnings {
		if reason, ok := wantByFile[w.File][w.Field]; !ok || w.Reason != reason {
			t.Errorf("unexpected warning %v (want %q)", w, reason)
		}
	}

	for slug, file := range map[string]string{"legacy": "warnings/legacy.json", "misspelt": "warnings/misspelt.json"} {
		a := set.Get(slug)
		if len(a.Warnings) != len(wantByFile[file]) {
			t.Errorf("%s has %d warnings, want %d: %v", slug, len(a.Warnings), len(wantByFile[file]), errorStrings(a.Warnings))
		}
		for _, w := range a.Warnings {
			if w.File != file {
				t.Errorf("%s carries a warning about %s: %v", slug, w.File, w)
			}
		}
	}
}

// A clean file has no warnings, on the Set or on its agent.
func TestLoadCleanFileHasNoWarnings(t *testing.T) {
	t.Parallel()
	loader, _ := testdataLoader(t)
	set := loader.Load([]string{"narrow/reviewer.json"}, nil)
	if len(set.Errors) != 0 || len(set.Warnings) != 0 {
		t.Fatalf("errors %v, warnings %v", errorStrings(set.Errors), errorStrings(set.Warnings))
	}
	if w := set.Roots()[0].Warnings; len(w) != 0 {
		t.Errorf("agent warnings = %v", errorStrings(w))
	}
}

func TestSuggestField(t *testing.T) {
	t.Parallel()
	known := []string{"systemPrompt", "modelName", "modelUrl", "maxSteps", "args", "env", "passEnv"}
	for _, tc := range []struct{ key, want string }{
		{"sytemPrompt", "systemPrompt"},
		{"systemprompt", "systemPrompt"},
		{"modelURL", "modelUrl"},
		{"ModelName", "modelName"},
		{"maxstep", "maxSteps"},
		{"arg", "args"},
		{"passenv", "passEnv"},
		{"colour", ""},
		{"x", ""},
		{"environment", ""},
	} {
		if got := suggestField(tc.key, known); got != tc.want {
			t.Errorf("suggestField(%q) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// A key given twice in an agent file loads with the last value, as
// agents-exe reads it, and a warning naming the field: the API refuses
// such a definition, and the file should say why before it is stored.
func TestLoadWarnsOfAKeyGivenTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "twice.json")
	if err := os.WriteFile(path, []byte(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "twice", "flavor": "OpenAIv1", "modelUrl": "http://x/v1", "modelName": "m",
		"systemPrompt": ["first"], "systemPrompt": ["second"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	set := Loader{WorkDir: dir}.Load([]string{path}, nil)
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}
	a := set.Get("twice")
	if a == nil || len(a.SystemPrompt) != 1 || a.SystemPrompt[0] != "second" {
		t.Fatalf("agent %+v, want the last systemPrompt", a)
	}
	if len(set.Warnings) != 1 || set.Warnings[0].File != "twice.json" || set.Warnings[0].Field != "contents.systemPrompt" ||
		!strings.Contains(set.Warnings[0].Reason, "given twice") {
		t.Errorf("warnings = %v, want one naming contents.systemPrompt", errorStrings(set.Warnings))
	}
	if len(a.Warnings) != 1 {
		t.Errorf("agent warnings = %v", errorStrings(a.Warnings))
	}
}
