//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// Several `agents serve` processes on one PostgreSQL database (DESIGN.md
// §6a): any server takes any request for any session, every server's
// subscribers see every session's events, and a session whose server dies
// or stops goes on on another.

// startCluster starts n servers on the database dsn at once, each in a
// directory of its own (its data directory, so its tool records, apart),
// named s1…sn, with the extra flags of serve. Each connects as the
// application agents-s1…agents-sn, so a test can tell which server's
// backend is which in pg_stat_activity.
func startCluster(t *testing.T, n int, dsn, modelURL string, extra ...string) []*serveProc {
	t.Helper()
	bin := buildAgents(t)
	procs := make([]*serveProc, n)
	for i := range procs {
		args := append([]string{"--server-id", fmt.Sprintf("s%d", i+1)}, extra...)
		app := fmt.Sprintf("agents-s%d", i+1)
		procs[i] = spawnServe(t, bin, t.TempDir(), withApplicationName(t, dsn, app), modelURL, crashAgentFiles(t), "", args...)
		procs[i].dbApplication = app
	}
	for _, p := range procs {
		p.awaitListening(t)
	}
	return procs
}

// withApplicationName is dsn with its connections named app.
func withApplicationName(t *testing.T, dsn, app string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String()
}

// clusterFirstAnswer is streamed in small pieces, so that its deltas
// reach other servers' subscribers as the run makes them.
const clusterFirstAnswer = "the first answer, streamed in small pieces to the subscribers of every server"

func clusterRules() fakellm.Rules {
	return fakellm.Rules{
		Rules: []fakellm.Rule{
			{Name: "first", Match: fakellm.Match{SystemContains: slowPrompt, UserContains: "first"}, Reply: fakellm.Reply{
				Text: clusterFirstAnswer, ChunkSize: 6, ChunkDelay: "30ms",
			}},
			// The second question's answer never ends before it is
			// cancelled.
			{Name: "second", Match: fakellm.Match{SystemContains: slowPrompt, UserContains: "second"}, Reply: fakellm.Reply{
				Text: slowText, ChunkSize: 8, ChunkDelay: "500ms",
			}},
		},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	}
}

// TestClusterASessionCreatedOnOneServerIsDrivenThroughAnotherAndStreamedThroughAThird
// creates a session through server A, which runs it; waits for it, posts
// to it and cancels its run through B; and follows it through C's event
// stream, the deltas of A's run included.
func TestClusterASessionCreatedOnOneServerIsDrivenThroughAnotherAndStreamedThroughAThird(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	model := fakellmtest.Start(t, clusterRules())
	servers := startCluster(t, 3, pgtest.DSN(t), model.URL())
	a, b, c := servers[0], servers[1], servers[2]

	feed := openSSE(t, c.url+"/v1/events", "")
	id := a.create(t, "slow", "first question")
	frames := feed.until(t, "the first run.stopped on C", runStopped(id))
	checkIncreasing(t, "0", logged(frames))
	// Deltas are best-effort across servers, and the last ones may come
	// after the run's end, which travels another way; what came is the
	// answer's start, in order.
	if got := deltaText(t, frames, id); got == "" || !strings.HasPrefix(clusterFirstAnswer, got) {
		t.Errorf("C streamed the deltas %q of the run on A, want the start of %q", got, clusterFirstAnswer)
	}
	for _, k := range []string{"session.created", "run.started", "session.updated", "run.stopped"} {
		if !hasKind(frames, k) {
			t.Errorf("C's stream lacks %s: %v", k, kinds(frames))
		}
	}

	// B waits for the session and reads what A stored.
	s := b.waitIdle(t, id)
	if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("status through B = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
	}
	if got := llmTexts(s); len(got) != 1 || got[0] != clusterFirstAnswer {
		t.Fatalf("answers through B = %q, want the first answer", got)
	}

	// Posted through B; its run streams until B cancels it.
	if _, err := b.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
		SessionId: id, Message: &agentsv1.Message{Text: "second question"},
	})); err != nil {
		t.Fatalf("post through B: %v", err)
	}
	feed.until(t, "a delta of the second run on C", func(ev *agentsv1.Event) bool {
		return ev.GetSessionId() == id && ev.GetKind() == "text.delta" && ev.GetTextDelta().GetTurnIndex() == 3
	})
	cancelled, err := b.sessions.CancelRun(ctxFor(t), connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: id}))
	if err != nil {
		t.Fatalf("cancel through B: %v", err)
	}
	// Cancel answers once the run stopped, on whichever server ran it.
	if got := cancelled.Msg.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("status in B's cancel answer = %v, want ready: the run has stopped", got)
	}
	stopped := feed.until(t, "the second run.stopped on C", runStopped(id))
	if ev := stopped[len(stopped)-1].decode(t); ev.GetRunStopped().GetReason() != "cancelled" {
		t.Errorf("run.stopped on C = %v, want reason cancelled", ev.GetRunStopped())
	}
	checkIncreasing(t, frames[len(frames)-1].id, logged(stopped))

	s = c.get(t, id)
	if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("status through C = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
	}
	if got := userTexts(s); len(got) != 2 || got[0] != "first question" || got[1] != "second question" {
		t.Errorf("user messages through C = %q, want each question once", got)
	}
	turns := s.GetTurns()
	if len(turns) != 4 || !turns[3].GetLlm().GetInterrupted() {
		t.Errorf("turns through C = %d, want 4, the last an interrupted answer:\n%s", len(turns), dumpTurns(s))
	}
	if n := countRule(model.Requests(), "second"); n != 1 {
		t.Errorf("the second question reached the model %d times, want once", n)
	}
}

