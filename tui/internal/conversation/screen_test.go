package conversation

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

func TestOpenFetchesRecentTurnsAndAgents(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	if len(r.fake.gets) != 1 || r.fake.gets[0].GetLastTurns() != recentTurns {
		t.Fatalf("GetSession requests = %v, want one with last_turns=%d", r.fake.gets, recentTurns)
	}
	if len(r.s.agents) != 2 {
		t.Errorf("agents = %d, want 2", len(r.s.agents))
	}
	if r.s.tr.Count() != 4 {
		t.Errorf("transcript count = %d, want 4", r.s.tr.Count())
	}
}

func TestFailedLoadRetriesOnReconnect(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...)
	r.fake.getErr = connect.NewError(connect.CodeUnavailable, errors.New("connection refused"))
	r.open()
	if r.lastStatus().Err == nil {
		t.Fatalf("a failed load shows no error")
	}
	r.fake.getErr = nil
	r.send(msgs.Conn{State: client.ConnState{Connected: true}})
	if r.s.tr.Count() != 4 || r.s.status() != ready {
		t.Errorf("after reconnecting: %d turns, status %v; want the session loaded", r.s.tr.Count(), r.s.status())
	}
}

func TestSnapshotReloads(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.fake.turns = append(r.fake.turns, userTurn(4, "missed while away"))
	r.fake.meta.TurnCount, r.fake.meta.Status = 5, ready
	r.send(msgs.Snapshot{Snapshot: &agentsv1.Snapshot{Seq: 20}})
	if r.s.tr.Count() != 5 || r.s.status() != ready {
		t.Errorf("after a snapshot: %d turns, status %v; want the session fetched again", r.s.tr.Count(), r.s.status())
	}
}

func TestSendWhenIdlePosts(t *testing.T) {
	t.Parallel()
	for _, st := range []agentsv1.SessionStatus{ready, failed} {
		t.Run(st.String(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, st, fewTurns()...).open()
			r.typeText("hello")
			r.keys("enter")
			if len(r.fake.posts) != 1 {
				t.Fatalf("posts = %d, want 1", len(r.fake.posts))
			}
			p := r.fake.posts[0]
			if p.GetMessage().GetText() != "hello" || p.GetMessage().GetInterrupt() {
				t.Errorf("posted %v, want hello without interrupt", p.GetMessage())
			}
			if !r.sawStarted() {
				t.Errorf("no msgs.Started after a message that starts a run")
			}
			if !r.s.composer.Empty() {
				t.Errorf("composer still holds %q", r.s.composer.ta.Value())
			}
			if !r.drafts.Get(sid).Empty() {
				t.Errorf("draft = %q, want none", r.drafts.Get(sid).Text)
			}
		})
	}
}

func TestSendFailureKeepsTheText(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready).open()
	r.fake.postErr = connect.NewError(connect.CodeUnavailable, errors.New("gone"))
	r.typeText("hello")
	r.keys("enter")
	if got := r.s.composer.ta.Value(); got != "hello" {
		t.Errorf("composer = %q after a failed send, want the text back", got)
	}
	if r.lastStatus().Err == nil {
		t.Errorf("no error on the status line")
	}
}

func TestBusySendAppendsToTheDraft(t *testing.T) {
	t.Parallel()
	for _, st := range []agentsv1.SessionStatus{running, waiting, paused} {
		t.Run(st.String(), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, st, fewTurns()...).open()
			r.typeText("first thought")
			r.keys("enter")
			r.typeText("second thought")
			r.keys("enter")
			if len(r.fake.posts) != 0 {
				t.Fatalf("posted %v while busy, want a draft", r.fake.posts)
			}
			if got, want := r.drafts.Get(sid).Text, "first thought\n\nsecond thought"; got != want {
				t.Errorf("draft = %q, want %q", got, want)
			}
		})
	}
}

