//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/config"
)

// readmeMarker precedes each block of the README whose commands the test
// runs, in the order they appear.
const readmeMarker = "<!-- readme test: run -->"

// readmeCommandTimeout bounds one command of the README: each talks to
// the offline model, on this machine.
const readmeCommandTimeout = 90 * time.Second

// The README's quick start, run as a newcomer would: `make run` (the
// script it runs, with binaries built for the test), then the commands
// of the README's marked blocks in order, in one shell whose variables
// and folder carry from one command to the next, on a fresh HOME with no
// API key. Each must exit 0, or 4 where the README says "(exit status
// 4)": a run that waits for a client. `3f2a` stands for the newest
// session's id, TOKEN for a pending call's token, as the README says.
// The demo must tell the time the clock tool returned.
func TestREADMEQuickStartRunsInOrderOnAFreshHome(t *testing.T) {
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeCommands(t, filepath.Join(repo, "README.md"))
	if len(commands) < 5 {
		t.Fatalf("the README's marked blocks hold %d commands: the marker %q is missing", len(commands), readmeMarker)
	}

	bin := filepath.Dir(buildAgents(t))
	buildFakellm(t, bin)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env := freshEnv(home)
	port, offlinePort := freePort(t), freePort(t)
	base := "http://127.0.0.1:" + port
	startDemo(t, repo, env, bin, port, offlinePort, filepath.Join(dir, "demo"))
	sessions := agentsv1connect.NewSessionServiceClient(http.DefaultClient, base)

	sh := &readmeShell{dir: repo, env: env, state: filepath.Join(dir, "state")}
	if err := os.MkdirAll(sh.state, 0o755); err != nil {
		t.Fatal(err)
	}
	binRef := regexp.MustCompile(`(^|[\s|;&(])bin/agents\b`)
	var clockOut string
	for _, c := range commands {
		text := strings.ReplaceAll(c.text, "127.0.0.1:7420", "127.0.0.1:"+port)
		text = strings.ReplaceAll(text, "$PWD/bin", bin)
		text = binRef.ReplaceAllString(text, "${1}"+filepath.Join(bin, "agents"))
		if strings.Contains(text, "3f2a") {
			text = strings.ReplaceAll(text, "3f2a", newestSession(t, sessions)[:8])
		}
		if strings.Contains(text, "TOKEN") {
			text = strings.ReplaceAll(text, "TOKEN", pendingToken(t, sessions))
		}
		want := 0
		if strings.Contains(c.text, "(exit status 4)") {
			want = 4
		}
		code, stdout, stderr := sh.run(t, text)
		if code != want {
			t.Fatalf("README line %d exited %d, want %d:\n%s\nstdout:\n%s\nstderr:\n%s", c.line, code, want, c.text, stdout, stderr)
		}
		t.Logf("README line %d: %s\n%s", c.line, c.text, stdout)
		switch {
		case strings.Contains(c.text, `"What time is it?"`):
			clockOut = stdout
		case strings.Contains(c.text, `"thanks"`) && !strings.Contains(stdout, `You said: "`):
			// A later message gets a reply, not a missing script's.
			t.Errorf("README line %d: the conversation did not go on:\n%s", c.line, stdout)
		case strings.Contains(c.text, "calls approve") && !strings.Contains(stdout, "Done: deployed the site to staging"):
			t.Errorf("README line %d: the approved deploy did not run:\n%s", c.line, stdout)
		}
	}

	// The clock's answer is the time its tool returned, as the session
	// holds it and as the command printed it.
	if clockOut == "" {
		t.Fatal(`the README asks no "What time is it?"`)
	}
	result, answer := clockSession(t, sessions)
	if !regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+$`).MatchString(result) {
		t.Errorf("bash_clock returned %q, not a time", result)
	}
	want := "It is " + result + " (from bash_clock)."
	if answer != want || !strings.Contains(clockOut, want) {
		t.Errorf("the clock question was answered %q (printed %q), want %q", answer, clockOut, want)
	}
	checkMCPConversation(t, dir, env, base)
}

// The demo keeps a conversation going over MCP too: the clock question,
// then a later message in the same session, through agents mcp attached
// to make run's server.
func checkMCPConversation(t *testing.T, dir string, env []string, base string) {
	t.Helper()
	p := startMCPWithEnv(t, dir, env, "--attach", base)
	ask := func(arguments map[string]any) string {
		t.Helper()
		res, err := p.session.CallTool(ctxFor(t), &mcp.CallToolParams{Name: "ask_assistant", Arguments: arguments})
		if err != nil {
			t.Fatalf("call ask_assistant: %v", err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var out struct {
			Answer    string `json:"answer"`
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal(b, &out); err != nil || res.IsError {
			t.Fatalf("ask_assistant = %s (error %v, %v)", b, res.IsError, err)
		}
		arguments["session_id"] = out.SessionID
		return out.Answer
	}
	args := map[string]any{"prompt": "What time is it?"}
	if answer := ask(args); !regexp.MustCompile(`It is \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ \(from bash_clock\)\.$`).MatchString(answer) {
		t.Errorf("over MCP, the clock question was answered %q", answer)
	}
	args["prompt"] = "thanks"
	if answer := ask(args); !strings.Contains(answer, `You said: "thanks"`) {
		t.Errorf("over MCP, a later message was answered %q", answer)
	}
}

// readmeCommand is one command of the README: its text (continuation
// lines included) and the line it starts on.
type readmeCommand struct {
	line int
	text string
}

// readmeCommands reads the commands of the README's marked blocks.
func readmeCommands(t *testing.T, path string) []readmeCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var commands []readmeCommand
	var cur *readmeCommand
	marked, inBlock := false, false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !inBlock && line == readmeMarker:
			marked = true
		case !inBlock && marked && strings.HasPrefix(line, "```"):
			if line != "```sh" {
				t.Fatalf("README line %d: the block after %s is %q, not sh", n, readmeMarker, line)
			}
			inBlock = true
		case inBlock && line == "```":
			inBlock, marked = false, false
		case inBlock && cur != nil:
			cur.text += "\n" + line
			if !strings.HasSuffix(line, `\`) {
				commands, cur = append(commands, *cur), nil
			}
		case inBlock && strings.TrimSpace(line) != "":
			c := readmeCommand{line: n, text: line}
			if strings.HasSuffix(line, `\`) {
				cur = &c
				continue
			}
			commands = append(commands, c)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return commands
}

// readmeShell runs commands one at a time as one shell would: the
// variables a command sets (exported, as set -a does) and the folder it
// moves to are the next one's.
type readmeShell struct {
	dir   string
	env   []string
	state string
}

func (sh *readmeShell) run(t *testing.T, command string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readmeCommandTimeout)
	defer cancel()
	script := "set -a\n" + command + "\nrc=$?\npwd > \"$README_STATE/cwd\"\nenv -0 > \"$README_STATE/env\"\nexit $rc\n"
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = sh.dir
	cmd.Env = append(sh.env, "README_STATE="+sh.state)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %s\nstdout:\n%s\nstderr:\n%s", command, readmeCommandTimeout, out.String(), errOut.String())
	}
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%s: %v", command, err)
	}
	cwd, err := os.ReadFile(filepath.Join(sh.state, "cwd"))
	if err != nil {
		t.Fatal(err)
	}
	vars, err := os.ReadFile(filepath.Join(sh.state, "env"))
	if err != nil {
		t.Fatal(err)
	}
	sh.dir = strings.TrimSuffix(string(cwd), "\n")
	sh.env = sh.env[:0:0]
	for _, kv := range strings.Split(string(vars), "\x00") {
		if kv != "" && !strings.HasPrefix(kv, "README_STATE=") {
			sh.env = append(sh.env, kv)
		}
	}
	return code, out.String(), errOut.String()
}

// freshEnv is the test's environment as a newcomer's: home the only
// home, no XDG folders of the machine, no model key.
func freshEnv(home string) []string {
	drop := map[string]bool{"HOME": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true, "XDG_CACHE_HOME": true, "XDG_RUNTIME_DIR": true}
	for _, name := range config.EnvNames("openai") {
		drop[name] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] && !strings.HasPrefix(name, "AGENTS_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home)
}

// buildFakellm builds the offline model's command beside the agents
// binary, as make build does.
func buildFakellm(t *testing.T, bin string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", filepath.Join(bin, "fakellm"), "github.com/agents-os/agents/tools/cmd/fakellm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build fakellm: %v\n%s", err, out)
	}
}

// freePort is a TCP port nothing listens on just now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// startDemo runs what `make run` runs after its build, and waits until
// the server answers; the test's end stops it and everything it started.
func startDemo(t *testing.T, repo string, env []string, bin, port, offlinePort, demoDir string) {
	t.Helper()
	cmd := exec.Command("tools/run-example.sh")
	cmd.Dir = repo
	cmd.Env = append(env, "BIN="+bin, "PORT="+port, "OFFLINE_PORT="+offlinePort, "DEMO_DIR="+demoDir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		// The script, the server and the offline model: its process group.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(demoDir, "server.log"))
			t.Logf("make run's output:\n%s\nits server's log:\n%s", out.String(), log)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if res, err := http.Get("http://127.0.0.1:" + port + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("make run's script ended: %v\n%s", cmd.ProcessState, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("make run's server was not ready within 60s:\n%s", out.String())
		}
	}
	// The script prints its summary once the server is ready: the summary
	// says where the server's log is, apart from it.
	for !strings.Contains(out.String(), "the web app: ") {
		if time.Now().After(deadline) {
			t.Fatalf("make run printed no summary:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if summary := out.String(); strings.Contains(summary, "msg=request") || !strings.Contains(summary, "export PATH=") {
		t.Errorf("make run's summary holds request log lines, or does not say how to put agents on the PATH:\n%s", summary)
	}
}

// newestSession is the id of the newest root session.
func newestSession(t *testing.T, c agentsv1connect.SessionServiceClient) string {
	t.Helper()
	res, err := c.ListSessions(context.Background(), connect.NewRequest(&agentsv1.ListSessionsRequest{RootsOnly: true, PageSize: 1}))
	if err != nil || len(res.Msg.GetSessions()) == 0 {
		t.Fatalf("list sessions: %v (%d sessions)", err, len(res.Msg.GetSessions()))
	}
	return res.Msg.GetSessions()[0].GetId()
}

// pendingToken is the token of a call waiting for an answer.
func pendingToken(t *testing.T, c agentsv1connect.SessionServiceClient) string {
	t.Helper()
	ctx := context.Background()
	res, err := c.ListSessions(ctx, connect.NewRequest(&agentsv1.ListSessionsRequest{PageSize: 100}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Msg.GetSessions() {
		if m.GetPendingCalls() == 0 {
			continue
		}
		s, err := c.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: m.GetId(), MetaOnly: true}))
		if err != nil {
			t.Fatal(err)
		}
		if calls := s.Msg.GetSession().GetPendingCalls(); len(calls) > 0 {
			return calls[0].GetToken()
		}
	}
	t.Fatal("no call waits for an answer")
	return ""
}

// clockSession finds the session that asked the time: what bash_clock
// returned, and the answer that followed it.
func clockSession(t *testing.T, c agentsv1connect.SessionServiceClient) (result, answer string) {
	t.Helper()
	ctx := context.Background()
	res, err := c.ListSessions(ctx, connect.NewRequest(&agentsv1.ListSessionsRequest{Agent: "assistant", PageSize: 100}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Msg.GetSessions() {
		if m.GetTitle() != "What time is it?" {
			continue
		}
		s, err := c.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: m.GetId()}))
		if err != nil {
			t.Fatal(err)
		}
		turns := s.Msg.GetSession().GetTurns()
		for i, turn := range turns {
			for _, r := range turn.GetUser().GetToolResults() {
				if r.GetName() == "bash_clock" && i+1 < len(turns) {
					return r.GetText(), turns[i+1].GetLlm().GetText()
				}
			}
		}
		t.Fatalf("session %s holds no bash_clock result followed by an answer:\n%s", m.GetId(), dumpTurns(s.Msg.GetSession()))
	}
	t.Fatalf("no session of the assistant asked %q", "What time is it?")
	return "", ""
}
