package theme

import "charm.land/lipgloss/v2"

// TranscriptStyles draw a conversation's turns.
type TranscriptStyles struct {
	User, Agent, Mail lipgloss.Style
	Thinking          lipgloss.Style
	Tool, ToolError   lipgloss.Style
	Muted             lipgloss.Style
	SelectedTurn      lipgloss.Style
}

func newTranscriptStyles(p Palette) TranscriptStyles {
	return TranscriptStyles{
		User:         lipgloss.NewStyle().Foreground(p.User).Bold(true),
		Agent:        lipgloss.NewStyle().Foreground(p.Agent).Bold(true),
		Mail:         lipgloss.NewStyle().Foreground(p.Mail).Bold(true),
		Thinking:     lipgloss.NewStyle().Foreground(p.Muted).Italic(true),
		Tool:         lipgloss.NewStyle().Foreground(p.Muted),
		ToolError:    lipgloss.NewStyle().Foreground(p.Error),
		Muted:        lipgloss.NewStyle().Foreground(p.Muted),
		SelectedTurn: lipgloss.NewStyle().BorderLeft(true).BorderStyle(lipgloss.ThickBorder()).BorderForeground(p.Accent),
	}
}