func TestDraftEditInItsEditor(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.drafts.Append(sid, "rename the flag", nil)
	r.keys("ctrl+r")
	if !r.s.draftOpen || r.s.focus != focusDraft {
		t.Fatalf("ctrl+r did not open the draft editor")
	}
	r.typeText(" too")
	r.keys("enter")
	if len(r.fake.posts) != 0 {
		t.Fatalf("enter in the draft editor posted %v, want a new line", r.fake.posts)
	}
	r.keys("backspace")
	if got, want := r.drafts.Get(sid).Text, "rename the flag too"; got != want {
		t.Errorf("draft = %q, want %q", got, want)
	}
	r.keys("esc")
	if r.s.draftOpen || r.s.focus != focusComposer {
		t.Errorf("esc left the editor open (focus %d)", r.s.focus)
	}
	// Appending while the editor is open shows in it.
	r.keys("ctrl+r")
	r.typeText("x")
	r.keys("esc")
	r.typeText("more")
	r.keys("enter")
	r.keys("ctrl+r")
	if got, want := r.s.draftEditor.Value(), "rename the flag toox\n\nmore"; got != want {
		t.Errorf("editor = %q, want %q", got, want)
	}
}

func TestDraftSendNow(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.drafts.Append(sid, "also check the timeout", nil)
	r.keys("ctrl+s")
	if len(r.fake.posts) != 1 {
		t.Fatalf("posts = %d, want 1", len(r.fake.posts))
	}
	m := r.fake.posts[0].GetMessage()
	if m.GetText() != "also check the timeout" || m.GetInterrupt() {
		t.Errorf("sent %v, want the draft without interrupt", m)
	}
	if !r.drafts.Get(sid).Empty() {
		t.Errorf("draft kept after send now: %q", r.drafts.Get(sid).Text)
	}
}

func TestDraftPostedWholeWhenTheRunStops(t *testing.T) {
	t.Parallel()
	for _, end := range []struct {
		name string
		ev   *agentsv1.Event
	}{
		{"ready", stopped(11, ready)},
		{"failed", ev(11, &agentsv1.SessionFailed{Reason: "model error", Code: "model_error"})},
	} {
		t.Run(end.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, running, fewTurns()...).open()
			r.typeText("one")
			r.keys("enter")
			r.typeText("two")
			r.keys("enter")
			r.event(end.ev)
			if len(r.fake.posts) != 1 {
				t.Fatalf("posts = %d, want the draft posted once", len(r.fake.posts))
			}
			if got := r.fake.posts[0].GetMessage().GetText(); got != "one\n\ntwo" {
				t.Errorf("posted %q, want the whole draft", got)
			}
			if !r.drafts.Get(sid).Empty() {
				t.Errorf("draft kept after it was posted")
			}
			// The session.updated that follows must not post again.
			r.event(ev(12, &agentsv1.SessionUpdated{Meta: &agentsv1.SessionMeta{Id: sid, Status: ready}}))
			if len(r.fake.posts) != 1 {
				t.Errorf("posts = %d after a second stop signal, want 1", len(r.fake.posts))
			}
		})
	}
}

func TestDraftKeptWhilePausedOrWaiting(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.typeText("later")
	r.keys("enter")
	r.event(stopped(11, paused))
	r.event(stopped(12, waiting))
	if len(r.fake.posts) != 0 {
		t.Fatalf("posted %v, want the draft kept", r.fake.posts)
	}
	if r.s.status() != waiting {
		t.Errorf("status = %v, want waiting from the event", r.s.status())
	}
	r.event(ev(13, &agentsv1.RunStarted{Trigger: agentsv1.RunTrigger_RUN_TRIGGER_RESUME}))
	r.event(stopped(14, ready))
	if len(r.fake.posts) != 1 || r.fake.posts[0].GetMessage().GetText() != "later" {
		t.Errorf("posts = %v, want the draft once the run stopped ready", r.fake.posts)
	}
}

func TestInterruptBypassesTheDraft(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.drafts.Append(sid, "draft text", nil)
	r.typeText("stop, wrong file")
	r.keys("ctrl+g")
	if len(r.fake.posts) != 1 {
		t.Fatalf("posts = %d, want 1", len(r.fake.posts))
	}
	m := r.fake.posts[0].GetMessage()
	if m.GetText() != "stop, wrong file" || !m.GetInterrupt() {
		t.Errorf("sent %v, want the composer's text with interrupt", m)
	}
	if got := r.drafts.Get(sid).Text; got != "draft text" {
		t.Errorf("draft = %q, want it untouched", got)
	}
}

func TestEmptyInterruptStopsTheRun(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.keys("ctrl+g")
	if r.fake.cancels != 1 || len(r.fake.posts) != 0 {
		t.Errorf("cancels = %d, posts = %d; want the run stopped and nothing posted", r.fake.cancels, len(r.fake.posts))
	}
}

