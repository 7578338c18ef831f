package conversation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

// The composer edits as readline does: ctrl+a/e go to the start and end
// of the line, ctrl+k kills to its end, ctrl+w a word, ctrl+u the line.
// None of them reaches a session command.
func TestComposerKeepsTheReadlineKeys(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.typeText("hello world")
	r.keys("ctrl+a")
	r.typeText(">")
	r.keys("ctrl+e")
	r.typeText("<")
	if got := r.s.composer.ta.Value(); got != ">hello world<" {
		t.Fatalf("after ctrl+a and ctrl+e: %q, want >hello world<", got)
	}
	r.keys("ctrl+w")
	if got := r.s.composer.ta.Value(); got != ">hello " {
		t.Fatalf("after ctrl+w: %q, want the last word gone", got)
	}
	r.keys("ctrl+a", "ctrl+k")
	if got := r.s.composer.ta.Value(); got != "" {
		t.Fatalf("after ctrl+a ctrl+k: %q, want nothing", got)
	}
	r.typeText("again")
	r.keys("ctrl+u")
	if got := r.s.composer.ta.Value(); got != "" {
		t.Fatalf("after ctrl+u: %q, want nothing", got)
	}
	if r.s.picker != nil || r.s.export != nil || r.fake.hardCancels != 0 || r.s.focus != focusComposer {
		t.Errorf("an editing key ran a session command (picker %v, export %v, hard cancels %d, focus %d)",
			r.s.picker != nil, r.s.export != nil, r.fake.hardCancels, r.s.focus)
	}
}

// The session commands that had those keys are the transcript's.
func TestTranscriptLettersRunTheSessionCommands(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.keys("esc", "X")
	if r.fake.hardCancels != 1 {
		t.Errorf("X in the transcript: %d hard cancels, want 1", r.fake.hardCancels)
	}
	r.keys("c")
	if r.s.picker == nil {
		t.Errorf("c in the transcript opened no agent picker")
	}
	r.keys("esc", "e")
	if r.s.export == nil {
		t.Errorf("e in the transcript opened no export prompt")
	}
}

// A session opened from a list shows its transcript with the keys on
// it: a list's letters typed on do not land in the composer.
func TestOpenedSessionFocusesTheTranscript(t *testing.T) {
	t.Parallel()
	fake := &fakeServer{meta: &agentsv1.SessionMeta{Id: sid, Agent: "coder", Status: ready}, turns: fewTurns(), seq: 1}
	r := &rig{t: t, fake: fake, drafts: NewDrafts(fake)}
	r.s = New(fake, theme.New(true), keys.Default(), r.drafts, sid)
	r.open()
	if r.s.Focused() {
		t.Fatalf("focus %d, want the transcript", r.s.focus)
	}
	r.keys("i")
	if r.s.focus != focusComposer || r.s.composer.ta.Value() != "" {
		t.Errorf("i: focus %d, composer %q; want the composer, empty", r.s.focus, r.s.composer.ta.Value())
	}
}

// The footer's keys are those of the focused part: the transcript's
// never invite to write in a composer that does not have the keys.
func TestKeysFollowTheFocus(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	has := func(bs []key.Binding, k, desc string) bool {
		for _, b := range bs {
			if b.Help().Key == k && b.Help().Desc == desc {
				return true
			}
		}
		return false
	}
	if ks := r.s.Keys(); !has(ks, "enter", "send") || !has(ks, "esc", "transcript") {
		t.Errorf("composer keys %v, want enter send and esc transcript", helps(ks))
	}
	r.keys("esc")
	ks := r.s.Keys()
	for _, want := range [][2]string{{"i", "write"}, {"c", "continue with…"}, {"e", "export"}, {"X", "hard cancel"}} {
		if !has(ks, want[0], want[1]) {
			t.Errorf("transcript keys %v, want %s %s", helps(ks), want[0], want[1])
		}
	}
	if has(ks, "enter", "send") {
		t.Errorf("transcript keys %v offer to send", helps(ks))
	}
	if v := ansi.Strip(r.s.Render(80, 20)); strings.Contains(v, "Write a message") {
		t.Errorf("the transcript has the keys and the composer still says Write a message:\n%s", v)
	}
}

// The agent picker, opened from the transcript, goes back to it when
// cancelled, as export and compact do: a letter typed on is a command
// again, not text in the composer.
func TestCancelledPickerGoesBackToTheTranscript(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("esc", "c", "esc")
	if r.s.picker != nil || r.s.focus != focusView {
		t.Errorf("after esc: picker open %v, focus %d; want the transcript", r.s.picker != nil, r.s.focus)
	}
}

