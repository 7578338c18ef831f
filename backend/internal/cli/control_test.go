package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// controlRules: "slow" takes two steps, the first streaming for a few
// seconds then calling a tool (time to pause, cancel or watch it),
// "think" answers with its reasoning, "refuse" fails the run, the rest
// echo.
func controlRules() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{UserContains: "slow", AssistantMessages: new(0)}, Reply: fakellm.Reply{
			Text: strings.Repeat("tick ", 40), ChunkSize: 5, ChunkDelay: "50ms",
			ToolCalls: []fakellm.ToolCall{{Name: "bash_ok", Arguments: json.RawMessage(`{}`)}},
		}},
		{Match: fakellm.Match{UserContains: "slow", AssistantMessages: new(1)}, Reply: fakellm.Reply{Text: "walked"}},
		{Match: fakellm.Match{UserContains: "think"}, Reply: fakellm.Reply{Reasoning: "first I weigh it\nthen I decide", Text: "decided"}},
		{Match: fakellm.Match{UserContains: "refuse"}, Reply: fakellm.Reply{Error: &fakellm.HTTPError{Status: 400, Message: "refused"}}},
	}, Default: &fakellm.Reply{Text: "heard: {{last_user}}"}}
}

var uuidLine = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f-]{27}\n$`)

// A local database named by --db works for run as for every command
// that opens the store: what run made there, sessions lists.
func TestRunTakesDB(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, controlRules())
	agent := filepath.Join(dir, "agents", "echo.json")
	writeFile(t, agent, agentJSON("echo", ""), 0o644)
	db := filepath.Join(dir, "elsewhere", "mine.db")

	code, stdout, stderr := run(t, env, "run", "--db", db, "--agent-file", agent, "--offline-model", model.URL(), "hi")
	if code != 0 || stdout != "heard: hi\n" {
		t.Fatalf("run --db = %d, %q, %q", code, stdout, stderr)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("run did not use --db: %v", err)
	}
	code, out, _ := run(t, env, "sessions", "ls", "--db", db, "--agent-file", agent)
	if code != 0 || !strings.Contains(out, "echo") {
		t.Errorf("sessions ls --db = %d:\n%s", code, out)
	}
	if code, out, _ := run(t, env, "sessions", "ls", "--agent-file", agent); code != 0 || strings.Contains(out, "echo") {
		t.Errorf("the default database holds the session too:\n%s", out)
	}
}

// An agent with no apiKeyId needs no key, and says so.
func TestAgentsShowOfAnAgentWithoutAKey(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	agent := filepath.Join(dir, "agents", "local.json")
	writeFile(t, agent, `{"tag": "OpenAIAgentDescription", "contents": {"slug": "local", "flavor": "OpenAIv1",
		"modelUrl": "http://127.0.0.1:11434/v1", "modelName": "llama", "announce": "a local model", "systemPrompt": ["You help."]}}`, 0o644)
	code, out, errOut := run(t, env, "agents", "show", "local", "--agent-file", agent, "--db", filepath.Join(dir, "a.db"))
	if code != 0 || !strings.Contains(out, "(OpenAIv1; no key needed)") || strings.Contains(out, "missing") {
		t.Errorf("agents show = %d:\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, env, "check", "--agent-file", agent)
	if code != 0 || strings.Contains(out, "apiKeyId") || !strings.Contains(out, "0 warnings") {
		t.Errorf("check of an agent that needs no key = %d:\n%s", code, out)
	}
}

// sessions show folds the model's thinking to a line (--thinking unfolds
// it); --json writes empty fields too, "" and [] as the protocol does.
func TestSessionsShowFoldsThinkingAndJSONKeepsEmptyFields(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, controlRules())
	agent := filepath.Join(dir, "agents", "echo.json")
	writeFile(t, agent, agentJSON("echo", ""), 0o644)
	db := []string{"--db", filepath.Join(dir, "s.db"), "--agent-file", agent}
	if code, _, stderr := run(t, env, append([]string{"run", "--offline-model", model.URL(), "think"}, db...)...); code != 0 {
		t.Fatal(stderr)
	}
	_, list, _ := run(t, env, append([]string{"sessions", "ls"}, db...)...)
	id := strings.Fields(strings.Split(list, "\n")[1])[0]

	_, out, _ := run(t, env, append([]string{"sessions", "show", id}, db...)...)
	if !strings.Contains(out, "▸ thinking (2 lines, --thinking shows it): first I weigh it …") || strings.Contains(out, "then I decide") {
		t.Errorf("sessions show does not fold the thinking:\n%s", out)
	}
	_, out, _ = run(t, env, append([]string{"sessions", "show", "--thinking", id}, db...)...)
	if !strings.Contains(out, "│ first I weigh it\n") || !strings.Contains(out, "│ then I decide\n") {
		t.Errorf("sessions show --thinking does not print it whole:\n%s", out)
	}

	_, out, _ = run(t, env, append([]string{"sessions", "show", "--json", id}, db...)...)
	var doc struct {
		Meta  map[string]any   `json:"meta"`
		Turns []map[string]any `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v, ok := doc.Meta["parentId"]; !ok || v != "" {
		t.Errorf("meta.parentId = %v (present %v), want \"\"", v, ok)
	}
	user, _ := doc.Turns[0]["user"].(map[string]any)
	if v, ok := user["attachments"]; !ok || len(v.([]any)) != 0 {
		t.Errorf("user.attachments = %v (present %v), want []", v, ok)
	}
}

