//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tmuxTerm is a terminal in a tmux server of its own, running one program:
// the tests type into it with send-keys and read it with capture-pane, as
// a person at a terminal would.
type tmuxTerm struct {
	t      *testing.T
	socket string
	name   string
	// status is the file the pane's shell writes the program's exit
	// status to once it waited for it.
	status string
}

// Size of the tests' terminals: the smallest the TUI promises to work in.
const tmuxCols, tmuxRows = 100, 30

// startTmux runs argv in dir with env in a new detached tmux session. The
// pane stays after the program exits, so its last screen and its exit
// status can be read.
func startTmux(t *testing.T, dir string, env []string, argv ...string) *tmuxTerm {
	t.Helper()
	return startTmuxSized(t, tmuxCols, tmuxRows, dir, env, argv...)
}

// startTmuxSized is startTmux in a terminal of cols×rows cells.
func startTmuxSized(t *testing.T, cols, rows int, dir string, env []string, argv ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	m := &tmuxTerm{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock"), name: "tui", status: filepath.Join(t.TempDir(), "status")}
	// The command goes through a script so that its environment is exactly
	// env, whatever the tmux server's own. The script's shell waits for the
	// program and writes its exit status (128+n for signal n) to a file:
	// tmux reaps its pane's process when it gets to it, and a test reading
	// the pane's status may find the pane dead with no status yet.
	script := filepath.Join(t.TempDir(), "run.sh")
	var b strings.Builder
	b.WriteString("#!/bin/sh\ncd " + shellQuote(dir) + "\nenv -i")
	for _, kv := range env {
		b.WriteString(" " + shellQuote(kv))
	}
	b.WriteString(" TERM=xterm-256color COLORTERM=truecolor")
	for _, a := range argv {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString("\necho $? > " + shellQuote(m.status) + ".new && mv " + shellQuote(m.status) + ".new " + shellQuote(m.status) + "\n")
	if err := os.WriteFile(script, []byte(b.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	// remain-on-exit must hold before the program starts: one that fails
	// at once would take its pane, and its message, with it.
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g status off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.tmux("-f", conf, "new-session", "-d", "-s", m.name,
		"-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), script)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("last screen:\n%s", m.capture())
		}
		_ = exec.Command("tmux", "-S", m.socket, "kill-server").Run()
	})
	return m
}

func (m *tmuxTerm) tmux(args ...string) string {
	m.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", m.socket}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, C-n, Tab, Escape, PageUp, …). A
// terminal reads Escape followed at once by a key as that key with Alt,
// so each Escape is followed by a pause, as a person's would be.
func (m *tmuxTerm) keys(names ...string) {
	m.t.Helper()
	for _, name := range names {
		m.tmux("send-keys", "-t", m.name, name)
		if name == "Escape" {
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// typeText types s literally.
func (m *tmuxTerm) typeText(s string) {
	m.t.Helper()
	m.tmux("send-keys", "-t", m.name, "-l", s)
}

// capture is the screen as text, without colours.
func (m *tmuxTerm) capture() string { return m.captureArgs() }

// captureAll is the screen and the lines scrolled off it, wrapped lines
// joined: what a program that is not full-screen printed.
func (m *tmuxTerm) captureAll() string { return m.captureArgs("-J", "-S", "-") }

func (m *tmuxTerm) captureArgs(extra ...string) string {
	args := append([]string{"-S", m.socket, "capture-pane", "-p", "-t", m.name}, extra...)
	out, err := exec.Command("tmux", args...).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(capture-pane: %v: %s)", err, out)
	}
	return string(out)
}

// waitFor waits until the screen shows text, and returns the screen.
func (m *tmuxTerm) waitFor(text string) string {
	m.t.Helper()
	return m.waitMatch(regexp.MustCompile(regexp.QuoteMeta(text)), text)
}

// waitMatch waits until the screen matches re.
func (m *tmuxTerm) waitMatch(re *regexp.Regexp, what string) string {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen := m.capture()
		if re.MatchString(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the screen did not show %q within 30s:\n%s", what, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitGone waits until the screen no longer shows text.
func (m *tmuxTerm) waitGone(text string) {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(m.capture(), text) {
		if time.Now().After(deadline) {
			m.t.Fatalf("the screen still shows %q after 30s:\n%s", text, m.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exitStatus waits for the program to end and returns its exit status.
func (m *tmuxTerm) exitStatus() int {
	m.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(m.status); err == nil {
			var code int
			if _, err := fmt.Sscan(string(b), &code); err != nil {
				m.t.Fatalf("exit status file %q: %v", b, err)
			}
			return code
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the program did not exit within 30s:\n%s", m.capture())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
