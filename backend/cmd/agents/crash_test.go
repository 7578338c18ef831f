//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// The crash test's agents (testdata/agents) and what their model says.
const (
	askerPrompt = "asking agent of the crash test"
	slowPrompt  = "slow agent of the crash test"
	// crashKeyID is the agents' apiKeyId: the child never holds it, so
	// --offline-model redirects both agents to the in-process model.
	crashKeyID = "crash-test-key"

	answerText = "teal"
)

// slowText is streamed so slowly (200 chunks, half a second apart) that the
// first attempt of the slow agent's step cannot end before the kill; the
// test checks afterwards that it indeed never ended.
var slowText = strings.Repeat("once up ", 200)

func crashRules() fakellm.Rules {
	return fakellm.Rules{
		Rules: []fakellm.Rule{
			{Name: "ask", Match: fakellm.Match{SystemContains: askerPrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "ask_user", Arguments: json.RawMessage(`{"question": "which colour?"}`)}},
			}},
			{Name: "thank", Match: fakellm.Match{SystemContains: askerPrompt, AssistantMessages: new(1), LastIsToolResult: new(true)}, Reply: fakellm.Reply{
				Text: "you chose {{last_tool_result}}",
			}},
			// Only the first attempt is slow: the step the restarted server
			// retries, and any step after it, answers at once, quoting the
			// last user message (where folded mail is).
			{Name: "slow first attempt", Times: 1, Match: fakellm.Match{SystemContains: slowPrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				Text: slowText, ChunkSize: 8, ChunkDelay: "500ms",
			}},
			{Name: "quick", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: fakellm.Reply{
				Text: "read: {{last_user}}",
			}},
		},
		// A request no rule expects is a bug in the test or the runner: make
		// it fail loudly rather than answer something plausible.
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	}
}