// TestClusterASessionWhoseServerIsKilledMidToolFinishesOnAnother kills
// (SIGKILL) the server running a session while its bash tool runs. Once
// the dead server's lease expires another server claims the session and
// recovers it as a restart does: the call gets an aborted result, the run
// goes on to its answer, the user's turn is stored once and the tool is
// not run again.
func TestClusterASessionWhoseServerIsKilledMidToolFinishesOnAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	const ttl = 2 * time.Second
	model := fakellmtest.Start(t, napRules())
	servers := startCluster(t, 2, pgtest.DSN(t), model.URL(), "--lease-ttl", ttl.String())
	a, b := servers[0], servers[1]

	id := a.create(t, "napper", "take a nap")
	files := waitPidFiles(t, filepath.Join(a.dir, "pids"), 1)
	pids := readPids(t, files[0])
	tool, bg := mustProc(t, pids[0]), mustProc(t, pids[1])
	t.Cleanup(func() { killStray(t, tool, bg) })
	if s := b.get(t, id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
		t.Fatalf("status through B while A's tool runs = %v, want running", s.GetMeta().GetStatus())
	}

	a.kill(t)
	killed := time.Now()
	// Within the lease's expiry and a few seconds of claiming and
	// recovering, on a loaded machine.
	s := b.waitIdleWithin(t, id, ttl+10*time.Second)
	t.Logf("the session finished on B %v after A was killed (lease ttl %v)", time.Since(killed).Round(time.Millisecond), ttl)
	if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("status after the failover = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
	}
	checkAnswered(t, s)
	turns := s.GetTurns()
	if len(turns) != 4 {
		t.Fatalf("turns = %d, want 4 (message, call, result, answer):\n%s", len(turns), dumpTurns(s))
	}
	if got := userTexts(s); len(got) != 1 || got[0] != "take a nap" {
		t.Errorf("user messages = %q, want the one posted, once", got)
	}
	results := turns[2].GetUser().GetToolResults()
	if len(results) != 1 || results[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED {
		t.Fatalf("tool results = %v, want one aborted result", results)
	}
	if got := turns[3].GetLlm().GetText(); !strings.HasPrefix(got, "woke: ") {
		t.Errorf("answer = %q, want the second step's", got)
	}
	reqs := model.Requests()
	if n, m := stepRequests(reqs, napPrompt, 0), stepRequests(reqs, napPrompt, 1); n != 1 || m != 1 {
		t.Errorf("model requests: %d for the first step, %d for the second; want one each", n, m)
	}
	if files := pidFiles(t, filepath.Join(b.dir, "pids")); len(files) != 0 {
		t.Errorf("B ran the tool again: %v", files)
	}
	// B counts the failover, and reports its leases as ready.
	if n := scrape(t, b.url, "agents_lease_failovers_total"); n < 1 {
		t.Errorf("B's agents_lease_failovers_total = %v, want at least 1", n)
	}
	if status, body := getReadyz(t, b.url); status != http.StatusOK || !strings.Contains(body, `"leases"`) {
		t.Errorf("B's /readyz = %d %s, want 200 with its leases", status, body)
	}
}