func TestDraftPostedWhenTheScreenIsClosed(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.typeText("one more thing")
	r.keys("enter")
	r.typeText("half written")
	r.run(r.s.Close())
	// The screen is gone: only the drafts see the event now.
	post := r.drafts.Handle(msgs.Event{Event: stopped(11, ready)})
	if post == nil {
		t.Fatalf("the run stopped and the draft was not posted")
	}
	r.drafts.Handle(post())
	if cmd := r.drafts.Handle(msgs.Event{Event: stopped(11, ready)}); cmd != nil {
		t.Errorf("a second stop posts again")
	}
	if len(r.fake.posts) != 1 || r.fake.posts[0].GetMessage().GetText() != "one more thing" {
		t.Fatalf("posts = %v, want the draft posted with the screen closed", r.fake.posts)
	}
	// Coming back finds the composer as it was left.
	again := New(r.s.c, theme.New(true), r.s.km, r.drafts, sid)
	if got := again.composer.ta.Value(); got != "half written" {
		t.Errorf("composer = %q on return, want what was left in it", got)
	}
}

func TestFailedDraftPostComesBack(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.drafts.Append(sid, "first", nil)
	r.fake.postErr = connect.NewError(connect.CodeUnavailable, errors.New("gone"))
	r.event(stopped(11, ready))
	if got := r.drafts.Get(sid).Text; got != "first" {
		t.Errorf("draft = %q after a failed post, want it back", got)
	}
	if r.lastStatus().Err == nil {
		t.Errorf("no error on the status line")
	}
}

func TestLoadPostsADraftWhoseRunEndedUnseen(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...)
	r.drafts.Append(sid, "queued while away", nil)
	r.open()
	if len(r.fake.posts) != 1 {
		t.Errorf("posts = %d, want the draft posted once the load shows the session ready", len(r.fake.posts))
	}
}

func TestPendingAnswerFailAndSelect(t *testing.T) {
	t.Parallel()
	r := newRig(t, waiting, fewTurns()...)
	r.fake.calls = []*agentsv1.DeferredCall{
		deferred("tok-1", "read_clipboard", `{}`),
		deferred("tok-2", "ask_user", `{"question":"Which branch?"}`),
	}
	r.open()
	r.keys("ctrl+l", "down", "enter")
	r.typeText("main")
	r.keys("enter")
	if len(r.fake.completes) != 1 {
		t.Fatalf("completes = %d, want 1", len(r.fake.completes))
	}
	c := r.fake.completes[0]
	if c.GetToken() != "tok-2" || c.GetText() != "main" || c.GetResume() {
		t.Errorf("completed %v, want tok-2 with text main and no resume (one call left)", c)
	}
	if r.s.pending.Len() != 1 {
		t.Fatalf("pending = %d, want 1", r.s.pending.Len())
	}
	r.keys("ctrl+d")
	if len(r.fake.completes) != 2 {
		t.Fatalf("completes = %d, want 2", len(r.fake.completes))
	}
	c = r.fake.completes[1]
	if c.GetToken() != "tok-1" || c.GetError() == "" || !c.GetResume() {
		t.Errorf("completed %v, want tok-1 failed and resume (the last call)", c)
	}
	if r.s.pending.Len() != 0 || r.s.focus != focusComposer {
		t.Errorf("pending = %d, focus %d; want none left and the composer focused", r.s.pending.Len(), r.s.focus)
	}
}

