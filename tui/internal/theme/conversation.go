package theme

import (
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// ConversationStyles draw a session's screen around its transcript: the
// header, the composer and its text fields, the draft, the pending calls.
type ConversationStyles struct {
	Title, Agent   lipgloss.Style
	Muted, Error   lipgloss.Style
	Accent, OK     lipgloss.Style
	Warn           lipgloss.Style
	Rule           lipgloss.Style
	Chip           lipgloss.Style
	Selected       lipgloss.Style
	Panel, Focused lipgloss.Style
	Label          lipgloss.Style
	Area           textarea.Styles
	Input          textinput.Styles
}

func newConversationStyles(th *Theme) ConversationStyles {
	st := ConversationStyles{
		Title:    lipgloss.NewStyle().Foreground(th.Text).Bold(true),
		Agent:    th.Transcript.Agent,
		Muted:    th.App.Muted,
		Error:    th.App.Error,
		Accent:   lipgloss.NewStyle().Foreground(th.Accent),
		OK:       lipgloss.NewStyle().Foreground(th.OK),
		Warn:     lipgloss.NewStyle().Foreground(th.Warn),
		Rule:     lipgloss.NewStyle().Foreground(th.Border),
		Chip:     lipgloss.NewStyle().Foreground(th.Text).Background(th.Subtle).Padding(0, 1),
		Selected: th.App.Selected,
		Panel:    th.App.Panel,
		Focused:  th.App.Panel.BorderForeground(th.Accent),
		Label:    lipgloss.NewStyle().Foreground(th.Accent).Bold(true),
	}
	area := textarea.DefaultStyles(th.Dark)
	for _, s := range []*textarea.StyleState{&area.Focused, &area.Blurred} {
		s.Base = lipgloss.NewStyle()
		s.CursorLine = lipgloss.NewStyle()
		s.Text = lipgloss.NewStyle().Foreground(th.Text)
		s.Placeholder = th.App.Muted
		s.Prompt = lipgloss.NewStyle().Foreground(th.Accent)
		s.EndOfBuffer = th.App.Muted
	}
	area.Blurred.Prompt = th.App.Muted
	area.Cursor.Color, area.Cursor.Blink = th.Accent, false
	st.Area = area

	in := textinput.DefaultStyles(th.Dark)
	for _, s := range []*textinput.StyleState{&in.Focused, &in.Blurred} {
		s.Text = lipgloss.NewStyle().Foreground(th.Text)
		s.Placeholder = th.App.Muted
		s.Prompt = lipgloss.NewStyle().Foreground(th.Accent)
		s.Suggestion = th.App.Muted
	}
	in.Cursor.Color, in.Cursor.Blink = th.Accent, false
	st.Input = in
	return st
}
