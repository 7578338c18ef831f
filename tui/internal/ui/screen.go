package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/tui/internal/badge"
	"github.com/agents-os/agents/tui/internal/conversation"
)

var _ screen = (*conversation.Screen)(nil)

// screen is an open session's conversation, shown over the tabs. Keys go
// to it first; the events of its session (and every session.updated, for
// its tree's spend), every snapshot and connection change, and the
// replies of its session's commands reach it even while another screen
// is on top of it.
type screen interface {
	Init() tea.Cmd
	// HandleKey reports whether the screen used the key.
	HandleKey(tea.KeyPressMsg) (tea.Cmd, bool)
	// Handle takes what the shell routes to the screen, pastes included.
	Handle(tea.Msg) tea.Cmd
	Render(w, h int) string
	SessionID() string
	// Focused reports whether the screen holds the keyboard (its
	// composer, a panel): then the shell leaves printable keys and tab
	// to it.
	Focused() bool
	// Restyle takes the shared theme's styles again after it changed.
	Restyle()
	Close() tea.Cmd
	// Write gives the keys to the composer.
	Write() tea.Cmd
	// Keys are the keys of what has the focus, for the footer.
	Keys() []key.Binding
}

// sessionTitle names a session from what the list knows of it.
func (m *Model) sessionTitle(id string) string {
	if id == "" {
		return "new session"
	}
	if meta := m.chats.Meta(id); meta != nil {
		return badge.Title(meta)
	}
	return badge.ShortID(id)
}
