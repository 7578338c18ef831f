package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/tui/internal/badge"
	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/msgs"
	"github.com/agents-os/agents/tui/internal/theme"
)

// screen is an open session's conversation, shown over the tabs. Keys go
// to it first; every event, snapshot and connection change reaches it
// even while another screen is on top of it.
type screen interface {
	Init() tea.Cmd
	// HandleKey reports whether the screen used the key.
	HandleKey(tea.KeyPressMsg) (tea.Cmd, bool)
	Handle(tea.Msg) tea.Cmd
	Render(w, h int) string
	SessionID() string
	// Focused reports whether the screen holds the keyboard (its
	// composer): then the shell leaves printable keys to it.
	Focused() bool
	Close() tea.Cmd
}

// summary is the screen shown for an open session until the
// conversation view can draw it: what the list knows of the session.
type summary struct {
	id    string
	th    *theme.Theme
	km    *keys.Map
	title string
}

func (s *summary) Init() tea.Cmd     { return nil }
func (s *summary) SessionID() string { return s.id }
func (s *summary) Focused() bool     { return false }
func (s *summary) Close() tea.Cmd    { return nil }
func (s *summary) Handle(tea.Msg) tea.Cmd {
	return nil
}

func (s *summary) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if key.Matches(msg, s.km.Get(keys.Back)) {
		return func() tea.Msg { return msgs.Back{} }, true
	}
	return nil, false
}

func (s *summary) Render(w, h int) string {
	st := s.th.App
	lines := []string{
		st.Title.Bold(true).Render(s.title),
		st.Muted.Render("session " + s.id),
		"",
		st.Muted.Render(fmt.Sprintf("%s goes back.", s.km.Get(keys.Back).Help().Key)),
	}
	return layout.Fit(strings.Join(lines, "\n"), w, h)
}

// sessionTitle names a session from what the list knows of it.
func (m *Model) sessionTitle(id string) string {
	if meta := m.chats.Meta(id); meta != nil {
		return badge.Title(meta)
	}
	return badge.ShortID(id)
}
