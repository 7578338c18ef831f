package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/eventually"
	"github.com/agents-os/agents/backend/internal/placement/leased"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/runner/modelfault"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/tools/fakellm"
)

// Issue 21, items 3 and 4: a session held by one server of a fleet (see
// cluster_test.go) is posted to, mailed, controlled, approved, watched,
// forked, deleted and read through the others; each request crosses as
// one command, applied once by the holder, and its answer is the
// holder's.

// crossRules answer "tool please" with a call of the tool, "stream
// please" with an answer in several pieces, "write a call please" with a
// call whose arguments come in several pieces, and anything else (a
// tool's result included) with "done".
var crossRules = fakellm.Rules{Rules: []fakellm.Rule{
	{Match: fakellm.Match{UserContains: "write a call please", LastIsToolResult: ptr(false)}, Reply: fakellm.Reply{
		ToolCalls: []fakellm.ToolCall{{ID: "call_written", Name: "bash_noop", Arguments: json.RawMessage(writtenArguments)}},
		ChunkSize: 4,
	}},
	{Match: fakellm.Match{UserContains: "tool please", LastIsToolResult: ptr(false)}, Reply: fakellm.Reply{
		ToolCalls: []fakellm.ToolCall{{Name: "bash_noop", Arguments: json.RawMessage(`{}`)}},
	}},
	{Match: fakellm.Match{UserContains: "stream please", LastIsToolResult: ptr(false)}, Reply: fakellm.Reply{
		Text: "one two three four", ChunkSize: 4,
	}},
	{Reply: fakellm.Reply{Text: "done"}},
}}

// writtenArguments are the arguments of the call "write a call please"
// asks for.
const writtenArguments = `{"note":"written in pieces of four"}`

// ledger records the commands the servers of a test add and finish.
type ledger struct {
	mu       sync.Mutex
	kinds    map[string]string // id → kind
	finished map[string]bool
}

// member is a server of a fleet that takes requests for sessions others
// hold: the database it sees records its commands, and it follows the
// others' events (the sequencer) and deltas (the relay) as a server of
// several does.
type member struct {
	*server
	db *ledgered
}

// ledgered is the database as a member sees it; with dying set, the
// member dies, for the store, as it is about to finish a command: the
// command was applied, its end is never written.
type ledgered struct {
	store.Store
	l         *ledger
	dying     atomic.Bool
	unwritten chan string
	// deaf hides the pending commands from the member, and what the
	// notifications that wake it carry of them (see hearing).
	deaf atomic.Bool
	// unlisted hides the pending commands from the member's list only.
	unlisted atomic.Bool
	// blind hides the sessions without a server from the member.
	blind atomic.Bool
}

func (s *ledgered) Orphans(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if s.blind.Load() {
		return nil, nil
	}
	return s.Store.Orphans(ctx, now, limit)
}

// hearing is the bus as a member hears it: while its database is deaf,
// a wake for commands comes without the command it may carry, so the
// member looks for them in the store, which hides them.
type hearing struct {
	cluster.Bus
	db *ledgered
}

func (b hearing) Listen(channel string, fn func(string)) func() {
	if channel != cluster.ChannelCommands {
		return b.Bus.Listen(channel, fn)
	}
	return b.Bus.Listen(channel, func(payload string) {
		if b.db.deaf.Load() {
			payload, _, _ = strings.Cut(payload, "\n")
		}
		fn(payload)
	})
}

func (s *ledgered) PendingCommands(ctx context.Context, holder string) ([]store.Command, error) {
	if s.deaf.Load() || s.unlisted.Load() {
		return nil, nil
	}
	return s.Store.PendingCommands(ctx, holder)
}

func (s *ledgered) AddCommand(ctx context.Context, c store.Command) error {
	err := s.Store.AddCommand(ctx, c)
	if err == nil {
		s.l.mu.Lock()
		s.l.kinds[c.ID] = c.Kind
		s.l.mu.Unlock()
	}
	return err
}

