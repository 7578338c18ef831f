package ui

import (
	"image/color"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/tui/internal/msgs"
)

// The terminal's answer to the background query may come after a
// conversation opened: the open screen takes the new theme, as if it
// had opened with it.
func TestOpenConversationTakesTheBackgroundsTheme(t *testing.T) {
	open := func(m *Model) {
		_, cmd := m.Update(msgs.OpenSession{ID: id(1)})
		drive(m, cmd)
	}
	late, _ := started(t, 80, 24)
	open(late)
	dark := late.View().Content
	late.Update(tea.BackgroundColorMsg{Color: color.White})

	early, _ := started(t, 80, 24)
	early.Update(tea.BackgroundColorMsg{Color: color.White})
	open(early)

	got, want := late.View().Content, early.View().Content
	if got == dark {
		t.Fatal("the conversation kept the dark theme")
	}
	if got != want {
		t.Errorf("restyled:\n%q\nopened light:\n%q", got, want)
	}
}

// The answer may also come while the open-session prompt is up: the
// prompt takes the new theme too.
func TestIDPromptTakesTheBackgroundsTheme(t *testing.T) {
	late, _ := started(t, 80, 24)
	press(late, "ctrl+o")
	dark := late.View().Content
	late.Update(tea.BackgroundColorMsg{Color: color.White})

	early, _ := started(t, 80, 24)
	early.Update(tea.BackgroundColorMsg{Color: color.White})
	press(early, "ctrl+o")

	got, want := late.View().Content, early.View().Content
	if got == dark {
		t.Fatal("the prompt and the screen kept the dark theme")
	}
	if got != want {
		t.Errorf("restyled:\n%q\nopened light:\n%q", got, want)
	}
}
