package agentfile

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testdata is where the load tests run, as if it were the working
// directory: files show relative to it in messages.
func testdataLoader(t *testing.T) (Loader, string) {
	t.Helper()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return Loader{WorkDir: dir}, dir
}

func slugs(agents []*Agent) []string {
	out := []string{}
	for _, a := range agents {
		out = append(out, a.Slug)
	}
	return out
}

func errorStrings(errs []*Error) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestLoadAgentsExeTree(t *testing.T) {
	t.Parallel()
	loader, dir := testdataLoader(t)
	set := loader.Load([]string{"tree/desk.json"}, nil)
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}
	if got := slugs(set.List()); !reflect.DeepEqual(got, []string{"code-counter", "librarian", "tour-desk"}) {
		t.Fatalf("agents = %v", got)
	}
	if got := slugs(set.Roots()); !reflect.DeepEqual(got, []string{"tour-desk"}) {
		t.Errorf("roots = %v", got)
	}

	desk := set.Get("tour-desk")
	tree := filepath.Join(dir, "tree")
	if desk.File != filepath.Join(tree, "desk.json") || desk.Parent != "" {
		t.Errorf("desk File = %q, Parent = %q", desk.File, desk.Parent)
	}
	// Helpers found in toolDirectory come before extraAgents, as in agents-exe.
	if !reflect.DeepEqual(desk.Helpers, []string{"librarian", "code-counter"}) {
		t.Errorf("desk Helpers = %v", desk.Helpers)
	}
	wantModel := Model{Flavor: FlavorOpenAIv1, BaseURL: "http://localhost:11434/v1", Name: "gemma3:4b", APIKeyID: "ollama"}
	if desk.Model() != wantModel {
		t.Errorf("Model() = %+v, want %+v", desk.Model(), wantModel)
	}
	if desk.ToolDirectory != filepath.Join(tree, "helpers") {
		t.Errorf("ToolDirectory = %q", desk.ToolDirectory)
	}
	wantBoxes := []BashToolbox{
		{Kind: FileSystemDirectory, Path: filepath.Join(tree, "bin"), BasenameFilter: ".sh"},
		{Kind: SingleTool, Path: filepath.Join(tree, "bin", "hello.sh")},
	}
	if !reflect.DeepEqual(desk.BashToolboxes, wantBoxes) {
		t.Errorf("BashToolboxes = %+v, want %+v", desk.BashToolboxes, wantBoxes)
	}
	wantMCP := []MCPServer{{Kind: MCPKindSimpleBinary, Name: "browser", Executable: "npx", Args: []string{"some-mcp-server@latest", "--headless"}}}
	if !reflect.DeepEqual(desk.MCPServers, wantMCP) {
		t.Errorf("MCPServers = %+v", desk.MCPServers)
	}
	if len(desk.SystemPrompt) != 2 {
		t.Errorf("SystemPrompt = %q", desk.SystemPrompt)
	}

	for _, helper := range []string{"librarian", "code-counter"} {
		if p := set.Get(helper).Parent; p != "tour-desk" {
			t.Errorf("%s Parent = %q, want tour-desk", helper, p)
		}
	}
	counter := set.Get("code-counter")
	if counter.Flavor != FlavorMistralV1 {
		t.Errorf("code-counter Flavor = %q, want the canonical MistralV1", counter.Flavor)
	}
	// Written relative to the working directory, as agents-exe resolves it.
	if got, want := counter.BashToolboxes[0].Path, filepath.Join(tree, "code", "tools"); got != want {
		t.Errorf("code-counter toolbox Path = %q, want %q", got, want)
	}

	if boxes := set.Get("tour-desk").BuiltinToolboxes; len(boxes) != 1 || boxes[0].Kind != SystemToolboxKind || boxes[0].Name != "system" ||
		strings.Join(boxes[0].Capabilities, ",") != "date" {
		t.Errorf("tour-desk builtin toolboxes = %+v, want the system toolbox with the date", boxes)
	}
	wantWarnings := map[string]string{
		"tree/code/agent.json: contents.bashToolboxes[0].contents.Path": "relative to the working directory",
	}
	if len(set.Warnings) != len(wantWarnings) {
		t.Fatalf("warnings = %v", errorStrings(set.Warnings))
	}
	for _, w := range set.Warnings {
		if want, ok := wantWarnings[w.File+": "+w.Field]; !ok || !strings.Contains(w.Reason, want) {
			t.Errorf("unexpected warning %v", w)
		}
	}
}