// TestSIGKILLMidStepResumesTheRunDeliversMailOnceAndKeepsDeferredCalls kills
// the server process while session B's model step is streaming with two
// pieces of mail queued for it, and while session A waits on a deferred
// call. The restarted server (same database) must resume B by itself,
// retry the interrupted step, fold each mail exactly once, and still accept
// A's continuation token, exactly once.
func TestSIGKILLMidStepResumesTheRunDeliversMailOnceAndKeepsDeferredCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	eachDialect(t, func(t *testing.T, d dialect) {
		bin := buildAgents(t)
		model := fakellmtest.Start(t, crashRules())
		dir := t.TempDir()
		db := database(t, d, dir)

		first := startServeOn(t, d, bin, dir, db, model.URL())
		feed := openEvents(t, first.url)

		// A: the model calls the client tool; the run stops and waits.
		a := first.create(t, "asker", "ask me something")
		aView := first.waitIdle(t, a)
		if got := aView.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_WAITING {
			t.Fatalf("A status = %v (%s), want waiting", got, aView.GetMeta().GetStatusReason())
		}
		if n := len(aView.GetPendingCalls()); n != 1 {
			t.Fatalf("A pending calls = %v, want one", aView.GetPendingCalls())
		}
		token := aView.GetPendingCalls()[0].GetToken()
		if token == "" || aView.GetPendingCalls()[0].GetCall().GetName() != "ask_user" {
			t.Fatalf("A pending call = %v, want ask_user with a token", aView.GetPendingCalls()[0])
		}

		// B: its first step streams slowly; mail is queued once it streams.
		b := first.create(t, "slow", "tell me a long story")
		feed.waitFor(t, "B's first text.delta", func(ev *agentsv1.Event) bool {
			return ev.GetSessionId() == b && ev.GetKind() == "text.delta"
		})
		mailOne := "mail one: the cat is hungry"
		mailTwo := "mail two: bring an umbrella"
		sent, err := first.sessions.SendMail(ctxFor(t), connect.NewRequest(&agentsv1.SendMailRequest{
			SessionId: b,
			Body:      &agentsv1.MailBody{Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: mailOne}}},
		}))
		if err != nil {
			t.Fatalf("send mail to B: %v", err)
		}
		posted, err := first.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
			SessionId: b,
			Message:   &agentsv1.Message{Text: mailTwo},
		}))
		if err != nil {
			t.Fatalf("post to B: %v", err)
		}
		if posted.Msg.GetMailId() == "" {
			t.Fatalf("post to running B was not stored as mail: %v", posted.Msg)
		}
		pending := first.listMail(t, b, true)
		if len(pending) != 2 {
			t.Fatalf("B pending mail before the kill = %v, want 2", pending)
		}
		if s := first.get(t, b); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
			t.Fatalf("B status before the kill = %v, want running", s.GetMeta().GetStatus())
		}

		first.kill(t)
		feed.close()

		second := startServeOn(t, d, bin, dir, db, model.URL())

		// B resumes with no client asking it to, and ends.
		bView := second.waitIdle(t, b)
		if got := bView.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
			t.Fatalf("B status after restart = %v (%s), want ready", got, bView.GetMeta().GetStatusReason())
		}
		// The kill landed mid-step: the slow answer was never stored, and the
		// model was asked for B's first step twice (the cut attempt, the retry).
		var bReqs []fakellm.Request
		firstStep := 0
		for _, r := range model.Requests() {
			if strings.Contains(r.SystemPrompt(), slowPrompt) {
				bReqs = append(bReqs, r)
				if r.AssistantMessages() == 0 {
					firstStep++
				}
			}
		}
		if firstStep != 2 || len(bReqs) < 2 || bReqs[0].RuleName != "slow first attempt" || bReqs[1].RuleName != "quick" {
			t.Errorf("model requests for B = %v, %d of them for its first step; want the slow attempt, then its retry", ruleNames(bReqs), firstStep)
		}
		var answers []string
		for _, turn := range bView.GetTurns() {
			if l := turn.GetLlm(); l != nil {
				answers = append(answers, l.GetText())
				if strings.Contains(l.GetText(), "once up") || l.GetInterrupted() {
					t.Errorf("B has an answer from the attempt the kill cut: %v", l)
				}
			}
		}
		if len(answers) == 0 {
			t.Fatalf("B has no answer after the restart: %v", bView.GetTurns())
		}
		// Each mail is folded into a turn exactly once, and the model read
		// both: the last answer quotes the user message they were folded into.
		last := answers[len(answers)-1]
		for _, text := range []string{mailOne, mailTwo} {
			if n := foldedCount(bView, text); n != 1 {
				t.Errorf("mail %q folded %d times in B's turns, want once", text, n)
			}
			if !strings.Contains(last, text) {
				t.Errorf("B's last answer %q does not quote the mail %q", last, text)
			}
		}
		all := second.listMail(t, b, false)
		if len(all) != 2 {
			t.Fatalf("B mail after restart = %v, want 2", all)
		}
		for _, m := range all {
			if m.GetDeliverTime() == nil {
				t.Errorf("mail %s (%q) not marked delivered", m.GetId(), m.GetBody().GetUserMessage().GetText())
			}
		}
		ids := map[string]bool{all[0].GetId(): true, all[1].GetId(): true}
		if !ids[sent.Msg.GetEnvelope().GetId()] || !ids[posted.Msg.GetMailId()] {
			t.Errorf("B mail ids after restart = %v, want %s and %s", ids, sent.Msg.GetEnvelope().GetId(), posted.Msg.GetMailId())
		}
		if p := second.listMail(t, b, true); len(p) != 0 || bView.GetMeta().GetPendingMail() != 0 {
			t.Errorf("B pending mail after restart = %v (meta says %d), want none", p, bView.GetMeta().GetPendingMail())
		}

		// A still waits on the same call, and the old token answers it.
		aView = second.get(t, a)
		if got := aView.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_WAITING {
			t.Fatalf("A status after restart = %v (%s), want waiting", got, aView.GetMeta().GetStatusReason())
		}
		if calls := aView.GetPendingCalls(); len(calls) != 1 || calls[0].GetToken() != token {
			t.Fatalf("A pending calls after restart = %v, want the one with token %s", calls, token)
		}
		done, err := second.sessions.CompleteCall(ctxFor(t), connect.NewRequest(&agentsv1.CompleteCallRequest{
			Token:  token,
			Result: &agentsv1.CompleteCallRequest_Text{Text: answerText},
			Resume: true,
		}))
		if err != nil {
			t.Fatalf("complete A's call with the old token: %v", err)
		}
		if done.Msg.GetRemaining() != 0 {
			t.Errorf("remaining calls = %d, want 0", done.Msg.GetRemaining())
		}
		aView = second.waitIdle(t, a)
		if got := aView.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
			t.Fatalf("A status after the answer = %v (%s), want ready", got, aView.GetMeta().GetStatusReason())
		}
		turns := aView.GetTurns()
		if len(turns) != 4 {
			t.Fatalf("A turns = %v, want 4 (question, call, answer, reply)", turns)
		}
		results := turns[2].GetUser().GetToolResults()
		if len(results) != 1 || results[0].GetText() != answerText || results[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK {
			t.Errorf("A's tool results = %v, want the client's answer %q", results, answerText)
		}
		if got := turns[3].GetLlm().GetText(); got != "you chose "+answerText {
			t.Errorf("A's reply = %q, want it to use the answer", got)
		}
		if len(aView.GetPendingCalls()) != 0 {
			t.Errorf("A pending calls after the answer = %v, want none", aView.GetPendingCalls())
		}

		// The token is spent.
		_, err = second.sessions.CompleteCall(ctxFor(t), connect.NewRequest(&agentsv1.CompleteCallRequest{
			Token:  token,
			Result: &agentsv1.CompleteCallRequest_Text{Text: "again"},
			Resume: true,
		}))
		if connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Errorf("second CompleteCall = %v, want failed_precondition", err)
		}
	})
}