// scrape reads one sample without labels from a server's /metrics, -1
// when it is missing.
func scrape(t *testing.T, base, name string) float64 {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for line := range strings.Lines(string(b)) {
		if value, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
	}
	return -1
}

// TestClusterASubscriberThatReconnectsToAnotherServerMissesNothingAndSeesNothingTwice
// reads server A's event stream up to a position, then reconnects to
// server B with that position as its Last-Event-ID, while both servers
// ran sessions in between: B replays exactly the logged events after it,
// as the log has them on either server, then goes on live.
func TestClusterASubscriberThatReconnectsToAnotherServerMissesNothingAndSeesNothingTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	model := fakellmtest.Start(t, fakellm.Rules{
		// Deltas spread over a while before the answer is stored, so
		// some reach the other server before the run's end does.
		Rules: []fakellm.Rule{{Name: "read", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: fakellm.Reply{
			Text: "read: {{last_user}}", ChunkSize: 4, ChunkDelay: "30ms",
		}}},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	})
	servers := startCluster(t, 2, pgtest.DSN(t), model.URL())
	a, b := servers[0], servers[1]

	live := openSSE(t, a.url+"/v1/events", "")
	x := a.create(t, "slow", "alpha")
	before := logged(live.until(t, "alpha's run.stopped", runStopped(x)))
	n := runStarted(t, before)
	last := before[n].id
	live.close()

	// Events of both servers after the subscriber left: a run of A's
	// session posted through B, and a session of B's own.
	if _, err := b.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
		SessionId: x, Message: &agentsv1.Message{Text: "beta"},
	})); err != nil {
		t.Fatalf("post beta through B: %v", err)
	}
	b.waitIdle(t, x)
	y := b.create(t, "slow", "gamma")
	b.waitIdle(t, y)

	// Positions mean the same on every server.
	whole := readLog(t, a.url, "0", runStopped(y))
	checkSame(t, "the log read from B", readLog(t, b.url, "0", runStopped(y)), whole)
	var want []sseFrame
	for _, f := range whole {
		if before[n].pos(t).Before(f.pos(t)) {
			want = append(want, f)
		}
	}

	again := openSSE(t, b.url+"/v1/events", last)
	if got := again.header.Get("Agents-Replay"); got != "replay" {
		t.Fatalf("reconnect to B after %s: Agents-Replay = %q, want replay", last, got)
	}
	frames := logged(again.until(t, "gamma's run.stopped", runStopped(y)))
	checkIncreasing(t, last, frames)
	checkSame(t, "B's replay after "+last, frames, want)

	// Then live: a run on A of a session posted to through A, as the log
	// has it, on B's stream.
	if _, err := a.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
		SessionId: x, Message: &agentsv1.Message{Text: "delta"},
	})); err != nil {
		t.Fatalf("post delta through A: %v", err)
	}
	end := frames[len(frames)-1].id
	more := again.until(t, "alpha's third run.stopped on B", runStopped(x))
	checkIncreasing(t, end, logged(more))
	checkSame(t, "B live after "+end, logged(more), readLog(t, a.url, end, runStopped(x)))
	if !hasKind(more, "text.delta") {
		t.Errorf("B's live events of A's run = %v, want its deltas too", kinds(more))
	}
}