// The session controls on the command line: fork, mail and interrupt on
// the local database; pause, cancel and watch on a server that runs.
func TestSessionControls(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, controlRules())
	agents := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agents, "tools", "ok"), goodTool, 0o755)
	writeFile(t, filepath.Join(agents, "echo.json"), agentJSON("echo", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)
	writeFile(t, filepath.Join(agents, "other.json"), agentJSON("other", ""), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agents)
	local := []string{"--config", cfg, "--offline-model", model.URL()}

	code, _, stderr := run(t, env, append([]string{"run", "-a", "echo", "first"}, local...)...)
	if code != 0 {
		t.Fatal(stderr)
	}
	_, list, _ := run(t, env, "sessions", "ls", "--config", cfg)
	id := strings.Fields(strings.Split(list, "\n")[1])[0]

	// fork: the new id on stdout, the turns kept up to --at-turn.
	code, out, stderr := run(t, env, "sessions", "fork", id[:8], "--at-turn", "0", "--with", "other", "--config", cfg)
	if code != 0 || !uuidLine.MatchString(out) {
		t.Fatalf("sessions fork = %d %q %q", code, out, stderr)
	}
	fork := strings.TrimSpace(out)
	_, shown, _ := run(t, env, "sessions", "show", fork, "--config", cfg)
	if !strings.Contains(shown, "agent    other") || !strings.Contains(shown, "[0] user") || strings.Contains(shown, "[1]") {
		t.Errorf("the fork at turn 0 with other:\n%s", shown)
	}
	if code, _, stderr := run(t, env, "sessions", "fork", id, "--at-turn", "7", "--config", cfg); code == 0 || !strings.Contains(stderr, "has turns 0 to 1") {
		t.Errorf("fork past the last turn = %d %q", code, stderr)
	}

	// mail: an idle session runs to read it, and the command follows.
	code, out, stderr = run(t, env, append([]string{"sessions", "mail", fork, "by the way"}, local...)...)
	if code != 0 || !strings.HasPrefix(out, "heard: ") || !strings.Contains(out, "by the way") || !regexp.MustCompile(`mail [0-9a-f-]{36} sent to session `+fork).MatchString(stderr) {
		t.Fatalf("sessions mail = %d %q %q", code, out, stderr)
	}

	// send: the next message of an idle session runs as it is (no mail
	// header), and the command follows that run.
	code, out, stderr = run(t, env, append([]string{"sessions", "send", id[:8], "and then?"}, local...)...)
	if code != 0 || out != "heard: and then?\n" {
		t.Errorf("sessions send = %d %q %q", code, out, stderr)
	}

	// interrupt on an idle session: the message runs, and is followed.
	code, out, stderr = run(t, env, append([]string{"sessions", "interrupt", id, "now"}, local...)...)
	if code != 0 || out != "heard: now\n" {
		t.Errorf("sessions interrupt = %d %q %q", code, out, stderr)
	}

	// On a server that keeps running: watch a slow run, pause it,
	// cancel it.
	srv := serveWith(t, env, cfg, stackOptions{offlineModel: model.URL()})
	attach := []string{"--attach", srv.url}
	c, err := client.Dial(srv.url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	created, err := c.Sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "echo", Title: "slow one"}))
	if err != nil {
		t.Fatal(err)
	}
	slow := created.Msg.GetSession().GetMeta().GetId()

	type result struct {
		code        int
		out, stderr string
	}
	watched := make(chan result, 1)
	go func() {
		code, out, stderr := run(t, env, append([]string{"sessions", "watch", "--once", slow}, attach...)...)
		watched <- result{code, out, stderr}
	}()
	time.Sleep(500 * time.Millisecond) // the watch subscribes first
	if _, err := c.Sessions.PostMessage(ctx, connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: slow, Message: &agentsv1.Message{Text: "slow"}})); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, slow, agentsv1.SessionStatus_SESSION_STATUS_RUNNING)
	if code, _, stderr := run(t, env, append([]string{"sessions", "pause", slow}, attach...)...); code != 0 || !strings.Contains(stderr, "agents sessions resume "+slow) {
		t.Errorf("sessions pause = %d %q", code, stderr)
	}
	waitStatus(t, c, slow, agentsv1.SessionStatus_SESSION_STATUS_PAUSED)
	w := <-watched
	if w.code != exitRunFailed || !strings.Contains(w.out, "tick tick") || !strings.Contains(w.stderr, "watching session "+slow) {
		t.Errorf("sessions watch --once = %d\nstdout %q\nstderr %q\nwant the streamed text, ended by the pause", w.code, w.out, w.stderr)
	}
	code, _, stderr = run(t, env, append([]string{"sessions", "cancel", slow}, attach...)...)
	if code != 0 || !strings.Contains(stderr, "run cancelled, now ready") {
		t.Errorf("sessions cancel = %d %q", code, stderr)
	}
	if code, _, stderr := run(t, env, append([]string{"sessions", "cancel", "--hard", slow}, attach...)...); code != 0 || !strings.Contains(stderr, "0 tool calls cancelled") {
		t.Errorf("sessions cancel --hard = %d %q", code, stderr)
	}
	// A ready session has nothing to pause or cancel, and is told so.
	if code, _, stderr := run(t, env, append([]string{"sessions", "pause", slow}, attach...)...); code != 0 || stderr != "session "+slow+" is ready: it has no run going to pause\n" {
		t.Errorf("sessions pause of a ready session = %d %q", code, stderr)
	}
	if code, _, stderr := run(t, env, append([]string{"sessions", "cancel", slow}, attach...)...); code != 0 || stderr != "session "+slow+" is ready: it had no run to cancel\n" {
		t.Errorf("sessions cancel of a ready session = %d %q", code, stderr)
	}

	// interrupt of a running session: the step is cut short, the run
	// goes on with the message, and the command follows it.
	again, err := c.Sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "echo", Message: &agentsv1.Message{Text: "slow"}}))
	if err != nil {
		t.Fatal(err)
	}
	busy := again.Msg.GetSession().GetMeta().GetId()
	waitStatus(t, c, busy, agentsv1.SessionStatus_SESSION_STATUS_RUNNING)
	code, out, stderr = run(t, env, append([]string{"sessions", "interrupt", busy, "stop now"}, attach...)...)
	if code != 0 || !strings.Contains(out, "heard: ") || !strings.Contains(out, "stop now") || strings.Contains(out, "walked") {
		t.Errorf("sessions interrupt of a running session = %d %q %q", code, out, stderr)
	}
}