func (s *ledgered) FinishCommand(ctx context.Context, id, result string, at time.Time) (bool, error) {
	if s.dying.Load() {
		select {
		case s.unwritten <- id:
		default:
		}
		return false, errors.New("the server died")
	}
	ok, err := s.Store.FinishCommand(ctx, id, result, at)
	if ok {
		s.l.mu.Lock()
		s.l.finished[id] = true
		s.l.mu.Unlock()
	}
	return ok, err
}

// crashTTL is the lease of the fleets whose tests crash the holder of a
// session after another server forwarded it a command: long enough that
// a loaded machine renews it before it lapses, short enough that a
// survivor takes the session soon after the crash. With 500 ms, a renewal
// late under load let the other server take the session and apply the
// command itself, and a test waited for a forwarding that never came.
const crashTTL = 2 * time.Second

// awaitUnwritten waits until m applied a command and died before it could
// say so.
func awaitUnwritten(t *testing.T, m *member) {
	t.Helper()
	select {
	case <-m.db.unwritten:
	case <-time.After(time.Minute):
		t.Fatal("the holder applied no command within a minute: its lease lapsed first, and the other server applied it")
	}
}

// crossFleet starts the named members of a fleet sharing a ledger.
func crossFleet(t *testing.T, ttl time.Duration, names ...string) (*fleet, *ledger, map[string]*member) {
	t.Helper()
	f := newFleet(t, crossRules, ttl)
	l := &ledger{kinds: map[string]string{}, finished: map[string]bool{}}
	members := map[string]*member{}
	for _, name := range names {
		m := &member{}
		m.server = f.start(t, name, func(o *runner.Options) {
			m.db = &ledgered{Store: o.Store, l: l, unwritten: make(chan string, 1)}
			o.Store = m.db
			o.Placement = leased.New(leased.Options{Holder: name, LeaseTTL: f.ttl, Bus: hearing{Bus: f.bus, db: m.db}, Store: m.db})
			seq := cluster.NewSequencer(o.Hub, m.db, f.bus, cluster.SequencerOptions{Poll: 50 * time.Millisecond})
			relay, err := cluster.NewRelay(o.Hub, f.bus, name, nil)
			if err != nil {
				t.Fatal(err)
			}
			o.Publish, o.RelayDelta = seq.Committed, relay.Send
			// After the runner closed (cleanups run last first).
			t.Cleanup(func() {
				relay.Close()
				seq.Close()
			})
		})
		members[name] = m
	}
	return f, l, members
}

// commands returns the ids of the commands of a kind, and how many of
// them are finished.
func (l *ledger) commands(kind string) (ids []string, finished int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, k := range l.kinds {
		if k == kind {
			ids = append(ids, id)
			if l.finished[id] {
				finished++
			}
		}
	}
	return ids, finished
}

// forwarded fails the test unless exactly one command of the kind went
// to the holder and was finished.
func (l *ledger) forwarded(t *testing.T, kind string) {
	t.Helper()
	if ids, finished := l.commands(kind); len(ids) != 1 || finished != 1 {
		t.Fatalf("%s commands: %d, %d of them finished; want one, finished", kind, len(ids), finished)
	}
}

