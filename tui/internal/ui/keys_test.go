package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// footer is the line above the status bar of the frame m draws.
func footer(t *testing.T, m *Model) string {
	t.Helper()
	lines := strings.Split(ansi.Strip(view(t, m)), "\n")
	if len(lines) < 2 {
		t.Fatalf("a frame of %d lines", len(lines))
	}
	return lines[len(lines)-2]
}

// The footer shows the keys of what has the keyboard, lazygit-style.
func TestFooterShowsTheKeysOfTheFocus(t *testing.T) {
	m, _ := started(t, 120, 30)
	if f := footer(t, m); !strings.Contains(f, "enter open") || !strings.Contains(f, "/ search") || !strings.Contains(f, "ctrl+n new session") {
		t.Errorf("Chats footer %q, want its keys", f)
	}
	press(m, "enter") // a conversation, its transcript focused
	f := footer(t, m)
	for _, want := range []string{"i write", "c continue with…", "e export"} {
		if !strings.Contains(f, want) {
			t.Errorf("transcript footer %q, want %q", f, want)
		}
	}
	if frame := ansi.Strip(view(t, m)); strings.Contains(frame, "Write a message") || strings.Contains(f, "enter send") {
		t.Errorf("the transcript has the keys and the screen invites to write:\n%s", frame)
	}
	press(m, "i")
	if f := footer(t, m); !strings.Contains(f, "enter send") || !strings.Contains(f, "esc transcript") {
		t.Errorf("composer footer %q, want enter send and esc transcript", f)
	}
	press(m, "ctrl+o")
	if f := footer(t, m); !strings.Contains(f, "enter open") || !strings.Contains(f, "esc cancel") {
		t.Errorf("open-by-id footer %q, want its keys", f)
	}
}

// ctrl+o takes the start of an id, as the CLI does; when it names no
// session, or several, the screen stays where it was and says why.
func TestOpenByIDTakesAPrefixAndStaysPutWhenItFails(t *testing.T) {
	m, _ := started(t, 100, 30)
	press(m, "ctrl+o")
	typeText(m, "00000007")
	press(m, "enter")
	if top := m.top(); top == nil || top.SessionID() != id(7) {
		t.Fatalf("ctrl+o 00000007 opened %v, want %s", top, id(7))
	}
	press(m, "ctrl+o")
	typeText(m, "ffff")
	press(m, "enter")
	if top := m.top(); top == nil || top.SessionID() != id(7) || len(m.screens) != 1 {
		t.Fatalf("a prefix of no id left the screen it was on (%d screens)", len(m.screens))
	}
	if m.status.Err == nil || !strings.Contains(m.status.Err.Error(), `no session id starts with "ffff"`) {
		t.Errorf("status %+v, want it to say no id starts so", m.status)
	}
	press(m, "ctrl+o")
	typeText(m, "0000000")
	press(m, "enter")
	if len(m.screens) != 1 || m.status.Err == nil || !strings.Contains(m.status.Err.Error(), "is the start of 9 session ids") {
		t.Errorf("an ambiguous prefix: %d screens, status %+v", len(m.screens), m.status)
	}
	// Once a session opens, the error of the try before it goes.
	press(m, "ctrl+o")
	typeText(m, "00000003")
	press(m, "enter")
	if top := m.top(); top == nil || top.SessionID() != id(3) || m.status.Err != nil {
		t.Errorf("after opening %s: status %+v, want the last error gone", id(3), m.status)
	}
}

// History lists each sub-session right under its parent, whatever their
// ages, not under the row before it.
func TestHistoryNestsChildrenUnderTheirParent(t *testing.T) {
	m, _ := started(t, 100, 30)
	press(m, "tab", "tab")
	lines := strings.Split(ansi.Strip(view(t, m)), "\n")
	parent := indexOf(lines, "Plan the 2.0 release")
	if parent < 0 {
		t.Fatalf("no parent row:\n%s", strings.Join(lines, "\n"))
	}
	for i, want := range []string{"└ Child: summarise issue 42", "└ Child: survey the release notes", "  └ Grandchild: read the changelog"} {
		if !strings.Contains(lines[parent+1+i], want) {
			t.Errorf("row %d under the parent is %q, want %q", i+1, lines[parent+1+i], want)
		}
	}
}

// / searches Chats as it does History: titles and agents, with the
// parents of a matching sub-session kept for context.
func TestChatsSearch(t *testing.T) {
	m, _ := started(t, 100, 30)
	press(m, "/")
	typeText(m, "changelog")
	frame := ansi.Strip(view(t, m))
	for _, want := range []string{"/ changelog", "Plan the 2.0 release", "Child: survey the release notes", "Grandchild: read the changelog"} {
		if !strings.Contains(frame, want) {
			t.Errorf("the search shows no %q:\n%s", want, frame)
		}
	}
	for _, gone := range []string{"Fix the flaky upload test", "Child: summarise issue 42"} {
		if strings.Contains(frame, gone) {
			t.Errorf("the search still shows %q:\n%s", gone, frame)
		}
	}
	// enter leaves the search for the rows, then opens the selected one.
	press(m, "enter", "down", "down", "enter")
	if top := m.top(); top == nil || top.SessionID() != id(9) {
		t.Errorf("opened %v, want the grandchild", top)
	}
}

// The Help tab cuts nothing, at 160 columns (two columns of keys) as at
// 80: a long key gets a line of its own, a long description wraps.
func TestHelpCutsNoLine(t *testing.T) {
	for _, w := range []int{80, 160} {
		m, _ := started(t, w, 80)
		press(m, "f1")
		frame := ansi.Strip(view(t, m))
		body := strings.Join(strings.Split(frame, "\n")[:78], "\n") // the footer may end in …
		if strings.Contains(body, "…") {
			t.Errorf("at %d columns the help cuts a line:\n%s", w, frame)
		}
		for _, want := range []string{"shift+enter/alt+enter/ctrl+j", "show / hide thinking and tool details", "approve and always allow the tool"} {
			if !strings.Contains(frame, want) {
				t.Errorf("at %d columns the help has no %q", w, want)
			}
		}
	}
}

// / searches the Agents tab too: slugs and announces.
func TestAgentsSearch(t *testing.T) {
	m, _ := started(t, 120, 30)
	press(m, "tab", "/")
	typeText(m, "sources")
	frame := ansi.Strip(view(t, m))
	if !strings.Contains(frame, "/ sources") || !strings.Contains(frame, "› researcher") || strings.Contains(frame, "planner") {
		t.Fatalf("the search for sources shows:\n%s", frame)
	}
	press(m, "enter", "enter") // done searching, then a session with it
	if top := m.top(); top == nil || m.top().SessionID() != "" {
		t.Fatalf("enter did not open a new session with the agent")
	}
	if frame := ansi.Strip(view(t, m)); !strings.Contains(frame, "researcher  new session") {
		t.Errorf("the new session is not the researcher's:\n%s", frame)
	}
}