func waitStatus(t *testing.T, c *client.Client, id string, want agentsv1.SessionStatus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
		if err == nil && res.Msg.GetSession().GetMeta().GetStatus() == want {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("session %s never became %v (%v)", id, want, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sessions resume on a session that is ready, with nothing to go on
// with, says so and exits at once (1, as for a session whose calls are
// not answered yet) rather than wait for a run that never comes.
func TestResumeOfAReadySessionSaysThereIsNothingToResume(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, controlRules())
	agent := filepath.Join(dir, "agents", "echo.json")
	writeFile(t, agent, agentJSON("echo", ""), 0o644)
	server := []string{"--agent-file", agent, "--offline-model", model.URL()}

	if code, out, errOut := run(t, env, append([]string{"run", "hi"}, server...)...); code != 0 {
		t.Fatalf("run = %d: %s%s", code, out, errOut)
	}
	code, out, _ := run(t, env, "sessions", "ls", "--json", "--agent-file", agent)
	var listed struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || len(listed.Sessions) != 1 {
		t.Fatalf("sessions ls = %d, %v:\n%s", code, err, out)
	}
	id := listed.Sessions[0].ID

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr strings.Builder
	code = execute(ctx, append([]string{"sessions", "resume", id[:8]}, server...), strings.NewReader(""), &stdout, &stderr, env, true)
	if ctx.Err() != nil {
		t.Fatalf("sessions resume of a ready session waited until it was cancelled: %s", stderr.String())
	}
	if code != 1 || stdout.String() != "" ||
		!strings.Contains(stderr.String(), "session "+id+" is ready: it has nothing to resume") ||
		!strings.Contains(stderr.String(), "agents sessions send "+id) {
		t.Errorf("sessions resume of a ready session = %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
}

// sessions ls --limit takes what a page may hold, and says so in the
// flag's words before it asks any server.
func TestSessionsListLimitIsAPageSize(t *testing.T) {
	t.Parallel()
	_, env := testEnv(t)
	for _, limit := range []string{"0", "501", "4294967346"} {
		code, _, stderr := run(t, env, "sessions", "ls", "--limit", limit)
		if want := "--limit " + limit + ": want 1 to 500"; code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("sessions ls --limit %s = %d %q, want 1 saying %q", limit, code, stderr, want)
		}
	}
}

// A watch that joins a run mid-answer prints the text the model wrote
// before it came, then the rest: the answer whole, nothing twice.
func TestWatchJoinedMidAnswerPrintsTheWholeAnswer(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, controlRules())
	agents := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agents, "tools", "ok"), goodTool, 0o755)
	writeFile(t, filepath.Join(agents, "echo.json"), agentJSON("echo", `, "bashToolboxes": [{"tag": "FileSystemDirectory", "contents": {"Path": "tools"}}]`), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agents)
	srv := serveWith(t, env, cfg, stackOptions{offlineModel: model.URL()})
	c, err := client.Dial(srv.url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	created, err := c.Sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "echo", Message: &agentsv1.Message{Text: "slow"}}))
	if err != nil {
		t.Fatal(err)
	}
	id := created.Msg.GetSession().GetMeta().GetId()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := c.Sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true}))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(res.Msg.GetSession().GetInProgress().GetText(), "tick") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the answer did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, out, stderr := run(t, env, "sessions", "watch", "--once", id, "--attach", srv.url)
	if code != 0 || out != strings.Repeat("tick ", 40)+"\nwalked\n" {
		t.Errorf("sessions watch --once joined mid-answer = %d\nstdout %q\nstderr %q\nwant every tick, then walked", code, out, stderr)
	}
}