func TestPendingApprovalApproveRejectAndAlwaysAllow(t *testing.T) {
	t.Parallel()
	approval := func(token, name, args string) *agentsv1.DeferredCall {
		c := deferred(token, name, args)
		c.Reason = "approval"
		c.Call.Kind, c.Call.Mode = agentsv1.ToolKind_TOOL_KIND_BASH, agentsv1.CallMode_CALL_MODE_DEFERRED
		return c
	}
	r := newRig(t, waiting, fewTurns()...)
	r.fake.calls = []*agentsv1.DeferredCall{
		approval("tok-1", "bash_run", `{"command":"rm -rf build"}`),
		approval("tok-2", "bash_run", `{"command":"sudo reboot"}`),
		approval("tok-3", "bash_deploy", `{}`),
	}
	r.open()
	r.keys("ctrl+l")
	view := ansi.Strip(r.s.pending.Render(100, true, r.s.st))
	if !strings.Contains(view, "approve? bash_run") || !strings.Contains(view, "rm -rf build") || !strings.Contains(view, "a approve") {
		t.Errorf("panel = %q, want the approval shown with its tool, arguments and keys", view)
	}
	// Typing does not answer an approval with text.
	r.typeText("x")
	if r.s.pending.answering || len(r.fake.completes) != 0 {
		t.Fatalf("typing on an approval: answering %v, completes %d; want neither", r.s.pending.answering, len(r.fake.completes))
	}

	var said []string
	r.keys("a")
	said = append(said, r.lastStatus().Text)
	r.keys("r")
	r.typeText("not today")
	r.keys("enter")
	said = append(said, r.lastStatus().Text)
	r.keys("A")
	said = append(said, r.lastStatus().Text)
	// The status says what the answer did, not only that one was given.
	if want := []string{"call approved; 2 more to go", "call rejected; 1 more to go", "call approved, and bash_deploy's later calls in this session"}; !reflect.DeepEqual(said, want) {
		t.Errorf("status lines %q, want %q", said, want)
	}
	if len(r.fake.completes) != 3 {
		t.Fatalf("completes = %d, want 3", len(r.fake.completes))
	}
	want := []struct {
		token           string
		approve, always bool
		reason          string
	}{{"tok-1", true, false, ""}, {"tok-2", false, false, "not today"}, {"tok-3", true, true, ""}}
	for i, w := range want {
		c := r.fake.completes[i]
		a := c.GetApproval()
		if c.GetToken() != w.token || a == nil || a.GetApprove() != w.approve || a.GetAlways() != w.always || a.GetReason() != w.reason {
			t.Errorf("answer %d = %v, want %+v", i, c, w)
		}
	}
	if r.s.pending.Len() != 0 {
		t.Errorf("pending = %d, want none left", r.s.pending.Len())
	}
}

func TestPendingAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	r := newRig(t, waiting, fewTurns()...)
	r.fake.calls = []*agentsv1.DeferredCall{deferred("tok-1", "a", `{}`), deferred("tok-2", "b", `{}`)}
	r.open()
	r.keys("ctrl+l")

	// Another client answers the first call: the summary's count drops
	// and the list is fetched again.
	r.fake.calls = r.fake.calls[1:]
	r.event(ev(11, &agentsv1.SessionUpdated{Meta: &agentsv1.SessionMeta{Id: sid, Status: waiting, PendingCalls: 1}}))
	if r.s.pending.Len() != 1 || r.s.pending.Selected().GetToken() != "tok-2" {
		t.Fatalf("pending = %v, want tok-2 alone", r.s.pending.calls)
	}
	if last := r.fake.gets[len(r.fake.gets)-1]; !last.GetMetaOnly() {
		t.Errorf("refetch = %v, want meta only", last)
	}

	// Answering a call someone else answered meanwhile shows the error
	// and keeps going.
	r.fake.complErr = connect.NewError(connect.CodeFailedPrecondition, errors.New("call already completed"))
	r.fake.calls = nil
	r.keys("enter")
	r.typeText("late")
	r.keys("enter")
	if st := r.lastStatus(); st.Err == nil || !strings.Contains(st.Err.Error(), "already completed") {
		t.Errorf("status = %v, want the late answer's error", st)
	}
	if r.s.pending.Len() != 0 {
		t.Errorf("pending = %d, want the refetched (empty) list", r.s.pending.Len())
	}

	// New calls deferred by a later round arrive as an event.
	r.event(ev(12, &agentsv1.CallsDeferred{Calls: []*agentsv1.DeferredCall{deferred("tok-3", "c", `{}`)}}))
	if r.s.pending.Len() != 1 {
		t.Errorf("pending = %d, want the deferred call", r.s.pending.Len())
	}
}

func TestForkAtTheSelectedTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("esc", "[", "[")
	if sel := r.s.tr.Selected(); sel != 2 {
		t.Fatalf("selected = %d, want turn 2", sel)
	}
	r.keys("ctrl+f")
	if len(r.fake.forks) != 1 {
		t.Fatalf("forks = %d, want 1", len(r.fake.forks))
	}
	f := r.fake.forks[0]
	if f.AtTurn == nil || f.GetAtTurn() != 1 || f.GetAgent() != "" {
		t.Errorf("fork = %v, want at_turn 1 (newest first) and the same agent", f)
	}
	if !r.opened("f0f0f0f0-fork") {
		t.Errorf("the fork did not open")
	}
}

