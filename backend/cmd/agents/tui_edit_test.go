//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// notesAgent is the stored agent the edit test creates, laid out on
// lines as a person writes one.
const notesAgent = `{
  "tag": "OpenAIAgentDescription",
  "contents": {
    "slug": "notes",
    "flavor": "OpenAIv1",
    "modelUrl": "https://models.invalid/v1",
    "apiKeyId": "tui-test-key",
    "modelName": "test-model",
    "announce": "Takes notes.",
    "systemPrompt": ["You are the notes agent of the tui test."]
  }
}
`

// notesEditor is an editor for the test: run the first time, it changes
// the announce and breaks the JSON (a comma missing); the second time,
// when the TUI reopens the file with the error on top, it mends it. It
// keeps each file it was given as seen.N.
const notesEditor = `#!/bin/sh
set -e
cd "$(dirname "$0")"
n=$(ls seen.* 2>/dev/null | wc -l)
cp "$1" "seen.$n"
case $n in
0) sed -i 's/"announce": "Takes notes.",/"announce": "Takes careful notes."/' "$1" ;;
1) sed -i 's/"Takes careful notes."/"Takes careful notes.",/' "$1" ;;
*) exit 1 ;;
esac
`

// The Agents tab edits a stored agent in $EDITOR: the TUI gives the
// terminal to the editor, reopens it with the error on top while the
// JSON is broken, stores the mended definition as version 2 and shows
// it.
func TestTUIEditsAStoredAgentInTheEditor(t *testing.T) {
	t.Parallel()
	f := newTUIFixture(t)
	db := filepath.Join(f.dir, "agents.db")
	def := filepath.Join(f.dir, "notes.json")
	if err := os.WriteFile(def, []byte(notesAgent), 0o600); err != nil {
		t.Fatal(err)
	}
	// The CLI runs in the TUI's environment, so it reads no config of the
	// machine's user.
	cli := func(args ...string) ([]byte, error) {
		cmd := exec.Command(f.bin, append(args, "--db", db)...)
		cmd.Dir, cmd.Env = f.dir, tuiEnv(f.dir)
		return cmd.CombinedOutput()
	}
	out, err := cli("agents", "create", "-f", def)
	if strings.Contains(string(out), "does not store agents") {
		t.Skip("this server does not store agents")
	}
	if err != nil {
		t.Fatalf("agents create: %v\n%s", err, out)
	}
	edits := t.TempDir()
	script := filepath.Join(edits, "editor")
	if err := os.WriteFile(script, []byte(notesEditor), 0o755); err != nil {
		t.Fatal(err)
	}

	args := []string{f.bin, "tui", "--db", db, "--offline-model", f.model, "--log-file", filepath.Join(f.dir, "tui.log")}
	for _, file := range tuiAgentFiles() {
		abs, _ := filepath.Abs(file)
		args = append(args, "--agent-file", abs)
	}
	term := startTmux(t, f.dir, append(tuiEnv(f.dir), "EDITOR="+script), args...)
	term.waitFor("connected")
	term.keys("Tab")
	term.keys("/")
	term.typeText("notes")
	term.keys("Enter")
	term.waitFor("stored · version 1")
	term.keys("e")
	term.waitFor("saved notes, version 2")
	term.waitFor("stored · version 2")
	term.waitFor("Takes careful notes.")

	second, err := os.ReadFile(filepath.Join(edits, "seen.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(second), "# error: not JSON: ") {
		t.Errorf("the editor reopened without the error on top:\n%s", second)
	}
	term.keys("C-c")
	if code := term.exitStatus(); code != 0 {
		t.Fatalf("the TUI exited with %d", code)
	}
	out, err = cli("agents", "versions", "notes")
	if err != nil || !strings.Contains(string(out), "2        yes") {
		t.Errorf("agents versions after the edit: %v\n%s", err, out)
	}
}