// foldedCount counts the pieces of mail with text folded into s's turns.
func foldedCount(s *agentsv1.Session, text string) int {
	n := 0
	for _, turn := range s.GetTurns() {
		for _, m := range turn.GetUser().GetMail() {
			if m.GetBody().GetUserMessage().GetText() == text {
				n++
			}
		}
	}
	return n
}

func ruleNames(reqs []fakellm.Request) []string {
	names := make([]string, len(reqs))
	for i, r := range reqs {
		names[i] = r.RuleName
	}
	return names
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A dialect is a database the server runs on.
type dialect string

const (
	onSQLite dialect = "sqlite"
	// onPostgres restarts the server with the id it had: the same
	// server, it takes back at once the leases the killed one held.
	onPostgres dialect = "postgres"
	// onPostgresFailover restarts it with a new id (each process has its
	// own by default): another server, it takes the sessions over once
	// the killed one's leases expire, 2s here.
	onPostgresFailover dialect = "postgres-failover"
)

// eachDialect runs body once on each database, SQLite first, as a
// parallel subtest named after it. Each crash test is one trial per
// database: a kill at one point of a run, then a restart (on PostgreSQL,
// one under the same id and one under a new id).
func eachDialect(t *testing.T, body func(t *testing.T, d dialect)) {
	t.Helper()
	for _, d := range []dialect{onSQLite, onPostgres, onPostgresFailover} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			body(t, d)
		})
	}
}

// database is what a test's servers get as --db on d: a SQLite file in
// dir, or a PostgreSQL database of the test's own, dropped when it ends
// (with the connections a killed server left).
func database(t *testing.T, d dialect, dir string) string {
	t.Helper()
	if d != onSQLite {
		return pgtest.DSN(t)
	}
	return filepath.Join(dir, "agents.db")
}

