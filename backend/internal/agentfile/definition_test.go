package agentfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A stored definition names its helpers by slug: extraAgents needs no
// path, and a tool directory's agent files are not helpers.
func TestADefinitionNamesItsHelpersBySlug(t *testing.T) {
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "tools", "inner.json"), []byte(`{"tag": "OpenAIAgentDescription", "contents": {"slug": "inner", "flavor": "OpenAIv1", "modelUrl": "https://x.test/v1", "modelName": "m"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	def, _, err := Loader{WorkDir: work}.ParseDefinition([]byte(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "top", "flavor": "OpenAIv1", "modelUrl": "https://x.test/v1", "modelName": "m", "toolDirectory": "tools",
		"extraAgents": [{"slug": "mate"}, {"slug": "mate", "path": "anywhere.json", "as": "second", "bindings": {"prompt": "go"}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if def.Agent.ToolDirectory != filepath.Join(work, "tools") || def.Agent.File != "" {
		t.Errorf("tool directory %q, file %q: want the directory under the working directory and no file", def.Agent.ToolDirectory, def.Agent.File)
	}
	mate := &Agent{Slug: "mate"}
	lookup := func(slug string) *Agent {
		if slug == "mate" {
			return mate
		}
		return nil
	}
	if err := def.Resolve(lookup); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(def.Agent.Helpers, []string{"mate"}) || len(def.Agent.HelperTools) != 2 || def.Agent.HelperTools[1].Name != "second" {
		t.Fatalf("helpers %q, tools %+v: want mate twice, once as second, and nothing from the tool directory", def.Agent.Helpers, def.Agent.HelperTools)
	}
	if err := def.Resolve(func(string) *Agent { return nil }); err == nil || err.Field != "contents.extraAgents[0].slug" || !strings.Contains(err.Reason, `"mate"`) {
		t.Fatalf("Resolve with no helpers = %v", err)
	}
	if def.Agent.Helpers != nil {
		t.Errorf("helpers after a failed Resolve = %q, want none", def.Agent.Helpers)
	}
}
