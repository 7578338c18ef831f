//go:build unix

package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A session whose run its budget stopped opens in the TUI with its
// tree's spend against the budget, the budget marked spent.
func TestTUIShowsTheBudgetThatStoppedARun(t *testing.T) {
	t.Parallel()
	f := newTUIFixture(t)
	db := filepath.Join(f.dir, "agents.db")
	boss, _ := filepath.Abs(filepath.Join("testdata/tui", "boss.json"))
	cli := func(args ...string) (string, error) {
		cmd := exec.Command(f.bin, append(args, "--db", db, "--agent-file", boss)...)
		cmd.Dir, cmd.Env = f.dir, tuiEnv(f.dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, _ := cli("owners", "usage"); strings.Contains(out, "does not support budgets") {
		t.Skip("this server does not keep budgets")
	}
	// The boss's first call, a tool call, spends more than a token: the
	// run stops before the second.
	out, _ := cli("run", "-a", "boss", "--offline-model", f.model, "--budget-tokens", "1", "what is the weather?")
	out2, err := cli("sessions", "ls", "--json")
	m := regexp.MustCompile(`"id": "([0-9a-f-]{36})"`).FindStringSubmatch(out2)
	if err != nil || m == nil {
		t.Fatalf("sessions ls: %v\n%s\n(run said: %s)", err, out2, out)
	}
	term := startTmux(t, f.dir, tuiEnv(f.dir), f.bin, "tui", "--db", db, "--agent-file", boss, "--offline-model", f.model,
		"--log-file", filepath.Join(f.dir, "tui.log"), "--session", m[1])
	term.waitFor("bash_weather")
	screen := term.waitMatch(regexp.MustCompile(`budget \d+ of 1 tokens \(0 left\) · exceeded`), "the budget spent")
	if !strings.Contains(screen, "■ stopped: session budget spent") {
		t.Errorf("the header does not say the budget stopped the run:\n%s", screen)
	}
}