// clusterCallArguments are the arguments of the call the model writes,
// slowly, in TestClusterASubscriberOnOneServerWatchesACallBeingWrittenOnAnother.
const clusterCallArguments = `{"path":"notes/today.md","text":"a call written in small pieces for every server"}`

// TestClusterASubscriberOnOneServerWatchesACallBeingWrittenOnAnother
// follows, through B's event stream, a run on A whose model writes a tool
// call slowly: B's subscriber gets the call's tool_call.delta events,
// which fold into the call A stores.
func TestClusterASubscriberOnOneServerWatchesACallBeingWrittenOnAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	model := fakellmtest.Start(t, fakellm.Rules{
		Rules: []fakellm.Rule{
			// The slow agent has no tools: the call gets an error
			// result, which the model answers.
			{Name: "write", Match: fakellm.Match{SystemContains: slowPrompt, LastIsToolResult: new(false)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{ID: "call_slow", Name: "write_note", Arguments: []byte(clusterCallArguments)}},
				ChunkSize: 6, ChunkDelay: "20ms",
			}},
			{Name: "answer", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: fakellm.Reply{Text: "noted"}},
		},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	})
	servers := startCluster(t, 2, pgtest.DSN(t), model.URL())
	a, b := servers[0], servers[1]

	feed := openSSE(t, b.url+"/v1/events", "")
	id := a.create(t, "slow", "take a note")
	// The deltas cross as notifications and the run's end through the
	// log: the last deltas may come after the run.stopped, so the stream
	// is read until the call is whole.
	var callID, name, args string
	deltas := 0
	deadline := time.Now().Add(60 * time.Second)
	for args != clusterCallArguments {
		if time.Now().After(deadline) {
			t.Fatalf("after 60s B streamed %d deltas of the call: %s %s(%s), want (%s)", deltas, callID, name, args, clusterCallArguments)
		}
		f := feed.next(t, "the call's deltas on B")
		if f.event != "tool_call.delta" {
			continue
		}
		ev := f.decode(t)
		if ev.GetSessionId() != id {
			continue
		}
		d := ev.GetToolCallDelta()
		if d.GetTurnIndex() != 1 || d.GetCallIndex() != 0 {
			t.Fatalf("a delta of turn %d, call %d; the model writes one call, in turn 1", d.GetTurnIndex(), d.GetCallIndex())
		}
		if d.GetCallId() != "" {
			callID = d.GetCallId()
		}
		if d.GetName() != "" {
			name = d.GetName()
		}
		args += d.GetArguments()
		deltas++
		if !strings.HasPrefix(clusterCallArguments, args) {
			t.Fatalf("B streamed the arguments %q, not the start of %q", args, clusterCallArguments)
		}
	}
	if callID != "call_slow" || name != "write_note" || deltas < 2 {
		t.Errorf("B streamed %d deltas of the call %s %s", deltas, callID, name)
	}
	s := b.waitIdle(t, id)
	calls := s.GetTurns()[1].GetLlm().GetToolCalls()
	if len(calls) != 1 || calls[0].GetArguments() != args || calls[0].GetId() != callID {
		t.Errorf("the stored calls %v; B's deltas made %s(%s)", calls, callID, args)
	}
}

// TestClusterThreeServersStartedAtOnceOnAnEmptyDatabase starts three
// servers together on a database with no tables: they migrate it once
// between them, and each then serves sessions the others read.
func TestClusterThreeServersStartedAtOnceOnAnEmptyDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	model := fakellmtest.Start(t, oneWriterRules())
	servers := startCluster(t, 3, pgtest.DSN(t), model.URL())

	ids := make([]string, len(servers))
	for i, p := range servers {
		ids[i] = p.create(t, "slow", fmt.Sprintf("question %d", i))
	}
	for i, p := range servers {
		// Each session read through the next server.
		id := ids[(i+1)%len(ids)]
		if s := p.waitIdle(t, id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
			t.Errorf("session %s through s%d: %v (%s)", id, i+1, s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
		}
		res, err := p.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{}))
		if err != nil {
			t.Fatalf("list through s%d: %v", i+1, err)
		}
		if got := len(res.Msg.GetSessions()); got != len(ids) {
			t.Errorf("s%d lists %d sessions, want %d", i+1, got, len(ids))
		}
	}
}