func TestContinueWithAnotherAgent(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("esc", "c")
	if r.s.picker == nil {
		t.Fatalf("no agent picker")
	}
	r.keys("enter")
	if len(r.fake.forks) != 1 {
		t.Fatalf("forks = %d, want 1", len(r.fake.forks))
	}
	f := r.fake.forks[0]
	if f.AtTurn != nil || f.GetAgent() != "reviewer" {
		t.Errorf("fork = %v, want the head with agent reviewer", f)
	}
	if !r.opened("f0f0f0f0-fork") {
		t.Errorf("the new session did not open")
	}
}

func TestPagingOlderTurns(t *testing.T) {
	t.Parallel()
	var turns []*agentsv1.Turn
	for i := range 250 {
		if i%2 == 0 {
			turns = append(turns, userTurn(i, "question"))
		} else {
			turns = append(turns, llmTurn(i, "answer"))
		}
	}
	r := newRig(t, ready, turns...).open()
	if r.s.tr.FirstIndex() != 50 {
		t.Fatalf("first index = %d, want 50", r.s.tr.FirstIndex())
	}
	r.s.Render(80, 24)
	for range 1000 {
		r.keys("pgup")
		if r.s.tr.FirstIndex() == 0 {
			break
		}
	}
	if r.s.tr.FirstIndex() != 0 {
		t.Fatalf("first index = %d after scrolling to the top, want 0", r.s.tr.FirstIndex())
	}
	var older *agentsv1.GetSessionRequest
	for _, g := range r.fake.gets {
		if g.BeforeTurn != nil {
			older = g
		}
	}
	if older == nil || older.GetBeforeTurn() != 50 || older.GetLastTurns() != olderPage {
		t.Errorf("page request = %v, want before_turn 50 and last_turns %d", older, olderPage)
	}
	if r.s.offset == 0 {
		t.Errorf("offset = 0 after the page arrived, want the view kept where it was")
	}
}

func TestEventsAtOrBeforeTheFetchedPositionAreDropped(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...)
	r.fake.live = &agentsv1.TurnInProgress{TurnIndex: 4, Text: "Looking at"}
	// Events that arrive while the fetch is on its way: the first is in
	// what it returns (seq 10), the second is not.
	r.event(ev(9, &agentsv1.TextDelta{Text: " DUPLICATE", TurnIndex: 4}))
	late := ev(10, &agentsv1.TextDelta{Text: " the log", TurnIndex: 4})
	late.DeltaSeq = 1
	r.event(late)
	r.open()
	text := ansi.Strip(strings.Join(r.s.tr.Lines(80), "\n"))
	if strings.Contains(text, "DUPLICATE") {
		t.Errorf("an event before the fetched position was applied:\n%s", text)
	}
	if !strings.Contains(text, "Looking at the log") {
		t.Errorf("the partial turn and the event after it are missing:\n%s", text)
	}
}