// sessions rm finds every session it is given before it deletes any: a
// mistyped id among them deletes none.
func TestSessionsRmDeletesNoneWhenAnIDIsUnknown(t *testing.T) {
	t.Parallel()
	dir, env := testEnv(t)
	model := fakellmtest.Start(t, controlRules())
	agents := filepath.Join(dir, "agents")
	writeFile(t, filepath.Join(agents, "echo.json"), agentJSON("echo", ""), 0o644)
	cfg := writeConfig(t, dir, "agents.json", agents)
	srv := serveWith(t, env, cfg, stackOptions{offlineModel: model.URL()})
	c, err := client.Dial(srv.url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var ids []string
	for range 2 {
		res, err := c.Sessions.CreateSession(t.Context(), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "echo"}))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Msg.GetSession().GetMeta().GetId())
	}
	code, out, stderr := run(t, env, "sessions", "rm", ids[0], "nosuchid", ids[1], "--attach", srv.url)
	if code != 1 || out != "" || !strings.Contains(stderr, `no session id starts with "nosuchid"`) {
		t.Errorf("sessions rm with an unknown id = %d %q %q, want 1, nothing deleted", code, out, stderr)
	}
	for _, id := range ids {
		if _, err := c.Sessions.GetSession(t.Context(), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, MetaOnly: true})); err != nil {
			t.Errorf("session %s: %v, want it kept", id, err)
		}
	}

	// A failed session has no run to cancel either.
	failed, err := c.Sessions.CreateSession(t.Context(), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "echo", Message: &agentsv1.Message{Text: "refuse"}}))
	if err != nil {
		t.Fatal(err)
	}
	id := failed.Msg.GetSession().GetMeta().GetId()
	waitStatus(t, c, id, agentsv1.SessionStatus_SESSION_STATUS_FAILED)
	if code, _, stderr := run(t, env, "sessions", "cancel", id, "--attach", srv.url); code != 0 || stderr != "session "+id+" is failed: it had no run to cancel\n" {
		t.Errorf("sessions cancel of a failed session = %d %q", code, stderr)
	}
}