// buildAgents returns the real binary the tests run, built once for the
// whole package.
func buildAgents(t *testing.T) string {
	t.Helper()
	bin, err := agentsBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// serveProc is one `agents serve` child process.
type serveProc struct {
	cmd      *exec.Cmd
	dir      string // where it runs, with its home and data directories
	url      string
	logs     *lineLog
	exited   chan struct{}
	sessions agentsv1connect.SessionServiceClient
	// dbApplication is the application_name of its PostgreSQL
	// connections, when a test gave it one (startCluster does).
	dbApplication string
}

// startServe runs `agents serve` on a free port and waits until it
// listens. It runs in dir with a home and config directories of its own,
// so no config file or key of the machine reaches it.
func startServe(t *testing.T, bin, dir, db, modelURL string) *serveProc {
	t.Helper()
	return startServeOn(t, onSQLite, bin, dir, db, modelURL)
}

// startServeOn is startServe for a crash test on d: on PostgreSQL, the
// server is started with the id and lease settings of d.
func startServeOn(t *testing.T, d dialect, bin, dir, db, modelURL string) *serveProc {
	t.Helper()
	files := make([]string, len(crashAgents))
	for i, name := range crashAgents {
		files[i] = filepath.Join("testdata/agents", name+".json")
	}
	return startServeAgents(t, bin, dir, db, modelURL, files, "", serveFlags(d)...)
}

// serveFlags are the id and lease settings of a crash test's server on d.
func serveFlags(d dialect) []string {
	switch d {
	case onPostgres:
		return []string{"--server-id", "crash-test"}
	case onPostgresFailover:
		return []string{"--lease-ttl", "2s"}
	}
	return nil
}

// startServeAgents is startServe with the agent files given, listening on
// addr (a port, "0" for any free one), with the extra flags of serve.
func startServeAgents(t *testing.T, bin, dir, db, modelURL string, agentFiles []string, port string, extra ...string) *serveProc {
	t.Helper()
	p := spawnServe(t, bin, dir, db, modelURL, agentFiles, port, extra...)
	p.awaitListening(t)
	return p
}

// spawnServe starts `agents serve` as startServeAgents does, without
// waiting for it to listen (see awaitListening): servers started together
// race for an empty database.
func spawnServe(t *testing.T, bin, dir, db, modelURL string, agentFiles []string, port string, extra ...string) *serveProc {
	t.Helper()
	if port == "" {
		port = "0"
	}
	// `--port 0` picks a free port; the address comes from the
	// `listening` log line. A short grace keeps the cleanup quick when a
	// test leaves a slow step streaming.
	args := []string{"serve",
		"--port", port,
		"--db", db,
		"--offline-model", modelURL,
		"--log-format", "json",
		"--shutdown-grace", "1s",
	}
	for _, f := range agentFiles {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "--agent-file", abs)
	}
	args = append(args, extra...)
	if err := os.MkdirAll(filepath.Join(dir, "pids"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = childEnv(dir)
	logs := &lineLog{listening: make(chan string, 1)}
	cmd.Stdout = logs
	cmd.Stderr = logs
	// Nothing the server starts may keep the test waiting on its output.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start agents serve: %v", err)
	}
	p := &serveProc{cmd: cmd, dir: dir, logs: logs, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("agents serve (pid %d) output:\n%s", cmd.Process.Pid, logs.String())
		}
	})
	return p
}

// awaitListening waits until the server logs where it listens.
func (p *serveProc) awaitListening(t *testing.T) {
	t.Helper()
	select {
	case p.url = <-p.logs.listening:
	case <-p.exited:
		t.Fatalf("agents serve exited before listening: %v\n%s", p.cmd.ProcessState, p.logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("agents serve did not log `listening` within 60s:\n%s", p.logs.String())
	}
	p.sessions = agentsv1connect.NewSessionServiceClient(http.DefaultClient, p.url)
}

// childEnv is the test's environment with the home and XDG directories
// moved under dir and the agents' API key variables removed. Tools record
// their process ids under dir/pids (pidDirEnv).
func childEnv(dir string) []string {
	drop := map[string]bool{"HOME": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true}
	for _, name := range config.EnvNames(crashKeyID) {
		drop[name] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !drop[name] {
			env = append(env, kv)
		}
	}
	return append(env,
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		pidDirEnv+"="+filepath.Join(dir, "pids"),
	)
}

// kill ends the process with SIGKILL: no shutdown code runs.
func (p *serveProc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("agents serve did not die within 30s of SIGKILL")
	}
	ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("agents serve ended with %v, want killed by SIGKILL", p.cmd.ProcessState)
	}
}

