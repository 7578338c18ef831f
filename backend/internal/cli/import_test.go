package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// The conversations of the agentsexe package's tests, in agents-exe's
// own encoding: one, and a fork of it.
const (
	convTestFile = "../convfile/testdata/conv.1f7c2d9a-3b4e-4c5d-8e6f-7a8b9c0d1e2f.json"
	forkTestFile = "../convfile/testdata/review.session.json"
	convTestID   = "6c1f0b8e-5a4e-4a43-9d8e-2f1d3c4b5a60"
	forkTestID   = "a3d5e7f9-1b2c-4d6e-8f01-23456789abcd"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(b), 0o644)
}

// Issue 23, item 5: agents sessions import on a local database takes a
// directory of agents-exe history: the conversations and the fork in it
// are imported with their ids and the fork link, the malformed file is
// reported with its path and reason (and the exit status says so), other
// files are left alone; importing again changes nothing; the imported
// session is shown, exported and continued offline.
func TestSessionsImportADirectory(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{
		Rules: []fakellm.Rule{
			// Three answers in the imported history come before this one.
			{Match: fakellm.Match{UserContains: "go on", AssistantMessages: new(3)}, Reply: fakellm.Reply{Text: "going on after the imported answers"}},
		},
		Default: &fakellm.Reply{Text: "the imported history did not arrive"},
	})
	agent := filepath.Join(dir, "agents", "good.json")
	writeFile(t, agent, agentJSON("good", ""), 0o644)
	db := filepath.Join(dir, "import.db")
	local := []string{"--agent-file", agent, "--db", db}

	history := filepath.Join(dir, "history")
	conv := filepath.Join(history, filepath.Base(convTestFile))
	fork := filepath.Join(history, "2026-04", filepath.Base(forkTestFile))
	broken := filepath.Join(history, "2026-04", "conv.0d9d1558-b5f1-483c-8366-01f74d9bb223.json")
	copyFile(t, convTestFile, conv)
	copyFile(t, forkTestFile, fork)
	writeFile(t, broken, `{"sessionId": "0d9d1558-b5f1-483c-8366-01f74d9bb223", "turns": [`, 0o644)
	writeFile(t, filepath.Join(history, "notes.txt"), "not a conversation", 0o644)
	writeFile(t, filepath.Join(history, "2026-04", "review.session.md"), "# not one either", 0o644)

	code, out, errOut := run(t, env, append([]string{"sessions", "import", history}, local...)...)
	if code != 1 {
		t.Errorf("import with a malformed file = %d, want 1:\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"imported   " + convTestID + "  " + conv + "  (6 turns)\n",
		"imported   " + forkTestID + "  " + fork + "  (7 turns, forked from " + convTestID + ")\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n") != 2 {
		t.Errorf("stdout has other lines than the two imports:\n%s", out)
	}
	for _, want := range []string{
		"failed     " + broken + ": not JSON: the file ends in the middle of a value\n",
		"2 imported, 0 unchanged, 1 failed\n",
		"agents: 1 file could not be imported\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	// Again: nothing changes, the good files say so.
	code, out, errOut = run(t, env, append([]string{"sessions", "import", "-a", "good", history}, local...)...)
	if code != 1 || !strings.Contains(out, "unchanged  "+convTestID+"  "+conv+"  (already imported)\n") ||
		!strings.Contains(out, "unchanged  "+forkTestID) || !strings.Contains(errOut, "0 imported, 2 unchanged, 1 failed\n") {
		t.Errorf("second import = %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, env, append([]string{"sessions", "ls"}, local...)...)
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Errorf("sessions ls = %d, want the two imported sessions under the header:\n%s%s", code, out, errOut)
	}
	// Without a malformed file the exit status is 0.
	code, out, errOut = run(t, env, append([]string{"sessions", "import", conv}, local...)...)
	if code != 0 || !strings.Contains(out, "unchanged  "+convTestID) {
		t.Errorf("import of the good file alone = %d:\n%s%s", code, out, errOut)
	}

	code, out, errOut = run(t, env, append([]string{"sessions", "show", forkTestID}, local...)...)
	if code != 0 || !strings.Contains(out, "forked   from "+convTestID+"\n") || !strings.Contains(out, "agent    good\n") ||
		!strings.Contains(out, "← bash_read-file: no result: the conversation was saved before this call returned") {
		t.Errorf("show of the fork = %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = run(t, env, append([]string{"sessions", "export", convTestID}, local...)...)
	if code != 0 || !strings.Contains(out, "List the files and tell me what the README says.") || !strings.Contains(out, "A single dot.") {
		t.Errorf("export = %d:\n%s%s", code, out, errOut)
	}

	// Continued: a message posted to the idle session runs its agent on
	// the imported history.
	code, out, errOut = run(t, env, append([]string{"sessions", "interrupt", convTestID, "go on", "--offline-model", model.URL()}, local...)...)
	if code != 0 || out != "going on after the imported answers\n" {
		t.Errorf("continue = %d, %q, %q", code, out, errOut)
	}
}

// The agent sessions are bound to is -a, loaded or not, or the server's
// only root agent; with several, -a is asked for before anything is
// imported.
func TestSessionsImportAgent(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agentsDir := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agentsDir, "one.json"), agentJSON("one", ""), 0o644)
	writeFile(t, filepath.Join(agentsDir, "two.json"), agentJSON("two", ""), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agentsDir)

	code, out, errOut := run(t, env, "sessions", "import", "--config", cfg, convTestFile)
	if code != 1 || out != "" || !strings.Contains(errOut, "-a SLUG is required: the server has 2 agents: one, two") {
		t.Errorf("import without -a among two agents = %d, %q, %q", code, out, errOut)
	}
	code, out, errOut = run(t, env, "sessions", "import", "--config", cfg, "-a", "elsewhere", convTestFile)
	if code != 0 || !strings.Contains(out, "imported   "+convTestID) {
		t.Fatalf("import -a elsewhere = %d:\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, env, "sessions", "show", "--config", cfg, convTestID)
	if code != 0 || !strings.Contains(out, "agent    elsewhere\n") {
		t.Errorf("show of a session whose agent is not loaded = %d:\n%s", code, out)
	}

	code, out, errOut = run(t, env, "sessions", "import", "--config", cfg, filepath.Join(dir, "nowhere"))
	if code != 1 || out != "" || !strings.Contains(errOut, "failed     "+filepath.Join(dir, "nowhere")+": no such file or directory\n") {
		t.Errorf("import of a missing path = %d, %q, %q", code, out, errOut)
	}
	code, _, errOut = run(t, env, "sessions", "import", "--config", cfg, agentsDir)
	if code != 1 || !strings.Contains(errOut, "no conversation files (conv.<uuid>.json, *.session.json) in "+agentsDir) {
		t.Errorf("import of a directory without conversations = %d, %q", code, errOut)
	}
}
