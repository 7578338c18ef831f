package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/tool"
)

// TestDescribeRunsConfinedToAScratchFolder loads agents whose tool's
// describe writes a note in its TMPDIR, and then one where its agent
// says: in the tool's own folder, in a folder the agent may write in,
// in the data folder. Confined, only the note is written, the describe
// fails for the rest, and the scratch folder is gone after; with the
// sandbox off the describe writes where it likes, as before.
func TestDescribeRunsConfinedToAScratchFolder(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, shared := filepath.Join(root, "data"), filepath.Join(root, "shared")
	sb := sandbox.New(sandbox.Options{Launcher: exe, WorkDir: filepath.Join(data, "work"), ServersDir: filepath.Join(data, "mcp"), Protect: []string{data}})
	if st := sb.Status(); !st.Available {
		t.Skipf("the kernel cannot confine here: %s", st.Problem)
	}
	for _, dir := range []string{data, shared} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	agent := func(slug, target, settings string) string {
		tools := filepath.Join(root, slug)
		writeFile(t, filepath.Join(tools, "t.sh"), `#!/bin/sh
case "$1" in
describe)
  echo note > "$TMPDIR/note" || exit 1
  if [ -n "`+target+`" ]; then echo written > "`+target+`" || exit 1; fi
  echo '{"slug": "t", "description": "writes at describe", "args": []}'
  ;;
esac
`, 0o755)
		file := filepath.Join(root, slug+".json")
		writeFile(t, file, `{"tag": "OpenAIAgentDescription", "contents": {
			"slug": "`+slug+`", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
			"toolDirectory": "`+tools+`", "sandbox": `+settings+`}}`, 0o644)
		files = append(files, file)
		return tools
	}
	agent("quiet", "", `{}`)
	own := agent("own", filepath.Join(root, "own", "written"), `{}`)
	agent("allowed", filepath.Join(shared, "written"), `{"writable": ["`+shared+`"]}`)
	agent("intruder", filepath.Join(data, "written"), `{}`)
	agent("free", filepath.Join(root, "free", "written"), `{"enabled": false}`)

	set := agentfile.Loader{WorkDir: root}.Load(files, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{Bash: tool.BashRuntime{Sandbox: sb}})
	failed := map[string]string{}
	for _, e := range cat.Snapshot().Errors {
		failed[strings.TrimSuffix(filepath.Base(e.File), ".json")] = e.Error()
	}
	for _, slug := range []string{"quiet", "free"} {
		if why, ok := failed[slug]; ok {
			t.Errorf("%s's tool did not load: %s", slug, why)
		}
	}
	for _, slug := range []string{"own", "allowed", "intruder"} {
		if why := failed[slug]; !strings.Contains(why, "describe") || !strings.Contains(why, "Permission denied") {
			t.Errorf("%s's describe wrote outside its scratch folder: load error %q", slug, why)
		}
	}
	for _, f := range []string{filepath.Join(own, "written"), filepath.Join(shared, "written"), filepath.Join(data, "written")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("a confined describe wrote %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "free", "written")); err != nil {
		t.Errorf("the describe of an agent without sandbox did not write: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(data, "work", ".scratch-*"))
	if len(left) > 0 {
		t.Errorf("scratch folders left: %v", left)
	}
}
