package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/eventually"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// buildMCPFake builds the offline MCP server once per test binary run.
var buildMCPFake = sync.OnceValues(func() (string, error) {
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "mcpfake")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/agents-os/agents/tools/cmd/mcpfake").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

// needsSandbox skips a test where this kernel cannot confine.
func needsSandbox(t *testing.T) {
	t.Helper()
	if st := sandbox.New(sandbox.Options{Launcher: "agents"}).Status(); !st.Available {
		t.Skipf("the kernel cannot confine here: %s", st.Problem)
	}
}

// TestAnAgentsMCPServerRunsInItsSandbox runs, in the process, agents
// whose MCP server reads the server's database or writes outside its
// folder: confined, each call fails with an error that says what the
// sandbox allows; where the agent file allows the write, or turns the
// sandbox off, it works as before.
func TestAnAgentsMCPServerRunsInItsSandbox(t *testing.T) {
	needsSandbox(t)
	t.Parallel()
	fake, err := buildMCPFake()
	if err != nil {
		t.Fatal(err)
	}
	dir, env := testEnv(t)
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	model := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "You read.", AssistantMessages: new(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "mcp_fake_read", Arguments: []byte(`{"path": "{{last_user}}"}`)},
		}}},
		{Match: fakellm.Match{SystemContains: "You write.", AssistantMessages: new(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "mcp_fake_write", Arguments: []byte(`{"path": "{{last_user}}", "text": "written"}`)},
		}}},
	}, Default: &fakellm.Reply{Text: "result: {{last_tool_result}}"}})
	agent := func(slug, prompt, settings string) string {
		file := filepath.Join(dir, "agents", slug+".json")
		writeFile(t, file, `{"tag": "OpenAIAgentDescription", "contents": {"slug": "`+slug+`", "flavor": "OpenAIv1",
			"modelUrl": "http://127.0.0.1:1/v1", "apiKeyId": "test-key", "modelName": "m", "systemPrompt": ["`+prompt+`"],
			"mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "fake", "executable": "`+fake+`"}}],
			"sandbox": `+settings+`}}`, 0o644)
		return file
	}
	ask := func(file, slug, message string) string {
		t.Helper()
		code, out, errOut := run(t, env, "run", "--agent-file", file, "-a", slug, "--offline-model", model.URL(), message)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", slug, code, out, errOut)
		}
		return out
	}
	db := filepath.Join(dir, "data", "agents", "agents.db")

	jailedReader := agent("jailed-reader", "You read.", `{}`)
	out := ask(jailedReader, "jailed-reader", db)
	if !strings.Contains(out, "permission denied") || !strings.Contains(out, "mcp_fake_read runs in a sandbox: it may write only in "+filepath.Join(dir, "data", "agents", "mcp", "jailed-reader", "fake")) {
		t.Errorf("a confined server reading the database: %.300q, want it refused, saying what the sandbox allows", out)
	}
	if strings.Contains(out, "SQLite format") {
		t.Errorf("a confined server read the database: %.300q", out)
	}
	out = ask(agent("free-reader", "You read.", `{"enabled": false}`), "free-reader", db)
	if !strings.Contains(out, "SQLite format") {
		t.Errorf("a server whose agent turns the sandbox off: %.300q, want it to read the database as before", out)
	}

	target := filepath.Join(outside, "x")
	out = ask(agent("jailed-writer", "You write.", `{}`), "jailed-writer", target)
	if !strings.Contains(out, "permission denied") || !strings.Contains(out, "runs in a sandbox") {
		t.Errorf("a confined server writing outside its folder: %q, want it refused", out)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a confined server wrote outside its folder")
	}
	out = ask(agent("trusted-writer", "You write.", `{"writable": ["`+outside+`"]}`), "trusted-writer", target)
	if !strings.Contains(out, "wrote "+target) {
		t.Errorf("a server whose agent allows the write: %q", out)
	}
}

// TestTheStartSweepsTheWorkingFoldersOfDeletedSessions: a session's
// working folder stays while the session does; the folder of a session
// deleted while no server ran, and a scratch folder a stop left, go at
// the next start.
func TestTheStartSweepsTheWorkingFoldersOfDeletedSessions(t *testing.T) {
	needsSandbox(t)
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: new(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_ok", Arguments: []byte(`{}`)}}}},
	}, Default: &fakellm.Reply{Text: "done"}})
	writeFile(t, filepath.Join(dir, "agents", "tools", "ok"), goodTool, 0o755)
	agent := filepath.Join(dir, "agents", "runner.json")
	writeFile(t, agent, agentJSON("runner", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)
	if code, out, errOut := run(t, env, "run", "--agent-file", agent, "-a", "runner", "--offline-model", model.URL(), "go"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	work := filepath.Join(dir, "data", "agents", "work")
	entries, err := os.ReadDir(work)
	if err != nil || len(entries) != 1 {
		t.Fatalf("working folders after one run: %v, %v", entries, err)
	}
	live := filepath.Join(work, entries[0].Name())
	orphan := filepath.Join(work, "9c1e7a52-0000-4000-8000-000000000000")
	scratch := filepath.Join(work, ".scratch-123")
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{live, orphan, scratch} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}

	a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env, flags: config.Flags{AgentFiles: []string{agent}}}
	res, err := a.resolve()
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.startStack(context.Background(), res, slog.New(slog.DiscardHandler), stackOptions{offlineModel: model.URL(), recover: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	eventually.That(t, "the folders of a deleted session and of a scratch are swept", func() bool {
		_, errOrphan := os.Stat(orphan)
		_, errScratch := os.Stat(scratch)
		return os.IsNotExist(errOrphan) && os.IsNotExist(errScratch)
	})
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live session's working folder: %v", err)
	}
}