// A delta's delta_seq names the server that numbered it in its high
// bits: GetSession answered by one server and a delta streamed by
// another at the same seq cannot be ordered, and the delta may be text
// the turn in progress has already. It is dropped (a hole until the turn
// is stored), never shown twice; the next seq places it.
func TestADeltaOfAnotherServerAtTheFetchedSeqIsDropped(t *testing.T) {
	t.Parallel()
	const a, b = 3 << 33, 7 << 33
	r := newRig(t, running, fewTurns()...)
	r.fake.deltaSeq = a | 5
	r.fake.live = &agentsv1.TurnInProgress{TurnIndex: 4, Text: "Looking at"}
	r.open()
	other := ev(10, &agentsv1.TextDelta{Text: " DUPLICATE", TurnIndex: 4})
	other.DeltaSeq = b | 9
	r.event(other)
	same := ev(10, &agentsv1.TextDelta{Text: " the log", TurnIndex: 4})
	same.DeltaSeq = a | 6
	r.event(same)
	later := ev(11, &agentsv1.TextDelta{Text: " now", TurnIndex: 4})
	later.DeltaSeq = b | 10
	r.event(later)
	text := ansi.Strip(strings.Join(r.s.tr.Lines(80), "\n"))
	if strings.Contains(text, "DUPLICATE") {
		t.Errorf("a delta of another server at the fetched seq was applied:\n%s", text)
	}
	if !strings.Contains(text, "Looking at the log now") {
		t.Errorf("the partial turn and the deltas placed after it are missing:\n%s", text)
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.keys("ctrl+p")
	if r.fake.pauses != 1 {
		t.Fatalf("pauses = %d, want 1", r.fake.pauses)
	}
	// Paused is what the server says, not what the key did.
	if r.s.status() != running {
		t.Errorf("status = %v before the server said paused", r.s.status())
	}
	r.event(stopped(11, paused))
	r.keys("ctrl+p")
	if r.fake.resumes != 1 {
		t.Errorf("resumes = %d, want 1", r.fake.resumes)
	}
}

func TestOpenChildOfAHelperCallInFlight(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.event(ev(11, &agentsv1.SubcallStarted{ChildSessionId: "child-1", Agent: "helper", CallId: "c1", Depth: 1}))
	r.keys("esc", "o")
	if !r.opened("child-1") {
		t.Errorf("the helper's session did not open")
	}
}

func TestCopyTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("esc", "[", "y")
	if r.lastStatus().Text != "copied turn 4" {
		t.Errorf("status = %+v, want copied turn 4", r.lastStatus())
	}
}

func TestAttachments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	png := filepath.Join(dir, "shot.png")
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\nrest"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("ctrl+t")
	r.typeText(filepath.Join(dir, "sh"))
	r.keys("tab")
	if got := r.s.attach.in.Value(); got != png {
		t.Fatalf("completed to %q, want %q", got, png)
	}
	r.keys("enter")
	if r.s.attach != nil || len(r.s.composer.atts) != 1 {
		t.Fatalf("attachment not added: prompt %v, chips %d", r.s.attach, len(r.s.composer.atts))
	}
	r.typeText("see the screenshot")
	r.keys("enter")
	if len(r.fake.posts) != 1 {
		t.Fatalf("posts = %d, want 1", len(r.fake.posts))
	}
	atts := r.fake.posts[0].GetMessage().GetAttachments()
	if len(atts) != 1 || atts[0].GetName() != "shot.png" || atts[0].GetMediaType() != "image/png" || len(atts[0].GetData()) != 12 {
		t.Errorf("attachments = %v, want shot.png as image/png with its bytes", atts)
	}

	// A chip goes with backspace on an empty composer.
	r.s.composer.Attach(&agentsv1.Attachment{Name: "x.txt"})
	r.keys("backspace")
	if len(r.s.composer.atts) != 0 {
		t.Errorf("chips = %d after backspace, want 0", len(r.s.composer.atts))
	}
}

// A file name is anyone's to choose (a tool's, say): completing and
// attaching one shows it without the escape sequences it holds.
func TestAttachShowsFileNamesCleaned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"evil\x1b]52;c;eA==\x07.txt", "evil\x1bPqdcs\x1b\\.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("ctrl+t")
	r.typeText(filepath.Join(dir, "ev"))
	r.keys("tab")
	if len(r.s.attach.candidates) != 2 {
		t.Fatalf("candidates %q, want both files", r.s.attach.candidates)
	}
	frame := r.s.Render(100, 30)
	r.s.composer.Attach(&agentsv1.Attachment{Name: "chip\x1b]52;c;eA==\x07.txt"})
	r.keys("esc")
	frame += r.s.Render(100, 30)
	for _, bad := range []string{"]52;", "\x1bP", "\a"} {
		if strings.Contains(frame, bad) {
			t.Errorf("the screen shows %q of a file name:\n%q", bad, frame)
		}
	}
}

