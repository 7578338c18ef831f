//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// One process per database file (issue 20, item 2). An embedded command
// started beside a live server on the same database used to open the file
// itself and take up the server's runs as its own.

// oneWriterRules: the slow agent answers its first question slowly, so
// its run is in flight when the second process starts, and any later one
// at once.
func oneWriterRules() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Name: "slow", Match: fakellm.Match{SystemContains: slowPrompt, UserContains: "first"}, Reply: fakellm.Reply{
			Text: strings.Repeat("slowly ", 20), ChunkSize: 14, ChunkDelay: "300ms",
		}},
		{Name: "quick", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: fakellm.Reply{Text: "read: {{last_user}}"}},
	}}
}

func crashAgentFiles(t *testing.T) []string {
	t.Helper()
	files := make([]string, len(crashAgents))
	for i, name := range crashAgents {
		files[i] = filepath.Join("testdata/agents", name+".json")
	}
	return files
}

// `agents mcp` without --attach, beside `agents serve` on its database,
// uses that server through its socket: the server's run in flight is not
// run a second time, and the server's session goes on working.
func TestAnEmbeddedCommandBesideAServerUsesThatServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "agents.db")
	model := fakellmtest.Start(t, oneWriterRules())
	srv := startServeAgents(t, buildAgents(t), dir, db, model.URL(), crashAgentFiles(t), "", "--socket", filepath.Join(dir, "agents.sock"))
	id := srv.create(t, "slow", "first question")

	var args []string
	for _, f := range crashAgentFiles(t) {
		abs, _ := filepath.Abs(f)
		args = append(args, "--agent-file", abs)
	}
	p := startMCP(t, dir, append([]string{"--db", db, "--offline-model", model.URL()}, args...)...)
	if tools := p.tools(t); len(tools) == 0 {
		t.Fatal("agents mcp offers no tools")
	}

	if s := srv.waitIdle(t, id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("the server's session: %v (%s)", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
	}
	slow := 0
	for _, r := range model.Requests() {
		if r.RuleName == "slow" {
			slow++
		}
	}
	if slow != 1 {
		t.Errorf("the first question reached the model %d times, want once", slow)
	}
	if _, err := srv.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
		SessionId: id, Message: &agentsv1.Message{Text: "second question"},
	})); err != nil {
		t.Fatalf("post to the server's session afterwards: %v", err)
	}
	if s := srv.waitIdle(t, id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("after the second question: %v (%s)", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
	}
}

// runAgents runs the binary to its end in dir and returns its exit code
// and stderr; a process still running after a while is a failure.
func runAgents(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildAgents(t), args...)
	cmd.Dir = dir
	cmd.Env = childEnv(dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("agents %s still ran after 30s:\n%s", strings.Join(args, " "), stderr.String())
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// A second `agents serve` on a database in use refuses to start, and
// names the server that has it.
func TestASecondServerOnADatabaseInUseRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "agents.db")
	model := fakellmtest.Start(t, oneWriterRules())
	srv := startServeAgents(t, buildAgents(t), dir, db, model.URL(), crashAgentFiles(t), "")
	code, stderr := runAgents(t, dir, "serve", "--port", "0", "--db", db, "--offline-model", model.URL(), "--agent-file", mustAbs(t, "testdata/agents/slow.json"))
	want := []string{"in use by agents serve", fmt.Sprintf("pid %d", srv.cmd.Process.Pid), srv.url}
	for _, w := range want {
		if code == 0 || !strings.Contains(stderr, w) {
			t.Errorf("second serve: exit %d, stderr %q; want a refusal that says %q", code, stderr, w)
		}
	}
}

// An embedded command that cannot reach the server holding its database
// (it asks for a token the command does not have) refuses, naming it,
// rather than open the database beside it.
func TestAnEmbeddedCommandThatCannotReachTheServerRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startServeWithTokens(t, dir)
	code, stderr := runAgents(t, dir, "sessions", "ls", "--db", filepath.Join(dir, "agents.db"))
	for _, w := range []string{"in use by agents serve", fmt.Sprintf("pid %d", srv.cmd.Process.Pid), srv.url} {
		if code == 0 || !strings.Contains(stderr, w) {
			t.Errorf("sessions ls: exit %d, stderr %q; want a refusal that says %q", code, stderr, w)
		}
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatal(err)
	}
	return abs
}

// Without a socket the embedded command reaches the server at its HTTP
// address (no token needed on a server without auth tokens).
func TestAnEmbeddedCommandReachesAServerWithoutASocketOverHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "agents.db")
	model := fakellmtest.Start(t, oneWriterRules())
	srv := startServeAgents(t, buildAgents(t), dir, db, model.URL(), crashAgentFiles(t), "")
	id := srv.create(t, "slow", "quick question")
	srv.waitIdle(t, id)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, buildAgents(t), "sessions", "ls", "--db", db)
	cmd.Dir = dir
	cmd.Env = childEnv(dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sessions ls: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), id) {
		t.Errorf("sessions ls does not list the server's session %s:\n%s", id, stdout.String())
	}
	if !strings.Contains(stderr.String(), "using that server") || !strings.Contains(stderr.String(), srv.url) {
		t.Errorf("stderr = %q, want a note naming the server it used", stderr.String())
	}
}