func TestLoadDirectoryRoots(t *testing.T) {
	t.Parallel()
	loader, _ := testdataLoader(t)
	set := loader.Load(nil, []string{"tree"})
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}
	if got := slugs(set.Roots()); !reflect.DeepEqual(got, []string{"tour-desk"}) {
		t.Errorf("roots = %v (subdirectories are not roots)", got)
	}
	if set.Len() != 3 {
		t.Errorf("Len() = %d, want the root and its two helpers", set.Len())
	}
	found := false
	for _, w := range set.Warnings {
		if w.File == "tree/keys.json" && strings.Contains(w.Reason, "not an agent file") {
			found = true
		}
		if strings.Contains(w.Error(), "unused-by-ollama") {
			t.Errorf("a warning shows the content of the keys file: %v", w)
		}
	}
	if !found {
		t.Errorf("no warning about tree/keys.json; warnings: %v", errorStrings(set.Warnings))
	}
}

// The failures of a load, each asserted by file and field.
func TestLoadReportsOneErrorPerBadFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		files      []string
		dirs       []string
		wantAgents []string
		wantErrors []string // "file: field: reason", exactly
	}{
		{
			name:       "one bad file among good ones",
			dirs:       []string{"mixed"},
			wantAgents: []string{"alpha", "beta"},
			wantErrors: []string{`mixed/broken.json: contents.flavor: unknown flavor "GPT9" (want one of OpenAIv1, MistralV1, KimiV1, ClaudeV1)`},
		},
		{
			name:       "duplicate slug",
			dirs:       []string{"dup"},
			wantAgents: []string{"twin"},
			wantErrors: []string{`dup/second.json: contents.slug: duplicate slug "twin", already defined in dup/first.json`},
		},
		{
			name:       "missing extraAgents path",
			files:      []string{"missing-ref/root.json", "mixed/alpha.json"},
			wantAgents: []string{"alpha"},
			wantErrors: []string{`missing-ref/root.json: contents.extraAgents[0].path: "./helpers/ghost.json" does not exist`},
		},
		{
			name:       "extraAgents path that is not an agent file",
			files:      []string{"not-agent-ref/root.json"},
			wantAgents: []string{},
			wantErrors: []string{`not-agent-ref/root.json: contents.extraAgents[0].path: "./keys.json" is not an agent file (no "tag")`},
		},
		{
			name:  "extraAgents slug that does not match the file",
			files: []string{"slug-mismatch/root.json"},
			// The helper itself is fine: it loads, though nothing roots it.
			wantAgents: []string{"assistant"},
			wantErrors: []string{`slug-mismatch/root.json: contents.extraAgents[0].slug: "helper" does not match the slug "assistant" of slug-mismatch/helper.json`},
		},
		{
			name:       "a binding the helper does not take",
			files:      []string{"narrow-bad/unknown-binding.json"},
			wantAgents: []string{"reviewer"},
			wantErrors: []string{`narrow-bad/unknown-binding.json: contents.extraAgents[0].bindings.BRANCH: the helper reviewer has no argument or param "BRANCH" (bind "prompt" or one of its params: REPO)`},
		},
		{
			name:       "a binding of a secret param",
			files:      []string{"narrow-bad/secret-binding.json"},
			wantAgents: []string{"reviewer"},
			wantErrors: []string{`narrow-bad/secret-binding.json: contents.extraAgents[0].bindings.TOKEN: "TOKEN" is a secret param of reviewer: secrets come with a session's params, never from an agent file`},
		},
		{
			name:       "two entries offering one tool name, one narrowed",
			files:      []string{"narrow-bad/clash.json"},
			wantAgents: []string{"reviewer"},
			wantErrors: []string{`narrow-bad/clash.json: contents.extraAgents[1].slug: the tool prompt_agent_reviewer is already offered by contents.extraAgents[0].path; give this entry an "as" of its own`},
		},
		{
			name:       "a bad helper rejects its parent",
			files:      []string{"bad-helper/root.json"},
			wantAgents: []string{},
			wantErrors: []string{
				`bad-helper/root.json: contents.toolDirectory: helper bad-helper/helpers/worker.json did not load`,
				`bad-helper/helpers/worker.json: contents.flavor: unknown flavor "GPT9" (want one of OpenAIv1, MistralV1, KimiV1, ClaudeV1)`,
			},
		},
		{
			name:       "syntax error",
			files:      []string{"bad/syntax.json", "mixed/beta.json"},
			wantAgents: []string{"beta"},
			wantErrors: []string{`bad/syntax.json:5:5: invalid character '"' after object key:value pair`},
		},
		{
			name:       "a named file that is not an agent file",
			files:      []string{"tree/keys.json"},
			wantAgents: []string{},
			wantErrors: []string{`tree/keys.json: tag: required field is missing: not an agent file (want "tag": "OpenAIAgentDescription")`},
		},
		{
			name:       "missing inputs",
			files:      []string{"nowhere.json"},
			dirs:       []string{"no-such-dir"},
			wantAgents: []string{},
			wantErrors: []string{"nowhere.json: file does not exist", "no-such-dir: directory does not exist"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			loader, _ := testdataLoader(t)
			set := loader.Load(tc.files, tc.dirs)
			if got := slugs(set.List()); !reflect.DeepEqual(got, tc.wantAgents) {
				t.Errorf("agents = %v, want %v", got, tc.wantAgents)
			}
			if got := errorStrings(set.Errors); !reflect.DeepEqual(got, tc.wantErrors) {
				t.Errorf("errors =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.wantErrors, "\n  "))
			}
			if (set.Err() == nil) != (len(tc.wantErrors) == 0) {
				t.Errorf("Err() = %v", set.Err())
			}
		})
	}
}