func TestMediaType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		data string
		want string
	}{
		{"a.png", "", "image/png"},
		{"a.JPG", "", "image/jpeg"},
		{"notes.txt", "", "text/plain"},
		{"noext", "plain words", "text/plain"},
	} {
		if got := mediaType(tc.name, []byte(tc.data)); got != tc.want {
			t.Errorf("mediaType(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestEscLeavesTheScreenOnlyWithNothingToClose(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	if _, used := r.s.HandleKey(press("esc")); !used {
		t.Errorf("esc in the composer was not used (it should blur it)")
	}
	if r.s.Focused() {
		t.Errorf("still focused after esc")
	}
	if _, used := r.s.HandleKey(press("esc")); used {
		t.Errorf("esc with nothing to close was used; the shell should get it")
	}
}

func (r *rig) sawStarted() bool {
	for _, m := range r.out {
		if s, ok := m.(msgs.Started); ok && s.ID == sid {
			return true
		}
	}
	return false
}

func (r *rig) opened(id string) bool {
	for _, m := range r.out {
		if o, ok := m.(msgs.OpenSession); ok && o.ID == id {
			return true
		}
	}
	return false
}

// t shows the runs as a waterfall in place of the transcript; t again or
// esc brings the transcript back.
func TestTimelineKeyShowsTheRuns(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("esc")
	// t: the timeline, redrawn each second while it shows (the tick is
	// not run here: it would tick for ever).
	timeline := func() tea.Cmd {
		t.Helper()
		cmd, ok := r.s.HandleKey(press("t"))
		if !ok {
			t.Fatal("t was not the screen's")
		}
		return cmd
	}
	if timeline() == nil {
		t.Fatal("showing the timeline asks for no redraw")
	}
	frame := ansi.Strip(r.s.Render(100, 30))
	for _, want := range []string{"timeline of the loaded turns · t or esc: the transcript", "run 1 · ", "run 2 · ", "  test-model "} {
		if !strings.Contains(frame, want) {
			t.Errorf("timeline frame lacks %q:\n%s", want, frame)
		}
	}
	if strings.Contains(frame, "races the server's shutdown") {
		t.Errorf("the transcript shows beside the timeline:\n%s", frame)
	}
	if cmd := r.s.Handle(timelineTickMsg{id: r.s.id}); cmd == nil {
		t.Errorf("a tick while the timeline shows asks for no next one")
	}
	r.keys("esc")
	if frame := ansi.Strip(r.s.Render(100, 30)); !strings.Contains(frame, "races the server's shutdown") {
		t.Errorf("esc did not bring the transcript back:\n%s", frame)
	}
	if cmd := r.s.Handle(timelineTickMsg{id: r.s.id}); cmd != nil {
		t.Errorf("a tick once the timeline is gone asks for another")
	}
	timeline()
	if timeline() != nil {
		t.Errorf("hiding the timeline asks for a redraw")
	}
	if frame := ansi.Strip(r.s.Render(100, 30)); strings.Contains(frame, "timeline of the loaded turns") {
		t.Errorf("t twice leaves the timeline:\n%s", frame)
	}
}

// The timeline nests under a helper call the steps of the runs its
// helper session made, fetched while the timeline shows: again on a tick
// while the helper runs, not once it has stopped.
func TestTimelineNestsTheHelpersRuns(t *testing.T) {
	t.Parallel()
	const child = "4bcfb63d-f043-44c8-a01e-f07f1d609349"
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) *timestamppb.Timestamp { return timestamppb.New(t0.Add(time.Duration(s) * time.Second)) }
	ask := &agentsv1.Turn{Index: 1, CreateTime: at(1), Kind: &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{Model: "test-model", Duration: durationpb.New(time.Second),
		ToolCalls: []*agentsv1.ToolCall{{Id: "h1", Name: "prompt_agent_researcher", Kind: agentsv1.ToolKind_TOOL_KIND_HELPER}}}}}
	first := userTurn(0, "find out")
	first.CreateTime = at(0)
	r := newRig(t, agentsv1.SessionStatus_SESSION_STATUS_RUNNING, first, ask).open()
	helperRun := func(status agentsv1.SessionStatus, turns ...*agentsv1.Turn) {
		r.fake.mu.Lock()
		defer r.fake.mu.Unlock()
		r.fake.others = map[string]*agentsv1.Session{child: {Meta: &agentsv1.SessionMeta{Id: child, Status: status}, Turns: turns}}
	}
	question := userTurn(0, "what is the answer?")
	question.CreateTime = at(1)
	lookup := &agentsv1.Turn{Index: 1, CreateTime: at(2), Kind: &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{Model: "helper-model", Duration: durationpb.New(time.Second),
		Usage:     &agentsv1.Usage{PromptTokens: 1000, CompletionTokens: 200},
		ToolCalls: []*agentsv1.ToolCall{{Id: "c1", Name: "bash_lookup"}}}}}
	helperRun(agentsv1.SessionStatus_SESSION_STATUS_RUNNING, question, lookup)
	// The helper call runs: its session is known from subcall.started.
	r.s.Handle(msgs.Event{Event: &agentsv1.Event{SessionId: sid, Seq: 11, Body: &agentsv1.Event_SubcallStarted{SubcallStarted: &agentsv1.SubcallStarted{CallId: "h1", ChildSessionId: child, Agent: "researcher"}}}})

	r.keys("esc")
	// t shows the timeline and fetches the helper; the batch's redraw
	// tick, which waits a second, is left to run out on its own.
	show, _ := r.s.HandleKey(press("t"))
	before := len(r.fake.gets)
	for _, c := range show().(tea.BatchMsg) {
		done := make(chan tea.Msg, 1)
		go func() { done <- c() }()
		select {
		case m := <-done:
			r.run(func() tea.Msg { return m })
		case <-time.After(200 * time.Millisecond):
		}
	}
	if n := len(r.fake.gets) - before; n != 1 {
		t.Fatalf("showing the timeline fetched %d helper sessions, want 1", n)
	}
	fetch := func() int {
		t.Helper()
		before := len(r.fake.gets)
		r.run(r.s.fetchHelpers())
		return len(r.fake.gets) - before
	}
	frame := ansi.Strip(r.s.Render(120, 30))
	for _, want := range []string{"prompt_agent_rese", "    helper-model", "      bash_lookup", "1.2k tok"} {
		if !strings.Contains(frame, want) {
			t.Errorf("timeline lacks %q:\n%s", want, frame)
		}
	}
	if n := fetch(); n != 1 {
		t.Errorf("a tick while the helper runs fetched %d, want it again", n)
	}
	helperRun(agentsv1.SessionStatus_SESSION_STATUS_READY, question, lookup)
	fetch()
	if n := fetch(); n != 0 {
		t.Errorf("a tick after the helper stopped fetched %d, want none", n)
	}
}

