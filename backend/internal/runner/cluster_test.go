package runner_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	llmclient "github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/runner/modelfault"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/sqlite"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// Issue 21, items 3 and 4: several runners on one store and one bus, as
// several servers on one database. A session is held by the server that
// loaded it; the others take requests for it and forward them.

// clusterRules answer "tool please" with a call of the tool, its result
// with "done", and anything else with "done".
var clusterRules = fakellm.Rules{Rules: []fakellm.Rule{
	{Match: fakellm.Match{UserContains: "tool please", LastIsToolResult: ptr(false)}, Reply: fakellm.Reply{
		ToolCalls: []fakellm.ToolCall{{Name: "bash_noop", Arguments: json.RawMessage(`{}`)}},
	}},
	{Match: fakellm.Match{UserContains: "stream please", LastIsToolResult: ptr(false)}, Reply: fakellm.Reply{
		Text: "one two three four", ChunkSize: 4,
	}},
	{Reply: fakellm.Reply{Text: "done"}},
}}

// fleet is a few runners on one SQLite store and one memory bus.
type fleet struct {
	db      *sqlite.Store
	path    string
	bus     *cluster.MemoryBus
	cat     *catalog.Catalog
	model   *modelfault.Faults
	factory runner.ModelFactory
	servers map[string]*server
	order   []*server
}

// server is one runner of a fleet with its own hub and clock.
type server struct {
	name   string
	run    *runner.Runner
	hub    *events.Hub
	store  *dyingStore
	ahead  atomic.Int64 // nanoseconds the server's clock is ahead
	closed bool
}

func (s *server) now() time.Time { return time.Now().Add(time.Duration(s.ahead.Load())) }

func (s *server) close() {
	if !s.closed {
		s.closed = true
		s.run.Close()
		s.hub.Shutdown()
	}
}

// dyingStore is the store as a server sees it; with dying set, the
// server dies, for the store, as it is about to finish a command: the
// command was applied, its end is never written.
type dyingStore struct {
	store.Store
	dying    atomic.Bool
	unwitten chan string
}

func (s *dyingStore) FinishCommand(ctx context.Context, id, result string, at time.Time) (bool, error) {
	if s.dying.Load() {
		select {
		case s.unwitten <- id:
		default:
		}
		return false, errors.New("the server died")
	}
	return s.Store.FinishCommand(ctx, id, result, at)
}