func TestLoadCycleInExtraAgents(t *testing.T) {
	t.Parallel()
	loader, _ := testdataLoader(t)
	set := loader.Load([]string{"cycle/ping.json"}, nil)
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}
	ping, pong := set.Get("ping"), set.Get("pong")
	if ping == nil || pong == nil {
		t.Fatalf("agents = %v", slugs(set.List()))
	}
	if !reflect.DeepEqual(ping.Helpers, []string{"pong"}) || !reflect.DeepEqual(pong.Helpers, []string{"ping"}) {
		t.Errorf("Helpers: ping %v, pong %v", ping.Helpers, pong.Helpers)
	}
	if ping.Parent != "" || pong.Parent != "ping" {
		t.Errorf("Parent: ping %q, pong %q", ping.Parent, pong.Parent)
	}

	// Both as roots: each file is still read once, and roots have no parent.
	both := loader.Load(nil, []string{"cycle"})
	if len(both.Errors) != 0 || both.Len() != 2 || both.Get("pong").Parent != "" {
		t.Errorf("loading the directory: errors %v, len %d", errorStrings(both.Errors), both.Len())
	}
}

func TestLoadSelfReference(t *testing.T) {
	t.Parallel()
	loader, _ := testdataLoader(t)
	set := loader.Load([]string{"self/recursive.json"}, nil)
	if len(set.Errors) != 0 {
		t.Fatalf("errors: %v", errorStrings(set.Errors))
	}
	a := set.Get("recursive")
	if !reflect.DeepEqual(a.Helpers, []string{"recursive"}) || a.Parent != "" {
		t.Errorf("Helpers = %v, Parent = %q", a.Helpers, a.Parent)
	}
}

