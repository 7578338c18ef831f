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
	}
}