// TestClusterASIGTERMedServerHandsItsRunningSessionOverAtOnce stops
// (SIGTERM) the server running a session mid-answer, with a lease far
// longer than the test: the stopping server releases its lease, so
// another server takes the session up at once rather than at expiry, and
// finishes the run, retrying the step the stop cut.
func TestClusterASIGTERMedServerHandsItsRunningSessionOverAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	const ttl = 5 * time.Minute
	model := fakellmtest.Start(t, crashRules())
	servers := startCluster(t, 2, pgtest.DSN(t), model.URL(), "--lease-ttl", ttl.String())
	a, b := servers[0], servers[1]

	feed := openEvents(t, b.url)
	id := a.create(t, "slow", "tell me a long story")
	feed.waitFor(t, "a delta of A's run on B", func(ev *agentsv1.Event) bool {
		return ev.GetSessionId() == id && ev.GetKind() == "text.delta"
	})
	a.stop()
	if ws := a.cmd.ProcessState; ws == nil || !ws.Success() {
		t.Fatalf("A ended with %v after SIGTERM, want a clean exit", ws)
	}
	// Long before the lease would expire.
	s := b.waitIdleWithin(t, id, 60*time.Second)
	if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("status after the handover = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
	}
	if got := userTexts(s); len(got) != 1 || got[0] != "tell me a long story" {
		t.Errorf("user messages = %q, want the one posted, once", got)
	}
	if got := llmTexts(s); len(got) != 1 || got[0] != "read: tell me a long story" {
		t.Errorf("answers = %q, want one, from the retried step", got)
	}
	if n := stepRequests(model.Requests(), slowPrompt, 0); n != 2 {
		t.Errorf("the first step reached the model %d times, want twice (the attempt the stop cut, the retry on B)", n)
	}
}

// waitIdleWithin long-polls a session until no run is active and fails
// when it still runs after d.
func (p *serveProc) waitIdleWithin(t *testing.T, id string, d time.Duration) *agentsv1.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d+10*time.Second)
	defer cancel()
	begin := time.Now()
	res, err := p.sessions.GetSession(ctx, connect.NewRequest(&agentsv1.GetSessionRequest{
		SessionId: id, Wait: true, Timeout: durationpb.New(d),
	}))
	if err != nil {
		t.Fatalf("wait for session %s: %v", id, err)
	}
	s := res.Msg.GetSession()
	if s.GetMeta().GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
		// Either its run outlasted d, or it says it runs with no run,
		// and the long poll returned at once.
		t.Fatalf("session %s still running when the long poll of %v returned, after %v:\n%s", id, d, time.Since(begin).Round(time.Millisecond), dumpTurns(s))
	}
	return s
}

// deltaText joins the text deltas of session id among frames.
func deltaText(t *testing.T, frames []sseFrame, id string) string {
	t.Helper()
	var b strings.Builder
	for _, f := range frames {
		if f.event != "text.delta" {
			continue
		}
		if ev := f.decode(t); ev.GetSessionId() == id {
			b.WriteString(ev.GetTextDelta().GetText())
		}
	}
	return b.String()
}

// countRule counts the model requests one rule answered.
func countRule(reqs []fakellm.Request, name string) int {
	n := 0
	for _, r := range reqs {
		if r.RuleName == name {
			n++
		}
	}
	return n
}