func newFleet(t *testing.T, names ...string) *fleet {
	t.Helper()
	ctx := context.Background()
	llm := fakellmtest.Start(t, clusterRules)
	path := filepath.Join(t.TempDir(), "cluster.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{db: db, path: path, bus: cluster.NewMemoryBus(), model: &modelfault.Faults{}, servers: map[string]*server{}}
	f.cat = catalog.New(ctx, func() *agentfile.Set {
		return agentfile.Load(nil, []string{"testdata/bench/agents", "testdata/cluster/agents"})
	}, catalog.Options{HasKey: func(string) bool { return false }, OfflineModelURL: llm.URL()})
	f.factory = f.model.Factory(runner.LLMModels(func(string) (string, bool) { return "", false }, llmclient.Limits{}, nil))
	for _, name := range names {
		s := &server{name: name, store: &dyingStore{Store: db, unwitten: make(chan string, 1)}}
		if s.hub, err = runner.NewHub(ctx, s.store, events.Options{}); err != nil {
			t.Fatal(err)
		}
		s.run = runner.New(runner.Options{
			Store:   s.store,
			Hub:     s.hub,
			Catalog: f.cat,
			Models:  f.factory,
			Now:     s.now,
			Cluster: &runner.Cluster{Holder: name, LeaseTTL: time.Minute, Bus: f.bus},
		})
		f.servers[name] = s
		f.order = append(f.order, s)
	}
	t.Cleanup(func() {
		for _, s := range f.order {
			s.close()
		}
		f.bus.Close()
		db.Close()
	})
	return f
}

func (f *fleet) create(t *testing.T, on, agent, text string) string {
	t.Helper()
	req := runner.CreateRequest{Agent: agent}
	if text != "" {
		req.Message = &runner.Message{Text: text}
	}
	v, err := f.servers[on].run.CreateSession(context.Background(), "me", req)
	if err != nil {
		t.Fatal(err)
	}
	return v.Meta.ID
}

// wait waits through a server until the session has no run.
func (f *fleet) wait(t *testing.T, on, id string) runner.View {
	t.Helper()
	v, err := f.servers[on].run.GetSession(context.Background(), "me", id, true, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if v.Meta.Status == session.StatusRunning {
		t.Fatalf("session %s still running", id)
	}
	return v
}

// holder says which server holds the session's lease.
func (f *fleet) holder(t *testing.T, id string) string {
	t.Helper()
	l, err := f.db.GetLease(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l.Holder
}

// commands counts the commands of a kind the servers exchanged, and how
// many of them are finished.
func (f *fleet) commands(t *testing.T, kind string) (all, finished int) {
	t.Helper()
	raw, err := sql.Open("sqlite", f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.QueryRow(`SELECT count(*), count(done) FROM commands WHERE kind = ?`, kind).Scan(&all, &finished); err != nil {
		t.Fatal(err)
	}
	return all, finished
}

// forwarded fails the test unless exactly one command of the kind went
// to the holder and was finished.
func (f *fleet) forwarded(t *testing.T, kind string) {
	t.Helper()
	if all, finished := f.commands(t, kind); all != 1 || finished != 1 {
		t.Fatalf("%s commands: %d, %d of them finished; want one, finished", kind, all, finished)
	}
}

// userTurns counts the session's user turns with text, in their own
// text or in the mail folded into them.
func userTurns(v runner.View, text string) int {
	n := 0
	for _, t := range v.Turns {
		if t.User == nil {
			continue
		}
		if strings.Contains(t.User.Text, text) {
			n++
		}
		for _, m := range t.User.Mail {
			if strings.Contains(m.Body.Text, text) {
				n++
			}
		}
	}
	return n
}

func lastText(v runner.View) string {
	for i := len(v.Turns) - 1; i >= 0; i-- {
		if t := v.Turns[i]; t.LLM != nil {
			return t.LLM.Text
		}
	}
	return ""
}

func TestAMessagePostedThroughAnotherServerRunsOnTheHolder(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	id := f.create(t, "a", "bench", "")
	meta, mailID, err := f.servers["b"].run.PostMessage(ctx, "me", id, runner.Message{Text: "through b"}, runner.RunOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ID != id || mailID != "" || meta.Status != session.StatusRunning {
		t.Fatalf("post through b: %+v, mail %q", meta, mailID)
	}
	v := f.wait(t, "b", id)
	if n := userTurns(v, "through b"); n != 1 || lastText(v) != "done" || v.Meta.Status != session.StatusReady {
		t.Fatalf("after the run, read through b: %d posts, answer %q, status %s", n, lastText(v), v.Meta.Status)
	}
	if h := f.holder(t, id); h != "a" {
		t.Fatalf("the session moved to %s", h)
	}
	f.forwarded(t, "post_message")
	// The holder's memory has the turn the command stored.
	if v := f.wait(t, "a", id); userTurns(v, "through b") != 1 {
		t.Fatalf("the holder sees %d posts", userTurns(v, "through b"))
	}
	// An answer the holder refuses comes back as it is.
	_, _, err = f.servers["b"].run.PostMessage(ctx, "someone else", id, runner.Message{Text: "not mine"}, runner.RunOptions{}, nil)
	if errs.CodeOf(err) != "unknown_session" {
		t.Fatalf("another owner's post: %v", err)
	}
	// And so does one the accepting server refuses before asking.
	_, _, err = f.servers["b"].run.PostMessage(ctx, "me", id, runner.Message{Text: " "}, runner.RunOptions{}, nil)
	if errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("an empty post: %v", err)
	}
}

func TestPostAndWaitThroughAnotherServer(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	id := f.create(t, "a", "bench", "hello")
	f.wait(t, "a", id)
	p, err := f.servers["b"].run.PostMessageWait(context.Background(), "me", id, runner.Message{Text: "wait for me"}, runner.RunOptions{}, nil, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.View.Meta.Status != session.StatusReady || len(p.View.Turns) != 2 || p.View.Turns[0].User.Text != "wait for me" || p.View.Turns[1].LLM.Text != "done" {
		t.Fatalf("post and wait through b: %s, %d turns from %d", p.View.Meta.Status, len(p.View.Turns), p.View.FirstTurn)
	}
	f.forwarded(t, "post_message")
}

func TestMailThroughAnotherServerIsDeliveredOnce(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	id := f.create(t, "a", "bench", "hello")
	f.wait(t, "a", id)
	m, err := f.servers["b"].run.SendMail(ctx, "me", id, runner.Mail{Body: session.MailBody{Kind: session.MailUserMessage, Text: "mail through b"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID == "" || m.SessionID != id {
		t.Fatalf("mail: %+v", m)
	}
	v := f.wait(t, "b", id)
	if n := userTurns(v, "mail through b"); n != 1 {
		t.Fatalf("the mail was folded %d times", n)
	}
	list, err := f.servers["b"].run.ListMail(ctx, "me", id, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != m.ID || list[0].Delivered == nil {
		t.Fatalf("mail listed through b: %+v", list)
	}
	f.forwarded(t, "send_mail")
}

func TestCancelThroughAnotherServerAnswersOnceTheRunStopped(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	id := f.create(t, "a", "bench", "hello")
	f.wait(t, "a", id)
	hold := f.model.HoldAfter(1)
	defer hold.Release()
	if _, _, err := f.servers["a"].run.PostMessage(ctx, "me", id, runner.Message{Text: "a long one"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	<-hold.Held()
	meta, err := f.servers["b"].run.CancelRun(ctx, "me", id)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Status != session.StatusReady || meta.StatusReason != runner.StopCancelled {
		t.Fatalf("cancel through b answered %s (%s)", meta.Status, meta.StatusReason)
	}
	if m, err := f.db.GetMeta(ctx, id); err != nil || m.Status != session.StatusReady {
		t.Fatalf("stored after the cancel: %+v, %v", m, err)
	}
	f.forwarded(t, "cancel_run")
}

func TestPauseAndResumeThroughAnotherServer(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	id := f.create(t, "a", "bench", "hello")
	f.wait(t, "a", id)
	hold := f.model.HoldAfter(1)
	defer hold.Release()
	if _, _, err := f.servers["a"].run.PostMessage(ctx, "me", id, runner.Message{Text: "tool please"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	<-hold.Held()
	if meta, err := f.servers["b"].run.Pause(ctx, "me", id); err != nil || meta.Status != session.StatusRunning {
		t.Fatalf("pause through b: %+v, %v", meta, err)
	}
	hold.Release()
	// The step in flight ends, with its tool call, and the run stops.
	v := f.wait(t, "b", id)
	if v.Meta.Status != session.StatusPaused {
		t.Fatalf("after the pause: %s (%s)", v.Meta.Status, v.Meta.StatusReason)
	}
	meta, err := f.servers["b"].run.Resume(ctx, "me", id, map[string]string{"unused": "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if meta.Status != session.StatusRunning {
		t.Fatalf("resume through b answered %s", meta.Status)
	}
	v = f.wait(t, "b", id)
	if v.Meta.Status != session.StatusReady || lastText(v) != "done" {
		t.Fatalf("after the resume: %s, %q", v.Meta.Status, lastText(v))
	}
	// The params crossed in the command; the store keeps them no longer.
	f.forwarded(t, "pause")
	f.forwarded(t, "resume")
	raw, err := sql.Open("sqlite", f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var body string
	if err := raw.QueryRow(`SELECT body FROM commands WHERE kind = 'resume'`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	if body != "" {
		t.Fatalf("the resume command's body after it was applied: %q", body)
	}
}

func TestApprovalThroughAnotherServerRunsTheCallOnce(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	id := f.create(t, "a", "guard", "tool please")
	v := f.wait(t, "b", id)
	if v.Meta.Status != session.StatusWaiting || len(v.Deferred) != 1 {
		t.Fatalf("read through b before the approval: %s, %d deferred", v.Meta.Status, len(v.Deferred))
	}
	token := v.Deferred[0].Token
	meta, remaining, err := f.servers["b"].run.CompleteCall(ctx, "me", token, runner.CallAnswer{Approval: &runner.ApprovalAnswer{Approve: true}}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if remaining != 0 || meta.Status != session.StatusRunning {
		t.Fatalf("approval through b: %s, %d remaining", meta.Status, remaining)
	}
	v = f.wait(t, "b", id)
	results := 0
	for _, turn := range v.Turns {
		if turn.User != nil {
			results += len(turn.User.ToolResults)
		}
	}
	if v.Meta.Status != session.StatusReady || results != 1 || lastText(v) != "done" {
		t.Fatalf("after the approval: %s, %d results, %q", v.Meta.Status, results, lastText(v))
	}
	// A second answer is refused as on the holder.
	_, _, err = f.servers["b"].run.CompleteCall(ctx, "me", token, runner.CallAnswer{Approval: &runner.ApprovalAnswer{Approve: true}}, true, nil)
	if errs.CodeOf(err) != "call_completed" {
		t.Fatalf("a second approval: %v", err)
	}
	if all, finished := f.commands(t, "complete_call"); all != 2 || finished != 2 {
		t.Fatalf("complete_call commands: %d, %d finished", all, finished)
	}
}

func TestCancelAttachedThroughAnotherServerSettlesTheApproval(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	id := f.create(t, "a", "guard", "tool please")
	if v := f.wait(t, "a", id); v.Meta.Status != session.StatusWaiting {
		t.Fatalf("before: %s", v.Meta.Status)
	}
	_, n, err := f.servers["b"].run.CancelAttached(ctx, "me", id)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("cancelled %d calls through b, want the approval", n)
	}
	v := f.wait(t, "b", id)
	if v.Meta.Status != session.StatusReady || lastText(v) != "done" {
		t.Fatalf("after: %s, %q", v.Meta.Status, lastText(v))
	}
	f.forwarded(t, "cancel_attached")
}

func TestAnInterruptThroughAnotherServerCutsTheStepOnTheHolder(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	f.model.Hang(1)
	id := f.create(t, "a", "bench", "hello")
	if _, err := f.model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	_, mailID, err := f.servers["b"].run.PostMessage(ctx, "me", id, runner.Message{Text: "stop that", Interrupt: true}, runner.RunOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mailID == "" {
		t.Fatal("an interrupt during a run did not become mail")
	}
	v := f.wait(t, "b", id)
	if n := userTurns(v, "stop that"); n != 1 || v.Meta.Status != session.StatusReady {
		t.Fatalf("after the interrupt: %s, the message folded %d times", v.Meta.Status, n)
	}
	if len(v.Turns) < 2 || v.Turns[1].LLM == nil || !v.Turns[1].LLM.Interrupted {
		t.Fatalf("the step in flight was not cut: %+v", v.Turns[1])
	}
}

func TestWatchThroughAnotherServerReachesTheTargetsHolder(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	watcher := f.create(t, "a", "bench", "")
	target := f.create(t, "a", "bench", "")
	if _, err := f.servers["b"].run.WatchSession(ctx, "me", watcher, target, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.servers["a"].run.PostMessage(ctx, "me", target, runner.Message{Text: "go"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	f.wait(t, "a", target)
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := f.wait(t, "a", watcher)
		if n := userTurns(v, "session "+target); n == 1 && lastText(v) == "done" {
			break
		} else if n > 1 || time.Now().After(deadline) {
			t.Fatalf("the watcher got %d reports of the target's run", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Ended through b, the watch is gone from the holder's index too.
	if err := f.servers["b"].run.UnwatchSession(ctx, "me", watcher, target); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.servers["a"].run.PostMessage(ctx, "me", target, runner.Message{Text: "again"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	f.wait(t, "a", target)
	if mail, err := f.db.ListMail(ctx, watcher, false); err != nil || len(mail) != 1 {
		t.Fatalf("the watcher's mail after the unwatch: %d, %v", len(mail), err)
	}
	f.forwarded(t, "watch_session")
	f.forwarded(t, "unwatch_session")
}

func TestAServerTakingATargetTakesItsWatches(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	a, b := f.servers["a"], f.servers["b"]
	watcher := f.create(t, "b", "bench", "")
	target := f.create(t, "b", "bench", "")
	if _, err := b.run.WatchSession(ctx, "me", watcher, target, time.Hour); err != nil {
		t.Fatal(err)
	}
	// b dies; a takes the target once b's lease is over, and with it
	// the watch that b put.
	b.close()
	a.ahead.Store(int64(2 * time.Minute))
	if _, _, err := a.run.PostMessage(ctx, "me", target, runner.Message{Text: "go"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	f.wait(t, "a", target)
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := f.wait(t, "a", watcher)
		if n := userTurns(v, "session "+target); n == 1 && lastText(v) == "done" {
			break
		} else if n > 1 || time.Now().After(deadline) {
			t.Fatalf("the watcher got %d reports of the target's run", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestDeleteThroughAnotherServerStopsTheRunOnTheHolder(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	hold := f.model.HoldAfter(1)
	defer hold.Release()
	id := f.create(t, "a", "bench", "hello")
	<-hold.Held()
	deleted, err := f.servers["b"].run.DeleteSession(ctx, "me", id, runner.DeleteSingle)
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0] != id {
		t.Fatalf("deleted %v", deleted)
	}
	if f.servers["a"].run.ActiveRuns() != 0 {
		t.Fatal("the holder still runs the deleted session")
	}
	for _, s := range []string{"a", "b"} {
		if _, err := f.servers[s].run.GetSession(ctx, "me", id, false, 0); errs.KindOf(err) != errs.KindNotFound {
			t.Fatalf("read through %s after the delete: %v", s, err)
		}
	}
	f.forwarded(t, "delete_session")
}

func TestForkThroughAnotherServer(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	id := f.create(t, "a", "bench", "hello")
	f.wait(t, "a", id)
	v, err := f.servers["b"].run.ForkSession(context.Background(), "me", id, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if v.Meta.ForkedFrom != id || len(v.Turns) != 2 || v.Turns[1].LLM.Text != "done" {
		t.Fatalf("fork through b: %+v, %d turns", v.Meta, len(v.Turns))
	}
	f.forwarded(t, "fork_session")
	if h := f.holder(t, v.Meta.ID); h != "a" {
		t.Fatalf("the fork is held by %s, not by the source's holder", h)
	}
}

func TestAnIdempotentPostRetriedThroughAThirdServerGetsTheFirstAnswer(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b", "c")
	ctx := context.Background()
	id := f.create(t, "a", "bench", "hello")
	f.wait(t, "a", id)
	opts := runner.RunOptions{IdempotencyKey: "k1", Hold: true}
	first, _, err := f.servers["b"].run.PostMessage(ctx, "me", id, runner.Message{Text: "once only"}, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := f.servers["c"].run.PostMessage(ctx, "me", id, runner.Message{Text: "once only"}, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.TurnCount != first.TurnCount {
		t.Fatalf("the retry answered %d turns, the first post %d", again.TurnCount, first.TurnCount)
	}
	_, _, err = f.servers["c"].run.PostMessage(ctx, "me", id, runner.Message{Text: "another"}, opts, nil)
	if errs.CodeOf(err) != "idempotency_key_reused" {
		t.Fatalf("the key with another message: %v", err)
	}
	if v := f.wait(t, "c", id); userTurns(v, "once only") != 1 {
		t.Fatalf("the post was stored %d times", userTurns(v, "once only"))
	}
	if all, _ := f.commands(t, "post_message"); all != 3 {
		t.Fatalf("%d post commands, want 3", all)
	}
}

func TestACommandIsNotAppliedTwiceWhenItsHolderDiesBeforeFinishingIt(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	id := f.create(t, "a", "bench", "")
	a, b := f.servers["a"], f.servers["b"]
	a.store.dying.Store(true)
	type answer struct {
		meta session.Meta
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		meta, _, err := b.run.PostMessage(ctx, "me", id, runner.Message{Text: "exactly once"}, runner.RunOptions{Hold: true}, nil)
		answered <- answer{meta, err}
	}()
	// a applied the post and dies before it could say so; its lease
	// expires (b's clock goes past it), and b takes the session.
	<-a.store.unwitten
	a.close()
	b.ahead.Store(int64(2 * time.Minute))
	got := <-answered
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.meta.TurnCount != 1 {
		t.Fatalf("the post answered %d turns", got.meta.TurnCount)
	}
	if h := f.holder(t, id); h != "b" {
		t.Fatalf("the session is held by %s", h)
	}
	v, err := b.run.GetSession(ctx, "me", id, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := userTurns(v, "exactly once"); n != 1 || len(v.Turns) != 1 {
		t.Fatalf("the post was stored %d times (%d turns)", n, len(v.Turns))
	}
	f.forwarded(t, "post_message")
}

// relay hands the events of one server's hub to another's, as the
// cluster's event feed does between servers.
func relay(t *testing.T, from, to *events.Hub) {
	sub, _ := from.Subscribe(events.AllScope(), nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range sub.C() {
			ev = proto.Clone(ev).(*agentsv1.Event)
			if ev.GetDeltaSeq() != 0 {
				to.PublishDelta(ev)
				continue
			}
			body, _ := proto.Marshal(ev)
			_, _ = to.PublishEncoded(ev, body) // out of order: b's own events come first
		}
	}()
	t.Cleanup(func() {
		sub.Close()
		<-done
	})
}

func TestGetSessionOnAnotherServerShowsTheStepInFlight(t *testing.T) {
	t.Parallel()
	f := newFleet(t, "a", "b")
	ctx := context.Background()
	a, b := f.servers["a"], f.servers["b"]
	relay(t, a.hub, b.hub)
	hold := f.model.HoldAfter(2)
	defer hold.Release()
	id := f.create(t, "a", "bench", "stream please")
	<-hold.Held()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, err := b.run.GetSession(ctx, "me", id, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if v.Meta.Status != session.StatusRunning {
			t.Fatalf("status %s during the step", v.Meta.Status)
		}
		if p := v.InProgress; p != nil && p.Text == "one two " {
			if p.TurnIndex != 1 {
				t.Fatalf("the step in flight is at turn %d", p.TurnIndex)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("in progress through b: %+v", v.InProgress)
		}
		time.Sleep(10 * time.Millisecond)
	}
	hold.Release()
	v := f.wait(t, "b", id)
	if lastText(v) != "one two three four" || v.InProgress != nil {
		t.Fatalf("after the step: %q, in progress %+v", lastText(v), v.InProgress)
	}
	if h := f.holder(t, id); h != "a" {
		t.Fatalf("a read moved the session to %s", h)
	}
}