func TestLoadSameFileTwiceIsOneRoot(t *testing.T) {
	t.Parallel()
	loader, dir := testdataLoader(t)
	set := loader.Load([]string{"mixed/alpha.json", filepath.Join(dir, "mixed", "alpha.json")}, []string{"mixed"})
	if got := slugs(set.Roots()); !reflect.DeepEqual(got, []string{"alpha", "beta"}) {
		t.Errorf("roots = %v", got)
	}
	if len(set.Errors) != 1 {
		t.Errorf("errors = %v, want only broken.json's", errorStrings(set.Errors))
	}
}

func TestSetSelect(t *testing.T) {
	t.Parallel()
	loader, _ := testdataLoader(t)
	set := loader.Load([]string{"tree/desk.json", "missing-ref/root.json"}, nil)

	if a, err := set.Select("librarian"); err != nil || a.Slug != "librarian" {
		t.Errorf("Select(librarian) = %v, %v", a, err)
	}
	_, err := set.Select("nobody")
	if !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("Select(nobody) error %v does not wrap ErrUnknownAgent", err)
	}
	if want := `unknown agent "nobody" (known: code-counter, librarian, tour-desk)`; err == nil || err.Error() != want {
		t.Errorf("Select(nobody) error = %v, want %s", err, want)
	}
	_, err = set.Select("lonely")
	if err == nil || errors.Is(err, ErrUnknownAgent) || !strings.Contains(err.Error(), `agent "lonely" did not load: missing-ref/root.json: contents.extraAgents[0].path`) {
		t.Errorf("Select(lonely) error = %v", err)
	}
	if _, err := (&Set{}).Select("x"); err == nil || !strings.Contains(err.Error(), "no agents loaded") {
		t.Errorf("Select on an empty set: %v", err)
	}
}

func TestSetOnly(t *testing.T) {
	t.Parallel()
	loader, _ := testdataLoader(t)
	set := loader.Load([]string{"tree/desk.json", "mixed/alpha.json"}, nil)

	only, err := set.Only("code-counter")
	if err != nil {
		t.Fatal(err)
	}
	if got := slugs(only.List()); !reflect.DeepEqual(got, []string{"code-counter"}) {
		t.Errorf("Only(code-counter) agents = %v", got)
	}
	if only.Get("code-counter").Parent != "" {
		t.Errorf("the selected agent should be a root in the subset")
	}
	if set.Get("code-counter").Parent != "tour-desk" {
		t.Errorf("Only changed the original set")
	}

	desk, err := set.Only("tour-desk")
	if err != nil {
		t.Fatal(err)
	}
	if got := slugs(desk.List()); !reflect.DeepEqual(got, []string{"code-counter", "librarian", "tour-desk"}) {
		t.Errorf("Only(tour-desk) agents = %v, want the desk and its helpers", got)
	}
	if _, err := set.Only("nobody"); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("Only(nobody) error = %v", err)
	}
}

func TestExtraAgentsNarrowTheirHelperTools(t *testing.T) {
	t.Parallel()
	set := Loader{WorkDir: "testdata"}.Load([]string{"narrow/root.json"}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	lead := set.Get("lead")
	want := []HelperTool{
		{Slug: "reviewer", Name: "reviewer"},
		{Slug: "reviewer", Name: "go_reviewer", With: []string{"Review Go code only."}, Bindings: map[string]string{"REPO": "agents-os/agents"}},
		{Slug: "reviewer", Name: "nightly", With: []string{"Be brief."}, Bindings: map[string]string{"prompt": "Review last night's changes."}},
	}
	if !reflect.DeepEqual(lead.HelperTools, want) {
		t.Errorf("HelperTools = %+v, want %+v", lead.HelperTools, want)
	}
	if !reflect.DeepEqual(lead.Helpers, []string{"reviewer"}) {
		t.Errorf("Helpers = %v, want the one helper", lead.Helpers)
	}
	if !reflect.DeepEqual(lead.OSTools, OSToolNames()) {
		t.Errorf("OSTools = %v, want all of them for true", lead.OSTools)
	}
	if got := set.Get("reviewer").OSTools; got != nil {
		t.Errorf("reviewer OSTools = %v, want none without osTools", got)
	}
}