// mentions counts the user turns with text, in their own text or in the
// mail folded into them.
func mentions(v runner.View, text string) int {
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

// hold holds a member's next model call after n deltas.
func (m *member) hold(n int) *modelfault.Hold { return m.model.HoldAfter(n) }

func (m *member) createEmpty(t *testing.T, agent string) string {
	t.Helper()
	v, err := m.run.CreateSession(context.Background(), "me", runner.CreateRequest{Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	return v.Meta.ID
}

func TestAMessagePostedThroughAnotherServerRunsOnTheHolder(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	id := on["a"].createEmpty(t, "bench")
	meta, mailID, err := on["b"].run.PostMessage(ctx, "me", id, runner.Message{Text: "through b"}, runner.RunOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ID != id || mailID != "" || meta.Status != session.StatusRunning {
		t.Fatalf("post through b: %+v, mail %q", meta, mailID)
	}
	v := on["b"].wait(t, id)
	if n := mentions(v, "through b"); n != 1 || lastText(v) != "done" || v.Meta.Status != session.StatusReady {
		t.Fatalf("after the run, read through b: %d posts, answer %q, status %s", n, lastText(v), v.Meta.Status)
	}
	if h := f.holder(t, id); h != "a" {
		t.Fatalf("the session moved to %s", h)
	}
	l.forwarded(t, "post_message")
	// The holder's memory has the turn the command stored.
	if v := on["a"].wait(t, id); mentions(v, "through b") != 1 {
		t.Fatalf("the holder sees %d posts", mentions(v, "through b"))
	}
	// An answer the holder refuses comes back as it is.
	_, _, err = on["b"].run.PostMessage(ctx, "someone else", id, runner.Message{Text: "not mine"}, runner.RunOptions{}, nil)
	if errs.CodeOf(err) != "unknown_session" {
		t.Fatalf("another owner's post: %v", err)
	}
	// And so does one the accepting server refuses before asking.
	_, _, err = on["b"].run.PostMessage(ctx, "me", id, runner.Message{Text: " "}, runner.RunOptions{}, nil)
	if errs.KindOf(err) != errs.KindInvalid {
		t.Fatalf("an empty post: %v", err)
	}
}

func TestPostAndWaitThroughAnotherServer(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b")
	id := on["a"].create(t, "bench", "hello")
	on["a"].wait(t, id)
	p, err := on["b"].run.PostMessageWait(context.Background(), "me", id, runner.Message{Text: "wait for me"}, runner.RunOptions{}, nil, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.View.Meta.Status != session.StatusReady || len(p.View.Turns) != 2 || p.View.Turns[0].User.Text != "wait for me" || p.View.Turns[1].LLM.Text != "done" {
		t.Fatalf("post and wait through b: %s, %d turns from %d", p.View.Meta.Status, len(p.View.Turns), p.View.FirstTurn)
	}
	l.forwarded(t, "post_message")
}

func TestMailThroughAnotherServerIsDeliveredOnce(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	id := on["a"].create(t, "bench", "hello")
	on["a"].wait(t, id)
	m, err := on["b"].run.SendMail(ctx, "me", id, runner.Mail{Body: session.MailBody{Kind: session.MailUserMessage, Text: "mail through b"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID == "" || m.SessionID != id {
		t.Fatalf("mail: %+v", m)
	}
	v := on["b"].wait(t, id)
	if n := mentions(v, "mail through b"); n != 1 {
		t.Fatalf("the mail was folded %d times", n)
	}
	list, err := on["b"].run.ListMail(ctx, "me", id, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != m.ID || list[0].Delivered == nil {
		t.Fatalf("mail listed through b: %+v", list)
	}
	l.forwarded(t, "send_mail")
}

func TestCancelThroughAnotherServerAnswersOnceTheRunStopped(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	id := on["a"].create(t, "bench", "hello")
	on["a"].wait(t, id)
	hold := on["a"].hold(1)
	defer hold.Release()
	if _, _, err := on["a"].run.PostMessage(ctx, "me", id, runner.Message{Text: "a long one"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	<-hold.Held()
	meta, err := on["b"].run.CancelRun(ctx, "me", id)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Status != session.StatusReady || meta.StatusReason != runner.StopCancelled {
		t.Fatalf("cancel through b answered %s (%s)", meta.Status, meta.StatusReason)
	}
	if m, err := f.db.GetMeta(ctx, id); err != nil || m.Status != session.StatusReady {
		t.Fatalf("stored after the cancel: %+v, %v", m, err)
	}
	l.forwarded(t, "cancel_run")
}

func TestPauseAndResumeThroughAnotherServer(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	id := on["a"].create(t, "bench", "hello")
	on["a"].wait(t, id)
	hold := on["a"].hold(1)
	defer hold.Release()
	if _, _, err := on["a"].run.PostMessage(ctx, "me", id, runner.Message{Text: "tool please"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	<-hold.Held()
	if meta, err := on["b"].run.Pause(ctx, "me", id); err != nil || meta.Status != session.StatusRunning {
		t.Fatalf("pause through b: %+v, %v", meta, err)
	}
	hold.Release()
	// The step in flight ends, with its tool call, and the run stops.
	v := on["b"].wait(t, id)
	if v.Meta.Status != session.StatusPaused {
		t.Fatalf("after the pause: %s (%s)", v.Meta.Status, v.Meta.StatusReason)
	}
	meta, err := on["b"].run.Resume(ctx, "me", id, map[string]string{"unused": "secret"})
	if err != nil {
		t.Fatal(err)
	}
	if meta.Status != session.StatusRunning {
		t.Fatalf("resume through b answered %s", meta.Status)
	}
	v = on["b"].wait(t, id)
	if v.Meta.Status != session.StatusReady || lastText(v) != "done" {
		t.Fatalf("after the resume: %s, %q", v.Meta.Status, lastText(v))
	}
	// The params crossed in the command; the store keeps them no longer.
	l.forwarded(t, "pause")
	l.forwarded(t, "resume")
	ids, _ := l.commands("resume")
	c, err := f.db.GetCommand(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if c.Body != "" {
		t.Fatalf("the resume command's body after it was applied: %q", c.Body)
	}
}

func TestApprovalThroughAnotherServerRunsTheCallOnce(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	id := on["a"].create(t, "guard", "tool please")
	v := on["b"].wait(t, id)
	if v.Meta.Status != session.StatusWaiting || len(v.Deferred) != 1 {
		t.Fatalf("read through b before the approval: %s, %d deferred", v.Meta.Status, len(v.Deferred))
	}
	token := v.Deferred[0].Token
	meta, remaining, err := on["b"].run.CompleteCall(ctx, "me", token, runner.CallAnswer{Approval: &runner.ApprovalAnswer{Approve: true}}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if remaining != 0 || meta.Status != session.StatusRunning {
		t.Fatalf("approval through b: %s, %d remaining", meta.Status, remaining)
	}
	v = on["b"].wait(t, id)
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
	_, _, err = on["b"].run.CompleteCall(ctx, "me", token, runner.CallAnswer{Approval: &runner.ApprovalAnswer{Approve: true}}, true, nil)
	if errs.CodeOf(err) != "call_completed" {
		t.Fatalf("a second approval: %v", err)
	}
	if ids, finished := l.commands("complete_call"); len(ids) != 2 || finished != 2 {
		t.Fatalf("complete_call commands: %d, %d finished", len(ids), finished)
	}
}

func TestCancelAttachedThroughAnotherServerSettlesTheApproval(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	id := on["a"].create(t, "guard", "tool please")
	if v := on["a"].wait(t, id); v.Meta.Status != session.StatusWaiting {
		t.Fatalf("before: %s", v.Meta.Status)
	}
	_, n, err := on["b"].run.CancelAttached(ctx, "me", id)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("cancelled %d calls through b, want the approval", n)
	}
	v := on["b"].wait(t, id)
	if v.Meta.Status != session.StatusReady || lastText(v) != "done" {
		t.Fatalf("after: %s, %q", v.Meta.Status, lastText(v))
	}
	l.forwarded(t, "cancel_attached")
}

func TestAnInterruptThroughAnotherServerCutsTheStepOnTheHolder(t *testing.T) {
	t.Parallel()
	_, _, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	on["a"].model.Hang(1)
	id := on["a"].create(t, "bench", "hello")
	if _, err := on["a"].model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	_, mailID, err := on["b"].run.PostMessage(ctx, "me", id, runner.Message{Text: "stop that", Interrupt: true}, runner.RunOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if mailID == "" {
		t.Fatal("an interrupt during a run did not become mail")
	}
	v := on["b"].wait(t, id)
	if n := mentions(v, "stop that"); n != 1 || v.Meta.Status != session.StatusReady {
		t.Fatalf("after the interrupt: %s, the message folded %d times", v.Meta.Status, n)
	}
	if len(v.Turns) < 2 || v.Turns[1].LLM == nil || !v.Turns[1].LLM.Interrupted {
		t.Fatalf("the step in flight was not cut: %+v", v.Turns[1])
	}
}

func TestWatchThroughAnotherServerReachesTheTargetsHolder(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	watcher := on["a"].createEmpty(t, "bench")
	target := on["a"].createEmpty(t, "bench")
	if _, err := on["b"].run.WatchSession(ctx, "me", watcher, target, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, _, err := on["a"].run.PostMessage(ctx, "me", target, runner.Message{Text: "go"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	on["a"].wait(t, target)
	deadline := time.Now().Add(20 * time.Second)
	for {
		// The report wakes the watcher: a wait that ends between its
		// runs may find the next one starting, and simply looks again.
		v, err := on["a"].run.GetSession(ctx, "me", watcher, true, 20*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if n := mentions(v, "session "+target); n == 1 && lastText(v) == "done" && v.Meta.Status != session.StatusRunning {
			break
		} else if n > 1 || time.Now().After(deadline) {
			t.Fatalf("the watcher got %d reports of the target's run", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Ended through b, the watch is gone from the holder's index too.
	if err := on["b"].run.UnwatchSession(ctx, "me", watcher, target); err != nil {
		t.Fatal(err)
	}
	if _, _, err := on["a"].run.PostMessage(ctx, "me", target, runner.Message{Text: "again"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	on["a"].wait(t, target)
	if mail, err := f.db.ListMail(ctx, watcher, false); err != nil || len(mail) != 1 {
		t.Fatalf("the watcher's mail after the unwatch: %d, %v", len(mail), err)
	}
	l.forwarded(t, "watch_session")
	l.forwarded(t, "unwatch_session")
}

func TestDeleteThroughAnotherServerStopsTheRunOnTheHolder(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	hold := on["a"].hold(1)
	defer hold.Release()
	id := on["a"].create(t, "bench", "hello")
	<-hold.Held()
	deleted, err := on["b"].run.DeleteSession(ctx, "me", id, runner.DeleteSingle)
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0] != id {
		t.Fatalf("deleted %v", deleted)
	}
	if on["a"].run.ActiveRuns() != 0 {
		t.Fatal("the holder still runs the deleted session")
	}
	for _, s := range []string{"a", "b"} {
		if _, err := on[s].run.GetSession(ctx, "me", id, false, 0); errs.KindOf(err) != errs.KindNotFound {
			t.Fatalf("read through %s after the delete: %v", s, err)
		}
	}
	l.forwarded(t, "delete_session")
}

func TestForkThroughAnotherServer(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, time.Minute, "a", "b")
	id := on["a"].create(t, "bench", "hello")
	on["a"].wait(t, id)
	v, err := on["b"].run.ForkSession(context.Background(), "me", id, runner.ForkRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Meta.ForkedFrom != id || len(v.Turns) != 2 || v.Turns[1].LLM.Text != "done" {
		t.Fatalf("fork through b: %+v, %d turns", v.Meta, len(v.Turns))
	}
	l.forwarded(t, "fork_session")
	if h := f.holder(t, v.Meta.ID); h != "a" {
		t.Fatalf("the fork is held by %s, not by the source's holder", h)
	}
}

func TestRenameThroughAnotherServer(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b")
	id := on["a"].create(t, "bench", "hello")
	on["a"].wait(t, id)
	meta, err := on["b"].run.RenameSession(context.Background(), "me", id, " Weekly plan ")
	if err != nil || meta.Title != "Weekly plan" {
		t.Fatalf("rename through b: %+v, %v", meta, err)
	}
	l.forwarded(t, "rename_session")
	if v := on["a"].wait(t, id); v.Meta.Title != "Weekly plan" {
		t.Fatalf("the holder's title: %q", v.Meta.Title)
	}
}

func TestCompactThroughAnotherServer(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	id := on["a"].create(t, "bench", "hello")
	on["a"].wait(t, id)
	for _, text := range []string{"one", "two", "three"} {
		if _, _, err := on["a"].run.PostMessage(ctx, "me", id, runner.Message{Text: text}, runner.RunOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		on["a"].wait(t, id)
	}
	done, err := on["b"].run.Compact(ctx, "me", id, "keep the numbers")
	if err != nil || done.Turn == nil || done.Turn.Compaction == nil || done.Turn.Compaction.Instruction != "keep the numbers" {
		t.Fatalf("compact through b: %+v, %v", done, err)
	}
	l.forwarded(t, "compact_session")
	v := on["a"].wait(t, id)
	if last := v.Turns[len(v.Turns)-1]; last.Compaction == nil {
		t.Fatalf("the holder's last turn is %+v, want the compaction", last)
	}
}

func TestAnIdempotentPostRetriedThroughAThirdServerGetsTheFirstAnswer(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b", "c")
	ctx := context.Background()
	id := on["a"].create(t, "bench", "hello")
	on["a"].wait(t, id)
	opts := runner.RunOptions{IdempotencyKey: "k1", Hold: true}
	first, _, err := on["b"].run.PostMessage(ctx, "me", id, runner.Message{Text: "once only"}, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := on["c"].run.PostMessage(ctx, "me", id, runner.Message{Text: "once only"}, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.TurnCount != first.TurnCount {
		t.Fatalf("the retry answered %d turns, the first post %d", again.TurnCount, first.TurnCount)
	}
	_, _, err = on["c"].run.PostMessage(ctx, "me", id, runner.Message{Text: "another"}, opts, nil)
	if errs.CodeOf(err) != "idempotency_key_reused" {
		t.Fatalf("the key with another message: %v", err)
	}
	if v := on["c"].wait(t, id); mentions(v, "once only") != 1 {
		t.Fatalf("the post was stored %d times", mentions(v, "once only"))
	}
	if ids, _ := l.commands("post_message"); len(ids) != 3 {
		t.Fatalf("%d post commands, want 3", len(ids))
	}
}

func TestACommandIsNotAppliedTwiceWhenItsHolderDiesBeforeFinishingIt(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, crashTTL, "a", "b")
	ctx := context.Background()
	id := on["a"].createEmpty(t, "bench")
	a, b := on["a"], on["b"]
	a.db.dying.Store(true)
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
	// expires, and b takes the session.
	awaitUnwritten(t, a)
	a.crash()
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
	if n := mentions(v, "exactly once"); n != 1 || len(v.Turns) != 1 {
		t.Fatalf("the post was stored %d times (%d turns)", n, len(v.Turns))
	}
	l.forwarded(t, "post_message")
}

// A fork has no idempotency key; forwarded, its copy's id comes from the
// command, so the next holder applying it again finds the copy made.
func TestAForkIsNotMadeTwiceWhenItsHolderDiesBeforeFinishingIt(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, crashTTL, "a", "b")
	ctx := context.Background()
	a, b := on["a"], on["b"]
	id := a.create(t, "bench", "hello")
	a.wait(t, id)
	a.db.dying.Store(true)
	type answer struct {
		view runner.View
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		v, err := b.run.ForkSession(ctx, "me", id, runner.ForkRequest{})
		answered <- answer{v, err}
	}()
	awaitUnwritten(t, a)
	a.crash()
	got := <-answered
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.view.Meta.ForkedFrom != id || len(got.view.Turns) != 2 {
		t.Fatalf("the fork answered %+v", got.view.Meta)
	}
	list, _, err := f.db.ListSessions(ctx, store.ListFilter{Owner: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("%d sessions after one fork, want the source and its copy", len(list))
	}
	l.forwarded(t, "fork_session")
}

// A holder that lets a session go (a drain, a close) before it applied a
// command leaves it to the server that waits for its answer, which takes
// the session and applies it.
func TestACommandWhoseHolderLetsTheSessionGoIsAppliedByTheServerWaiting(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	a, b := on["a"], on["b"]
	id := a.createEmpty(t, "bench")
	a.db.deaf.Store(true)
	type answer struct {
		meta session.Meta
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		meta, _, err := b.run.PostMessage(ctx, "me", id, runner.Message{Text: "left behind"}, runner.RunOptions{Hold: true}, nil)
		answered <- answer{meta, err}
	}()
	eventually.That(t, "the command is stored", func() bool {
		ids, _ := l.commands("post_message")
		return len(ids) == 1
	})
	a.close()
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
	if v := b.wait(t, id); mentions(v, "left behind") != 1 || len(v.Turns) != 1 {
		t.Fatalf("the post was stored %d times", mentions(v, "left behind"))
	}
	l.forwarded(t, "post_message")
}

// Issue 33, item 4: a command whose holder and forwarding server both
// died, for a session that is idle, is applied by a server that is left,
// with no later request to bring it along: the look for sessions without
// a server finds a session with commands pending as it finds one with
// mail.
func TestACommandWhoseServersBothDiedIsAppliedByAServerLeft(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, crashTTL, "a", "b", "c")
	ctx := context.Background()
	a, b := on["a"], on["b"]
	id := a.createEmpty(t, "bench")
	a.db.deaf.Store(true)
	go func() {
		// b dies waiting: its answer is that it closes.
		_, _, _ = b.run.PostMessage(ctx, "me", id, runner.Message{Text: "stranded"}, runner.RunOptions{Hold: true}, nil)
	}()
	eventually.That(t, "the command is stored", func() bool {
		ids, _ := l.commands("post_message")
		return len(ids) == 1
	})
	b.crash()
	a.crash()
	// Read from the store: a read through c would load the session there,
	// and apply the command, by itself.
	eventually.That(t, "a server left applies the stranded post", func() bool {
		_, turns, err := f.db.LoadSession(ctx, id)
		return err == nil && userTurns(turns, "stranded") == 1
	})
	if h := f.holder(t, id); h != "c" {
		t.Fatalf("the session is held by %s", h)
	}
	// No one waits for the command's answer: it is marked finished after
	// the post it applied is stored.
	eventually.That(t, "the command is finished", func() bool {
		_, finished := l.commands("post_message")
		return finished == 1
	})
	l.forwarded(t, "post_message")
}

// Issue 33, item 4: a request that comes for a session whose commands
// wait for a server (their holder and forwarding server died) is applied
// after them, in the order they came, not before.
func TestARequestForASessionWithStrandedCommandsIsAppliedAfterThem(t *testing.T) {
	t.Parallel()
	f, l, on := crossFleet(t, crashTTL, "a", "b", "c")
	ctx := context.Background()
	a, b, c := on["a"], on["b"], on["c"]
	id := a.createEmpty(t, "bench")
	a.db.deaf.Store(true)
	// c takes the session up through the request only, not by looking
	// for sessions without a server first.
	c.db.blind.Store(true)
	go func() {
		_, _, _ = b.run.PostMessage(ctx, "me", id, runner.Message{Text: "first"}, runner.RunOptions{Hold: true}, nil)
	}()
	eventually.That(t, "the command is stored", func() bool {
		ids, _ := l.commands("post_message")
		return len(ids) == 1
	})
	b.crash()
	a.crash()
	eventually.That(t, "the dead holder's lease expires", func() bool {
		lease, err := f.db.GetLease(ctx, id)
		return err == nil && !lease.Live(time.Now())
	})
	if _, _, err := c.run.PostMessage(ctx, "me", id, runner.Message{Text: "second"}, runner.RunOptions{Hold: true}, nil); err != nil {
		t.Fatal(err)
	}
	eventually.That(t, "both posts are stored", func() bool {
		_, turns, err := f.db.LoadSession(ctx, id)
		return err == nil && userTurns(turns, "first") == 1 && userTurns(turns, "second") == 1
	})
	_, turns, err := f.db.LoadSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, turn := range turns {
		if turn.User != nil {
			order = append(order, turn.User.Text)
		}
	}
	if !reflect.DeepEqual(order, []string{"first", "second"}) {
		t.Fatalf("the posts are stored in the order %q, want first, second", order)
	}
}

func TestGetSessionOnAnotherServerShowsTheStepInFlight(t *testing.T) {
	t.Parallel()
	f, _, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	b := on["b"]
	// b sees a's deltas through the relay, as a browser on b would.
	hold := on["a"].hold(2)
	defer hold.Release()
	id := on["a"].create(t, "bench", "stream please")
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
	v := on["b"].wait(t, id)
	if lastText(v) != "one two three four" || v.InProgress != nil {
		t.Fatalf("after the step: %q, in progress %+v", lastText(v), v.InProgress)
	}
	if h := f.holder(t, id); h != "a" {
		t.Fatalf("a read moved the session to %s", h)
	}
}

// The tool calls the model is still writing are part of the step in
// flight: read through another server, they are what the holder shows,
// folded from the tool-call deltas the holder relays.
func TestGetSessionOnAnotherServerShowsTheToolCallsBeingWritten(t *testing.T) {
	t.Parallel()
	_, _, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	a, b := on["a"], on["b"]
	// The call's id and name, then three pieces of its arguments.
	hold := a.hold(4)
	defer hold.Release()
	id := a.create(t, "bench", "write a call please")
	<-hold.Held()
	local, err := a.run.GetSession(ctx, "me", id, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := local.InProgress
	if want == nil || len(want.ToolCalls) != 1 || want.ToolCalls[0].Arguments != writtenArguments[:12] {
		t.Fatalf("the holder's step in flight: %+v", want)
	}
	var read runner.View
	eventually.That(t, "b shows the call being written as a does", func() bool {
		if read, err = b.run.GetSession(ctx, "me", id, false, 0); err != nil {
			t.Fatal(err)
		}
		return read.InProgress != nil && reflect.DeepEqual(read.InProgress.ToolCalls, want.ToolCalls)
	})
	if read.InProgress.TurnIndex != want.TurnIndex {
		t.Fatalf("the step in flight is at turn %d through b, %d on a", read.InProgress.TurnIndex, want.TurnIndex)
	}
	// A client of b's that read the session subscribes after the
	// position b gave: the deltas that follow continue the arguments, no
	// piece missing or twice.
	sub, err := b.hub.SubscribeAt(ctx, events.SessionScope(id), &read.Position)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Mode() != events.ModeReplay {
		t.Fatalf("a subscription after b's position: %v", sub.Mode())
	}
	hold.Release()
	args := want.ToolCalls[0].Arguments
	timeout := time.After(20 * time.Second)
	for args != writtenArguments {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				t.Fatalf("b's subscription ended with the arguments at %q: %v", args, sub.Err())
			}
			if d := ev.GetToolCallDelta(); d != nil {
				if args += d.GetArguments(); !strings.HasPrefix(writtenArguments, args) {
					t.Fatalf("b streamed the arguments on as %q", args)
				}
			}
		case <-timeout:
			t.Fatalf("after 20s b streamed the arguments up to %q", args)
		}
	}
	v := b.wait(t, id)
	if calls := v.Turns[1].LLM.ToolCalls; len(calls) != 1 || calls[0].Arguments != writtenArguments || calls[0].ID != want.ToolCalls[0].ID {
		t.Fatalf("the stored calls: %+v", calls)
	}
}

// A command stored for a holder rides in the notification that wakes it
// (when it fits): the holder applies it without listing the commands
// pending for it. Here the list finds nothing, and the post is answered
// all the same, at once.
func TestACommandIsAppliedFromTheNotificationThatWakesItsHolder(t *testing.T) {
	t.Parallel()
	_, l, on := crossFleet(t, time.Minute, "a", "b")
	ctx := context.Background()
	a, b := on["a"], on["b"]
	id := a.createEmpty(t, "bench")
	a.db.unlisted.Store(true)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	meta, _, err := b.run.PostMessage(ctx, "me", id, runner.Message{Text: "carried"}, runner.RunOptions{Hold: true}, nil)
	if err != nil {
		t.Fatalf("the post through b: %v", err)
	}
	if meta.TurnCount != 1 {
		t.Fatalf("the post answered %d turns, want 1", meta.TurnCount)
	}
	if v := a.wait(t, id); mentions(v, "carried") != 1 {
		t.Fatalf("the post was stored %d times, want once", mentions(v, "carried"))
	}
	l.forwarded(t, "post_message")
}
