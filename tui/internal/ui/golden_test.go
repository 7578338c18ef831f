package ui

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/tabtest"
)

// sizes are the terminals every golden view is drawn at: the smallest
// the TUI promises to work at, and a roomy one.
var sizes = []struct{ w, h int }{{80, 24}, {120, 40}}

// view is m's screen as a 16-colour terminal shows it: the colour
// profile is fixed, so the goldens do not depend on where tests run.
func view(t *testing.T, m *Model) string {
	t.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.ANSI}
	if _, err := w.Write([]byte(m.View().Content)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func keyPress(s string) tea.KeyPressMsg { return tabtest.Key(s) }

func press(m *Model, keys ...string) {
	for _, k := range keys {
		_, cmd := m.Update(keyPress(k))
		drive(m, cmd)
	}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		press(m, string(r))
	}
}

func event(sessionID string, body any) msgs.Event {
	ev := &agentsv1.Event{SessionId: sessionID}
	switch b := body.(type) {
	case *agentsv1.SessionCreated:
		ev.Body = &agentsv1.Event_SessionCreated{SessionCreated: b}
	case *agentsv1.SessionUpdated:
		ev.Body = &agentsv1.Event_SessionUpdated{SessionUpdated: b}
	case *agentsv1.RunStopped:
		ev.Body = &agentsv1.Event_RunStopped{RunStopped: b}
	case *agentsv1.RunStarted:
		ev.Body = &agentsv1.Event_RunStarted{RunStarted: b}
	default:
		panic(fmt.Sprintf("event body %T", body))
	}
	return msgs.Event{Event: ev}
}

// started is a shell over the fixtures, sized, connected and loaded.
func started(t *testing.T, w, h int) (*Model, *fakeServer) {
	t.Helper()
	f, c := newFakeClient("unix:///run/agents/agents.sock")
	fixtures(f)
	m := newTestModel(t, c, nil, nil)
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	drive(m, m.Init())
	_, cmd := m.Update(msgs.Conn{State: client.ConnState{Connected: true}})
	drive(m, cmd)
	return m, f
}

func eachSize(t *testing.T, f func(t *testing.T, w, h int)) {
	for _, s := range sizes {
		t.Run(fmt.Sprintf("%dx%d", s.w, s.h), func(t *testing.T) { f(t, s.w, s.h) })
	}
}

func TestGoldenChats(t *testing.T) {
	eachSize(t, func(t *testing.T, w, h int) {
		m, _ := started(t, w, h)
		// News while the list is shown: a turn in one waiting session,
		// the end of a run in a sub-session.
		drive(m, func() tea.Msg {
			return event(id(5), &agentsv1.SessionUpdated{Meta: session(5, "Approve the deploy", "ops", agentsv1.SessionStatus_SESSION_STATUS_WAITING, 6, ""), HeadTurn: &agentsv1.Turn{Index: 5}})
		})
		drive(m, func() tea.Msg {
			return event(id(3), &agentsv1.RunStopped{Status: agentsv1.SessionStatus_SESSION_STATUS_READY, Reason: "done"})
		})
		press(m, "down", "down")
		golden.RequireEqual(t, view(t, m))
	})
}

func TestGoldenChatsLight(t *testing.T) {
	m, _ := started(t, 80, 24)
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	golden.RequireEqual(t, view(t, m))
}

func TestGoldenChatsDeleteConfirmation(t *testing.T) {
	m, _ := started(t, 80, 24)
	press(m, "ctrl+d")
	golden.RequireEqual(t, view(t, m))
}

func TestGoldenAgents(t *testing.T) {
	eachSize(t, func(t *testing.T, w, h int) {
		m, _ := started(t, w, h)
		press(m, "tab")
		golden.RequireEqual(t, view(t, m))
	})
}

func TestGoldenHistorySearch(t *testing.T) {
	eachSize(t, func(t *testing.T, w, h int) {
		m, _ := started(t, w, h)
		press(m, "tab", "tab", "/")
		typeText(m, "child")
		golden.RequireEqual(t, view(t, m))
	})
}

func TestGoldenHelp(t *testing.T) {
	eachSize(t, func(t *testing.T, w, h int) {
		m, _ := started(t, w, h)
		press(m, "f1")
		golden.RequireEqual(t, view(t, m))
	})
}

func TestGoldenSchedules(t *testing.T) {
	eachSize(t, func(t *testing.T, w, h int) {
		m, _ := started(t, w, h)
		press(m, "tab", "tab", "tab")
		golden.RequireEqual(t, view(t, m))
	})
}

func TestGoldenDisconnected(t *testing.T) {
	eachSize(t, func(t *testing.T, w, h int) {
		m, _ := started(t, w, h)
		m.Update(msgs.Conn{State: client.ConnState{Err: errors.New("dial unix /run/agents/agents.sock: connect: connection refused"), Retry: 1600 * time.Millisecond}})
		m.Update(msgs.Status{Err: errors.New("new session with coder: server unavailable: connection refused")})
		golden.RequireEqual(t, view(t, m))
	})
}
