package catalog

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
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
	found, ok := agent.Tool("bash_show")
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