// The pending calls' footer names each key once with what it does, and
// while a rejection's reason is typed it offers only what works there.
func TestPendingKeysSayWhatTheyDo(t *testing.T) {
	t.Parallel()
	r := newRig(t, waiting, fewTurns()...)
	c := deferred("tok-1", "bash_deploy", `{}`)
	c.Reason = "approval"
	r.fake.calls = []*agentsv1.DeferredCall{c, deferred("tok-2", "ask_user", `{}`)}
	r.open()
	r.keys("ctrl+l")
	got := strings.Join(helps(r.s.Keys()), " · ")
	if !strings.Contains(got, "up/down move") || strings.Contains(got, "up up") {
		t.Errorf("panel keys %q, want up/down move", got)
	}
	r.keys("r")
	got = strings.Join(helps(r.s.Keys()), " · ")
	if !strings.Contains(got, "enter reject") || strings.Contains(got, "ctrl+d") {
		t.Errorf("keys while typing a reason %q, want enter reject and no ctrl+d (it does not fail the call there)", got)
	}
	r.keys("esc", "down")
	got = strings.Join(helps(r.s.Keys()), " · ")
	if !strings.Contains(got, "enter answer") || !strings.Contains(got, "up/down move") {
		t.Errorf("keys on a client call %q, want enter answer and up/down move", got)
	}
}

func helps(bs []key.Binding) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.Help().Key + " " + b.Help().Desc
	}
	return out
}

// Export asks where, offering a file in the working directory named
// after the session, and writes nowhere before enter; it never replaces
// a file, and says where it wrote.
func TestExportAsksWhereAndSaysWhereItWrote(t *testing.T) {
	r := newRig(t, ready, fewTurns()...).open()
	dir := t.TempDir()
	t.Chdir(dir)
	r.fake.exported = "# Fix the flaky test\n"
	r.keys("esc", "e")
	want := filepath.Join(dir, "fix-the-flaky-test-5e551011.md")
	if r.s.export == nil || r.s.export.in.Value() != want {
		t.Fatalf("export prompt %v, want one offering %s", r.s.export, want)
	}
	if v := ansi.Strip(r.s.Render(200, 20)); !strings.Contains(v, "export to: "+want) {
		t.Errorf("the prompt does not show the path:\n%s", v)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("wrote %v before enter", entries)
	}
	// The path is a text field: readline's ctrl+u clears it.
	other := filepath.Join(dir, "notes.md")
	r.keys("ctrl+u")
	r.typeText(other)
	r.keys("enter")
	got, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != r.fake.exported {
		t.Errorf("file = %q, want the export", got)
	}
	if st := r.lastStatus(); st.Err != nil || st.Text != "exported to "+other {
		t.Errorf("status = %+v, want it to name %s", st, other)
	}
	if r.s.export != nil || r.s.focus != focusView {
		t.Errorf("the prompt stayed open after the export")
	}
	// Again to the same file: refused, the prompt stays for another name.
	r.keys("e", "ctrl+u")
	r.typeText(other)
	r.keys("enter")
	if r.s.export == nil || !strings.Contains(r.s.export.err, "exists") {
		t.Fatalf("export over an existing file: prompt %v, want it open with an error", r.s.export)
	}
	r.keys("esc")
	if r.s.export != nil {
		t.Errorf("esc did not close the prompt")
	}
}