// stop ends the process gracefully if it still runs, by force if it
// hangs.
func (p *serveProc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

func (p *serveProc) create(t *testing.T, agent, text string) string {
	t.Helper()
	res, err := p.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent:   agent,
		Message: &agentsv1.Message{Text: text},
	}))
	if err != nil {
		t.Fatalf("create %s session: %v", agent, err)
	}
	return res.Msg.GetSession().GetMeta().GetId()
}

func (p *serveProc) get(t *testing.T, id string) *agentsv1.Session {
	t.Helper()
	res, err := p.sessions.GetSession(ctxFor(t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id}))
	if err != nil {
		t.Fatalf("get session %s: %v", id, err)
	}
	return res.Msg.GetSession()
}

// waitIdle long-polls a session until no run is active. A session still
// running when the long poll returns either has a run that never ends or
// claims to run with no run: both fail. The timeout is only a safety net.
func (p *serveProc) waitIdle(t *testing.T, id string) *agentsv1.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Second)
	defer cancel()
	res, err := p.sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{
		SessionId: id, Wait: true, Timeout: durationpb.New(90 * time.Second),
	}))
	if err != nil {
		t.Fatalf("wait for session %s: %v", id, err)
	}
	s := res.Msg.GetSession()
	if s.GetMeta().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
		t.Fatalf("session %s still running after the long poll", id)
	}
	return s
}

func (p *serveProc) listMail(t *testing.T, id string, pendingOnly bool) []*agentsv1.MailEnvelope {
	t.Helper()
	res, err := p.sessions.ListMail(ctxFor(t), connect.NewRequest(&agentsv1.ListMailRequest{SessionId: id, PendingOnly: pendingOnly}))
	if err != nil {
		t.Fatalf("list mail of %s: %v", id, err)
	}
	return res.Msg.GetMail()
}

// lineLog keeps the child's output and reports the address of its
// `listening` log line.
type lineLog struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	partial   []byte
	listening chan string
	found     bool
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		line := l.partial[:i]
		l.partial = l.partial[i+1:]
		var rec struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if !l.found && json.Unmarshal(line, &rec) == nil && rec.Msg == "listening" && rec.Addr != "" {
			l.found = true
			l.listening <- rec.Addr
		}
	}
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// eventFeed reads the server's SSE stream (GET /v1/events) and decodes
// its events.
type eventFeed struct {
	events chan *agentsv1.Event
	cancel context.CancelFunc
}

func openEvents(t *testing.T, url string) *eventFeed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/events", nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET /v1/events: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET /v1/events: status %d", res.StatusCode)
	}
	f := &eventFeed{events: make(chan *agentsv1.Event, 1024), cancel: cancel}
	t.Cleanup(f.close)
	go func() {
		defer close(f.events)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			ev := &agentsv1.Event{}
			if apijson.Unmarshal([]byte(data), ev) != nil || ev.GetKind() == "" {
				continue // a snapshot or lagged frame, not an event
			}
			select {
			case f.events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return f
}

func (f *eventFeed) close() { f.cancel() }

// waitFor reads events until one satisfies match.
func (f *eventFeed) waitFor(t *testing.T, what string, match func(*agentsv1.Event) bool) *agentsv1.Event {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-f.events:
			if !ok {
				t.Fatalf("event stream ended before %s", what)
			}
			if match(ev) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s within 60s", what)
		}
	}
}
