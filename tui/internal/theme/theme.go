// Package theme holds every style of the terminal UI, for light and dark
// terminals: a palette, and the styles each part of the screen draws with
// (AppStyles for the frame, tabs, lists and panels; TranscriptStyles for
// the conversation's turns; ConversationStyles for the rest of a session's
// screen). Nothing else in the TUI picks a colour.
package theme

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Palette is the few colours everything is drawn from.
type Palette struct {
	Dark bool

	Text, Muted, Subtle color.Color
	Accent, Border      color.Color
	OK, Warn, Error     color.Color
	User, Agent, Mail   color.Color
	Selection           color.Color
}

// Theme is the palette and the styles built from it.
type Theme struct {
	Palette
	App          AppStyles
	Transcript   TranscriptStyles
	Conversation ConversationStyles
}

// New builds the theme for a dark or a light background.
func New(dark bool) *Theme {
	ld := lipgloss.LightDark(dark)
	p := Palette{
		Dark:      dark,
		Text:      ld(lipgloss.Color("#1f2328"), lipgloss.Color("#e6edf3")),
		Muted:     ld(lipgloss.Color("#59636e"), lipgloss.Color("#9198a1")),
		Subtle:    ld(lipgloss.Color("#d1d9e0"), lipgloss.Color("#3d444d")),
		Accent:    ld(lipgloss.Color("#0969da"), lipgloss.Color("#4493f8")),
		Border:    ld(lipgloss.Color("#d1d9e0"), lipgloss.Color("#3d444d")),
		OK:        ld(lipgloss.Color("#1a7f37"), lipgloss.Color("#3fb950")),
		Warn:      ld(lipgloss.Color("#9a6700"), lipgloss.Color("#d29922")),
		Error:     ld(lipgloss.Color("#d1242f"), lipgloss.Color("#f85149")),
		User:      ld(lipgloss.Color("#8250df"), lipgloss.Color("#ab7df8")),
		Agent:     ld(lipgloss.Color("#0969da"), lipgloss.Color("#4493f8")),
		Mail:      ld(lipgloss.Color("#bc4c00"), lipgloss.Color("#db6d28")),
		Selection: ld(lipgloss.Color("#ddf4ff"), lipgloss.Color("#1f3a5f")),
	}
	th := &Theme{Palette: p, App: newAppStyles(p), Transcript: newTranscriptStyles(p)}
	th.Conversation = newConversationStyles(th)
	return th
}