// A new session is stored by its first message, not before: the screen
// asks nothing of the server until then, then creates the session with
// the message and becomes its screen.
func TestUnbornSessionIsCreatedByItsFirstMessage(t *testing.T) {
	t.Parallel()
	fake := &fakeServer{}
	fake.agents = []*agentsv1.AgentDescriptor{{Slug: "coder"}, {Slug: "reviewer"}}
	r := &rig{t: t, fake: fake, drafts: NewDrafts(fake)}
	r.s = NewUnborn(fake, theme.New(true), keys.Default(), r.drafts, "coder")
	r.open()
	if r.s.focus != focusComposer {
		t.Errorf("focus %d, want the composer", r.s.focus)
	}
	if v := ansi.Strip(r.s.Render(100, 12)); !strings.Contains(v, "stored with its first message") {
		t.Errorf("the header does not say the session is not stored yet:\n%s", v)
	}
	// Controls of a run there is not have nothing to act on.
	r.keys("ctrl+p", "ctrl+x", "esc", "X", "e", "i")
	if len(fake.creates)+len(fake.gets)+fake.pauses+fake.cancels+fake.hardCancels != 0 || r.s.export != nil {
		t.Fatalf("the server was asked for something before the first message")
	}
	// Another agent before the first message: the session is with it.
	r.keys("esc", "c", "enter") // the picker starts on the first other agent
	r.typeText("hello")
	r.keys("enter")
	if len(fake.creates) != 1 {
		t.Fatalf("creates = %d, want 1", len(fake.creates))
	}
	if cr := fake.creates[0]; cr.GetAgent() != "reviewer" || cr.GetMessage().GetText() != "hello" {
		t.Errorf("created %v, want reviewer with hello", cr)
	}
	if r.s.SessionID() != sid {
		t.Errorf("screen id %q, want %s", r.s.SessionID(), sid)
	}
	var created, started bool
	for _, m := range r.out {
		switch m := m.(type) {
		case msgs.Created:
			created = m.ID == sid
		case msgs.Started:
			started = started || m.ID == sid
		}
	}
	if !created || !started {
		t.Errorf("created %v started %v, want the shell told both", created, started)
	}
	if len(fake.posts) != 0 {
		t.Errorf("the first message was posted again: %v", fake.posts)
	}
}

// Two new sessions of one agent each become their own session.
func TestTwoUnbornSessionsOfOneAgentStayApart(t *testing.T) {
	t.Parallel()
	fake := &fakeServer{}
	drafts := NewDrafts(fake)
	one := NewUnborn(fake, theme.New(true), keys.Default(), drafts, "coder")
	two := NewUnborn(fake, theme.New(true), keys.Default(), drafts, "coder")
	r := &rig{t: t, fake: fake, drafts: drafts, s: one}
	r.typeText("first")
	cmd, _ := one.HandleKey(press("enter"))
	answer := cmd()
	two.Handle(answer)
	if !two.unborn() {
		t.Fatalf("the other new session took the answer: it is now %s", two.SessionID())
	}
	one.Handle(answer)
	if one.SessionID() != sid {
		t.Errorf("the new session is %q, want %s", one.SessionID(), sid)
	}
}

// A new session left unsent keeps what its composer held for the next
// new session of the agent, and stores nothing.
func TestUnbornSessionKeepsItsTextWhenLeft(t *testing.T) {
	t.Parallel()
	fake := &fakeServer{}
	drafts := NewDrafts(fake)
	r := &rig{t: t, fake: fake, drafts: drafts}
	r.s = NewUnborn(fake, theme.New(true), keys.Default(), drafts, "coder")
	r.open()
	r.typeText("half a thought")
	r.run(r.s.Close())
	if len(fake.creates) != 0 {
		t.Fatalf("leaving created %d sessions", len(fake.creates))
	}
	again := NewUnborn(fake, theme.New(true), keys.Default(), drafts, "coder")
	if got := again.composer.ta.Value(); got != "half a thought" {
		t.Errorf("the next new session's composer holds %q, want the text left", got)
	}
	if other := NewUnborn(fake, theme.New(true), keys.Default(), drafts, "reviewer"); other.composer.ta.Value() != "" {
		t.Errorf("another agent's new session got the text")
	}
}

// A draft panel left open closes once its draft was sent: nothing is
// left in it to edit.
func TestSentDraftClosesItsPanel(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...).open()
	r.typeText("and the docs")
	r.keys("enter", "ctrl+r")
	if !r.s.draftOpen {
		t.Fatalf("ctrl+r did not open the draft")
	}
	r.event(stopped(11, ready))
	if len(r.fake.posts) != 1 {
		t.Fatalf("posts = %d, want the draft sent", len(r.fake.posts))
	}
	r.send(tea.KeyPressMsg{}) // any message: the screen syncs after each
	if r.s.draftOpen || r.s.focus != focusComposer {
		t.Errorf("draft panel open %v, focus %d; want it closed, the composer focused", r.s.draftOpen, r.s.focus)
	}
}

// A draft sent now while the run goes on is stored as mail: the status
// line says when the model reads it, as for a message sent while busy.
func TestDraftSentAsMailSaysWhenItIsRead(t *testing.T) {
	t.Parallel()
	r := newRig(t, waiting, fewTurns()...).open()
	r.typeText("and the docs")
	r.keys("enter", "ctrl+s")
	if len(r.fake.posts) != 1 {
		t.Fatalf("posts = %d, want the draft sent", len(r.fake.posts))
	}
	if st := r.lastStatus(); !strings.Contains(st.Text, "next step") {
		t.Errorf("status %+v, want it to say the draft reaches the model at its next step", st)
	}
}
