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
	// The boss answers, with a tool call between; then its tree's budget
	// is set to what it spent, and the next message stops before its
	// model call.
	out, _ := cli("run", "-a", "boss", "--offline-model", f.model, "what is the weather?")
	out2, err := cli("sessions", "ls", "--roots", "--json")
	m := regexp.MustCompile(`"id": "([0-9a-f-]{36})"`).FindStringSubmatch(out2)
	if err != nil || m == nil {
		t.Fatalf("sessions ls: %v\n%s\n(run said: %s)", err, out2, out)
	}
	out3, _ := cli("sessions", "budget", m[1])
	spent := regexp.MustCompile(`(\d[\d,]*) tokens`).FindStringSubmatch(out3)
	if spent == nil {
		t.Fatalf("sessions budget: %s", out3)
	}
	tokens := strings.ReplaceAll(spent[1], ",", "")
	if out, err := cli("sessions", "budget", m[1], "--tokens", tokens); err != nil {
		t.Fatalf("sessions budget --tokens %s: %v\n%s", tokens, err, out)
	}
	out4, _ := cli("sessions", "mail", m[1], "--offline-model", f.model, "and tomorrow?")
	if !strings.Contains(out4, "budget") {
		t.Logf("sessions mail said: %s", out4)
	}
	term := startTmux(t, f.dir, tuiEnv(f.dir), f.bin, "tui", "--db", db, "--agent-file", boss, "--offline-model", f.model,
		"--log-file", filepath.Join(f.dir, "tui.log"), "--session", m[1])
	term.waitFor("bash_weather")
	screen := term.waitMatch(regexp.MustCompile(`budget `+tokens+` of `+tokens+` tokens \(0 left\) · exceeded`), "the budget spent")
	if !strings.Contains(screen, "■ stopped: session budget spent") {
		t.Errorf("the header does not say the budget stopped the run:\n%s", screen)
	}
}