// TestClusterAServerRestartedUnderItsOwnIDTakesUpItsRuns kills a server
// mid-run and starts it again under the same id: a --server-id of its
// own (a fixed name, such as its host's), or the default one, which the
// data directory keeps. The leases in the database are under its name,
// but the process that held them is gone: the new one must take the runs
// up at once, as a restart on SQLite does, neither wait for the leases to
// expire (the lease here outlives the test) nor take them as live ones of
// its own and leave the sessions running with no run.
func TestClusterAServerRestartedUnderItsOwnIDTakesUpItsRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"its own id", []string{"--server-id", "fixed-name"}},
		{"the default id", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			model := fakellmtest.Start(t, crashRules())
			bin := buildAgents(t)
			dsn := pgtest.DSN(t)
			dir := t.TempDir()
			args := append([]string{"--lease-ttl", "5m"}, tc.args...)
			first := startServeAgents(t, bin, dir, dsn, model.URL(), crashAgentFiles(t), "", args...)
			feed := openEvents(t, first.url)
			id := first.create(t, "slow", "tell me a long story")
			feed.waitFor(t, "the first delta", func(ev *agentsv1.Event) bool {
				return ev.GetSessionId() == id && ev.GetKind() == "text.delta"
			})
			first.kill(t)
			feed.close()

			second := startServeAgents(t, bin, dir, dsn, model.URL(), crashAgentFiles(t), "", args...)
			// Read through the log, which loads no session: a request
			// for the session would load it, and take its lease, itself.
			readLog(t, second.url, "0", runStopped(id))
			s := second.get(t, id)
			if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
				t.Fatalf("status after the restart = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
			}
			if got := llmTexts(s); len(got) != 1 || got[0] != "read: tell me a long story" {
				t.Errorf("answers = %q, want one, from the retried step", got)
			}
		})
	}
}

// TestClusterAServerWhoseDatabaseConnectionsAreEndedAnswersTheNextRequests
// ends every connection a server has to the database (as a restart of
// PostgreSQL, or an operator, does) right after it used them, several at
// once: its next requests, reads and posts, are answered, not refused for
// a dead connection of its pool while a new one works.
func TestClusterAServerWhoseDatabaseConnectionsAreEndedAnswersTheNextRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	model := fakellmtest.Start(t, oneWriterRules())
	dsn := pgtest.DSN(t)
	a := startCluster(t, 1, dsn, model.URL())[0]
	admin, err := pgx.Connect(ctxFor(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())

	const n = 4
	ids := make([]string, n)
	for i := range ids {
		ids[i] = a.create(t, "slow", fmt.Sprintf("question %d", i))
	}
	for _, id := range ids {
		a.waitIdle(t, id)
	}
	// Requests at once, so the pool holds several connections.
	together := func(what string, req func(i int) error) {
		t.Helper()
		errc := make(chan error, 2*n)
		for i := range 2 * n {
			go func() { errc <- req(i) }()
		}
		for range 2 * n {
			if err := <-errc; err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	list := func(int) error {
		_, err := a.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{}))
		return err
	}
	for round := range 3 {
		together("list", list)
		endConnections(t, admin)
		together(fmt.Sprintf("round %d: list after the server's connections were ended", round), list)
		endConnections(t, admin)
		together(fmt.Sprintf("round %d: post after the server's connections were ended", round), func(i int) error {
			if i >= n {
				return list(i)
			}
			_, err := a.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
				SessionId: ids[i], Message: &agentsv1.Message{Text: fmt.Sprintf("again %d", round)},
			}))
			return err
		})
		for _, id := range ids {
			if s := a.waitIdle(t, id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
				t.Fatalf("round %d: %s %v (%s)", round, id, s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
			}
		}
	}
	for _, id := range ids {
		if got := llmTexts(a.get(t, id)); len(got) != 4 {
			t.Errorf("%s: answers = %q, want one to each of the 4 questions", id, got)
		}
	}
}

// endConnections ends every connection to admin's database but admin's
// own, and waits until their backends are gone.
func endConnections(t *testing.T, admin *pgx.Conn) {
	t.Helper()
	var n int
	err := admin.QueryRow(ctxFor(t), `SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) AS ended
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t WHERE ended`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no connection of the server to end")
	}
}
