package theme

import "charm.land/lipgloss/v2"

// TranscriptStyles draw a conversation's turns.
type TranscriptStyles struct {
	// User, Agent and Mail style the line that opens a turn or a piece of
	// mail.
	User, Agent, Mail lipgloss.Style
	Thinking          lipgloss.Style
	// Tool draws a tool call's line and details; OK, Warn and ToolError
	// its status.
	Tool, ToolError lipgloss.Style
	OK, Warn        lipgloss.Style
	Muted           lipgloss.Style
	// Compaction draws the marker of a compaction turn, Rule the lines
	// either side of its text.
	Compaction, Rule lipgloss.Style
	// SelectedTurn frames the highlighted turn; its left frame is the
	// gutter every turn leaves free.
	SelectedTurn lipgloss.Style
	// Markdown draws the answers.
	Markdown MarkdownStyles
}

func newTranscriptStyles(p Palette) TranscriptStyles {
	return TranscriptStyles{
		User:         lipgloss.NewStyle().Foreground(p.User).Bold(true),
		Agent:        lipgloss.NewStyle().Foreground(p.Agent).Bold(true),
		Mail:         lipgloss.NewStyle().Foreground(p.Mail).Bold(true),
		Thinking:     lipgloss.NewStyle().Foreground(p.Muted).Italic(true),
		Tool:         lipgloss.NewStyle().Foreground(p.Muted),
		ToolError:    lipgloss.NewStyle().Foreground(p.Error),
		OK:           lipgloss.NewStyle().Foreground(p.OK),
		Warn:         lipgloss.NewStyle().Foreground(p.Warn),
		Muted:        lipgloss.NewStyle().Foreground(p.Muted),
		Compaction:   lipgloss.NewStyle().Foreground(p.Accent),
		Rule:         lipgloss.NewStyle().Foreground(p.Border),
		SelectedTurn: lipgloss.NewStyle().BorderLeft(true).BorderStyle(lipgloss.ThickBorder()).BorderForeground(p.Accent).PaddingLeft(1),
		Markdown:     newMarkdownStyles(p.Dark),
	}
}
