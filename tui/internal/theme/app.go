package theme

import "charm.land/lipgloss/v2"

// AppStyles draw the frame: tabs, lists, the status line, panels.
type AppStyles struct {
	Tab, ActiveTab lipgloss.Style
	Status         lipgloss.Style
	Selected       lipgloss.Style
	Muted          lipgloss.Style
	Error          lipgloss.Style
	Panel          lipgloss.Style

	// Title is a list row's or a panel's main text; Heading starts a
	// section of a panel (the descriptor's "Tools", a help group).
	Title, Heading lipgloss.Style
	// Key draws a key in the help and in hints.
	Key lipgloss.Style
	// Prompt is a question or an input line at the foot of a screen.
	Prompt lipgloss.Style

	// Session status icons, and the marker of a session with news not
	// seen yet.
	Ready, Running, Waiting, Paused, Failed lipgloss.Style
	Unread                                  lipgloss.Style

	// Connection state in the status bar.
	Connected, Disconnected lipgloss.Style
}

func newAppStyles(p Palette) AppStyles {
	return AppStyles{
		Tab:       lipgloss.NewStyle().Foreground(p.Muted).Padding(0, 1),
		ActiveTab: lipgloss.NewStyle().Foreground(p.Accent).Bold(true).Padding(0, 1).Underline(true),
		Status:    lipgloss.NewStyle().Foreground(p.Muted),
		Selected:  lipgloss.NewStyle().Background(p.Selection),
		Muted:     lipgloss.NewStyle().Foreground(p.Muted),
		Error:     lipgloss.NewStyle().Foreground(p.Error),
		Panel:     lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(p.Border).Padding(0, 1),

		Title:   lipgloss.NewStyle().Foreground(p.Text),
		Heading: lipgloss.NewStyle().Foreground(p.Accent).Bold(true),
		Key:     lipgloss.NewStyle().Foreground(p.Accent),
		Prompt:  lipgloss.NewStyle().Foreground(p.Warn).Bold(true),

		Ready:   lipgloss.NewStyle().Foreground(p.Muted),
		Running: lipgloss.NewStyle().Foreground(p.OK),
		Waiting: lipgloss.NewStyle().Foreground(p.Warn),
		Paused:  lipgloss.NewStyle().Foreground(p.Muted),
		Failed:  lipgloss.NewStyle().Foreground(p.Error),
		Unread:  lipgloss.NewStyle().Foreground(p.Accent).Bold(true),

		Connected:    lipgloss.NewStyle().Foreground(p.OK),
		Disconnected: lipgloss.NewStyle().Foreground(p.Error).Bold(true),
	}
}