// A run that waits for its pending calls goes on once they are answered:
// pause / resume says so rather than asking the server, which refuses.
func TestResumeWhileCallsWaitPointsAtThem(t *testing.T) {
	t.Parallel()
	r := newRig(t, waiting, fewTurns()...)
	r.fake.calls = []*agentsv1.DeferredCall{deferred("tok-1", "ask_user", `{}`)}
	r.open()
	r.keys("ctrl+p")
	if r.fake.resumes != 0 {
		t.Errorf("resumes = %d, want none while a call waits", r.fake.resumes)
	}
	if st := r.lastStatus(); st.Err != nil || !strings.Contains(st.Text, "ctrl+l") {
		t.Errorf("status %+v, want the key that answers the calls", st)
	}
}

// A refused control says what was refused, not what it would have done.
func TestRefusedResumeSaysItDidNotResume(t *testing.T) {
	t.Parallel()
	r := newRig(t, paused, fewTurns()...)
	r.fake.resumeErr = connect.NewError(connect.CodeFailedPrecondition, errors.New("not paused"))
	r.open()
	r.keys("ctrl+p")
	st := r.lastStatus()
	if st.Err == nil || strings.HasPrefix(st.Err.Error(), "resumed") || !strings.Contains(st.Err.Error(), "not paused") {
		t.Errorf("status %+v, want an error saying the resume failed", st)
	}
}

// Mail stored for the session (a draft sent while calls wait, another
// client's message during a run) shows in the header as it is accepted,
// not only at the next summary of the session.
func TestAcceptedMailShowsAsPending(t *testing.T) {
	t.Parallel()
	r := newRig(t, waiting, fewTurns()...).open()
	r.fake.meta = proto.CloneOf(r.fake.meta) // the server's, apart from the screen's
	r.fake.meta.PendingMail = 1
	r.event(ev(r.fake.seq+1, &agentsv1.MailAccepted{Envelope: &agentsv1.MailEnvelope{Id: "m1"}}))
	if h := ansi.Strip(r.s.renderHeader(100)); !strings.Contains(h, "1 mail pending") {
		t.Errorf("header %q, want 1 mail pending", h)
	}
}
