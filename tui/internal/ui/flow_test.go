package ui

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/msgs"
)

// recorder runs the shell in a program and keeps the last frame it drew
// as plain text: the terminal stream only carries what changed between
// frames, the frame is what a person sees.
type recorder struct {
	*Model
	mu    *sync.Mutex
	frame *string
	raw   *string // the frame with its escape sequences, when not nil
}

func (r recorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := r.Model.Update(msg)
	return r, cmd
}

func (r recorder) View() tea.View {
	v := r.Model.View()
	r.mu.Lock()
	*r.frame = ansi.Strip(v.Content)
	if r.raw != nil {
		*r.raw = v.Content
	}
	r.mu.Unlock()
	return v
}

// flow is a running shell over a fake server, its events followed as
// Run follows them.
type flow struct {
	t   *testing.T
	tm  *teatest.TestModel
	f   *fakeServer
	rec recorder
}

func startFlow(t *testing.T, km *keys.Map, mod func(*Config)) *flow {
	t.Helper()
	f, c := newFakeServer(t)
	fixtures(f)
	m := newTestModel(t, c, km, mod)
	rec := recorder{Model: m, mu: &sync.Mutex{}, frame: new(string)}
	tm := teatest.NewTestModel(t, rec, teatest.WithInitialTermSize(100, 30))
	go Forward(c.Subscribe(t.Context(), &agentsv1.SubscribeRequest{}), tm.Send)
	fl := &flow{t: t, tm: tm, f: f, rec: rec}
	fl.waitFor("connected", func(s string) bool { return strings.Contains(s, "● connected") })
	fl.waitFor("the list", func(s string) bool { return strings.Contains(s, "Plan the 2.0 release") })
	return fl
}

// waitFor waits until the frame on screen satisfies ok.
func (fl *flow) waitFor(what string, ok func(frame string) bool) string {
	fl.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		fl.rec.mu.Lock()
		frame := *fl.rec.frame
		fl.rec.mu.Unlock()
		if ok(frame) {
			return frame
		}
		if time.Now().After(deadline) {
			fl.t.Fatalf("waiting for %s; the screen shows:\n%s", what, frame)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (fl *flow) typeText(text string) {
	for _, r := range text {
		fl.tm.Send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (fl *flow) press(keys ...string) {
	for _, k := range keys {
		fl.tm.Send(keyPress(k))
	}
}

// quit quits and returns the shell as it ended.
func (fl *flow) quit() *Model {
	fl.t.Helper()
	fl.press("ctrl+c")
	return fl.tm.FinalModel(fl.t, teatest.WithFinalTimeout(5*time.Second)).(recorder).Model
}

func TestFlowOpenSessionFromTheList(t *testing.T) {
	fl := startFlow(t, nil, nil)
	// The newest root first; the third row is "Approve the deploy".
	fl.press("down", "down", "enter")
	fl.waitFor("the conversation", func(s string) bool {
		tabs, _, _ := strings.Cut(s, "\n")
		return strings.Contains(tabs, "› Approve the deploy")
	})
	fl.quit()
}

func TestFlowSessionCreatedByAnEventAppearsLive(t *testing.T) {
	fl := startFlow(t, nil, nil)
	meta := session(50, "Made elsewhere with curl", "coder", agentsv1.SessionStatus_SESSION_STATUS_READY, 0, "")
	fl.f.emit(&agentsv1.Event{SessionId: meta.GetId(), Body: &agentsv1.Event_SessionCreated{SessionCreated: &agentsv1.SessionCreated{Meta: meta}}})
	frame := fl.waitFor("the new session", func(s string) bool { return strings.Contains(s, "Made elsewhere with curl") })
	// It is the newest root, so it comes first.
	if first := rowAfterHeader(frame); !strings.Contains(first, "Made elsewhere with curl") {
		t.Errorf("first row is %q, want the new session", first)
	}
	fl.quit()
}

func TestFlowChildAppearsNestedUnderItsParent(t *testing.T) {
	fl := startFlow(t, nil, nil)
	child := session(60, "Child: check the licences", "researcher", agentsv1.SessionStatus_SESSION_STATUS_RUNNING, 1, id(7))
	fl.f.emit(&agentsv1.Event{SessionId: child.GetId(), Body: &agentsv1.Event_SessionCreated{SessionCreated: &agentsv1.SessionCreated{Meta: child}}})
	frame := fl.waitFor("the child", func(s string) bool { return strings.Contains(s, "└ Child: check the licences") })
	lines := strings.Split(frame, "\n")
	parent := indexOf(lines, "Fix the flaky upload test")
	if parent < 0 || !strings.Contains(lines[parent+1], "└ Child: check the licences") {
		t.Errorf("the child is not the row under its parent:\n%s", frame)
	}
	fl.quit()
}

func TestFlowQuitStopsOnlyRunningSessionsItStarted(t *testing.T) {
	fl := startFlow(t, nil, func(c *Config) { c.StopOnQuit = true })

	// A session this TUI creates, whose run then starts.
	fl.press("ctrl+n")
	fl.waitFor("the agent picker", func(s string) bool { return strings.Contains(s, "New session with which agent?") })
	fl.press("enter")
	fl.waitFor("the new session's composer", func(s string) bool { return strings.Contains(s, "Write a message") })
	// Nothing is stored before the first message.
	if n := fl.f.createdCount(); n != 0 {
		t.Fatalf("%d sessions created before the first message", n)
	}
	fl.typeText("hello")
	fl.press("enter")
	created := "c0000001-0000-0000-0000-000000000000"
	fl.waitFor("the new session", func(s string) bool {
		tabs, _, _ := strings.Cut(s, "\n")
		return strings.Contains(tabs, "› (untitled c0000001)")
	})
	fl.f.emit(&agentsv1.Event{SessionId: created, Body: &agentsv1.Event_RunStarted{RunStarted: &agentsv1.RunStarted{}}})
	// One it started a run in that has stopped since, and one running
	// that another client started.
	fl.tm.Send(msgs.Started{ID: id(2)})
	fl.press("esc", "esc") // the composer lets go, then the conversation
	fl.waitFor("the new session running", func(s string) bool {
		row := lineWith(s, "(untitled c0000001)")
		return strings.Contains(row, "●")
	})

	fl.quit()
	mail := fl.f.mailSent()
	if len(mail) != 1 || mail[0].GetSessionId() != created {
		t.Fatalf("mail sent to %v, want one StopRun to %s", recipients(mail), created)
	}
	if mail[0].GetBody().GetControl().GetStopRun() == nil {
		t.Errorf("mail body %v, want a StopRun", mail[0].GetBody())
	}
}

func TestFlowQuitLeavesRunsAloneWhenAttached(t *testing.T) {
	fl := startFlow(t, nil, nil)
	fl.tm.Send(msgs.Started{ID: id(1)}) // running
	fl.quit()
	if mail := fl.f.mailSent(); len(mail) != 0 {
		t.Fatalf("mail sent to %v, want none", recipients(mail))
	}
}

func TestFlowKeymapFileOverride(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keymap.json")
	if err := os.WriteFile(path, []byte(`{"next_tab": ["f2"], "down": ["n"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	km, err := keys.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	fl := startFlow(t, km, nil)
	fl.press("tab") // no longer switches
	fl.press("f2")
	fl.waitFor("the Agents tab", func(s string) bool { return strings.Contains(s, "System prompt") })
	fl.press("n")
	fl.waitFor("the second agent", func(s string) bool { return strings.Contains(s, "Breaks work into steps.") })
	m := fl.quit()
	if m.tab != agentsTab {
		t.Errorf("tab %d, want Agents: tab should no longer switch", m.tab)
	}
}

func TestFlowReconnectRefetches(t *testing.T) {
	fl := startFlow(t, nil, nil)
	fl.f.mu.Lock()
	fl.f.sessions = append([]*agentsv1.SessionMeta{session(70, "Created while away", "coder", agentsv1.SessionStatus_SESSION_STATUS_READY, 0, "")}, fl.f.sessions...)
	fl.f.mu.Unlock()
	fl.tm.Send(msgs.Conn{State: client.ConnState{Retry: time.Second}})
	fl.waitFor("the server away", func(s string) bool { return strings.Contains(s, "reconnecting in 1s") })
	fl.tm.Send(msgs.Conn{State: client.ConnState{Connected: true}})
	fl.waitFor("the session created while away", func(s string) bool { return strings.Contains(s, "Created while away") })
	fl.quit()
}

func rowAfterHeader(frame string) string {
	lines := strings.Split(frame, "\n")
	if i := indexOf(lines, "session"); i >= 0 && i+1 < len(lines) {
		return lines[i+1]
	}
	return ""
}

func indexOf(lines []string, sub string) int {
	for i, l := range lines {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

func lineWith(frame, sub string) string {
	lines := strings.Split(frame, "\n")
	if i := indexOf(lines, sub); i >= 0 {
		return lines[i]
	}
	return ""
}

func recipients(mail []*agentsv1.SendMailRequest) []string {
	var ids []string
	for _, m := range mail {
		ids = append(ids, m.GetSessionId())
	}
	return ids
}

// q is a letter where a text field has the keyboard (the search line, the
// composer) and quits everywhere else; the footer names the quit key that
// works where the focus is.
func TestFlowQQuitsWhereNoTextFieldHasTheKeyboard(t *testing.T) {
	fl := startFlow(t, nil, nil)
	footer := func(s string) string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		return lines[len(lines)-2]
	}
	frame := fl.waitFor("the list's keys", func(s string) bool { return strings.HasSuffix(strings.TrimSpace(footer(s)), "q quit") })
	fl.press("/")
	fl.typeText("q")
	frame = fl.waitFor("q typed in the search", func(s string) bool { return strings.Contains(s, "/ q") })
	if !strings.HasSuffix(strings.TrimSpace(footer(frame)), "ctrl+c quit") {
		t.Errorf("searching, the footer ends %q, want the quit key that is not a letter", footer(frame))
	}
	fl.press("backspace", "esc")
	// The third row is "Approve the deploy"; in its composer q is text.
	fl.press("down", "down", "enter")
	fl.waitFor("the conversation", func(s string) bool {
		tabs, _, _ := strings.Cut(s, "\n")
		return strings.Contains(tabs, "› Approve the deploy")
	})
	fl.press("i")
	fl.typeText("q")
	fl.waitFor("q typed in the composer", func(s string) bool { return strings.Contains(s, "│ q") })
	// On the transcript it quits.
	fl.press("esc")
	fl.waitFor("the transcript's keys", func(s string) bool { return strings.HasSuffix(strings.TrimSpace(footer(s)), "q quit") })
	fl.press("q")
	fl.tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
}
