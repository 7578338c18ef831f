package conversation

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
)

// styles are the theme's colours as the conversation screen draws them.
type styles struct {
	title, agent   lipgloss.Style
	muted, err     lipgloss.Style
	accent, ok     lipgloss.Style
	warn           lipgloss.Style
	rule           lipgloss.Style
	chip           lipgloss.Style
	selected       lipgloss.Style
	panel, focused lipgloss.Style
	label          lipgloss.Style
	area           textarea.Styles
	input          textinput.Styles
}

func newStyles(th *theme.Theme) styles {
	st := styles{
		title:    lipgloss.NewStyle().Foreground(th.Text).Bold(true),
		agent:    th.Transcript.Agent,
		muted:    th.App.Muted,
		err:      th.App.Error,
		accent:   lipgloss.NewStyle().Foreground(th.Accent),
		ok:       lipgloss.NewStyle().Foreground(th.OK),
		warn:     lipgloss.NewStyle().Foreground(th.Warn),
		rule:     lipgloss.NewStyle().Foreground(th.Border),
		chip:     lipgloss.NewStyle().Foreground(th.Text).Background(th.Subtle).Padding(0, 1),
		selected: th.App.Selected,
		panel:    th.App.Panel,
		focused:  th.App.Panel.BorderForeground(th.Accent),
		label:    lipgloss.NewStyle().Foreground(th.Accent).Bold(true),
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
	st.area = area

	in := textinput.DefaultStyles(th.Dark)
	for _, s := range []*textinput.StyleState{&in.Focused, &in.Blurred} {
		s.Text = lipgloss.NewStyle().Foreground(th.Text)
		s.Placeholder = th.App.Muted
		s.Prompt = lipgloss.NewStyle().Foreground(th.Accent)
		s.Suggestion = th.App.Muted
	}
	in.Cursor.Color, in.Cursor.Blink = th.Accent, false
	st.input = in
	return st
}

// statusLabel names a status as the header shows it.
func (st styles) statusLabel(m *agentsv1.SessionMeta) string {
	switch m.GetStatus() {
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		return st.accent.Render("● running")
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		return st.warn.Render("◆ waiting for calls")
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		return st.warn.Render("❚❚ paused")
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		label := "✗ failed"
		if r := m.GetStatusReason(); r != "" {
			label += ": " + firstLine(r)
		}
		return st.err.Render(label)
	case agentsv1.SessionStatus_SESSION_STATUS_READY:
		return st.ok.Render("○ ready")
	}
	return st.muted.Render("loading…")
}

// truncate cuts s, which may hold ANSI codes, to width cells.
func truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// fit cuts or pads s to exactly width cells.
func fit(s string, width int) string {
	s = truncate(s, width)
	if w := ansi.StringWidth(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimLeft(s, "\n")
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// size is a byte count for people.
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
}

// tokens is a token count for people: 950, 12.3k, 1.2M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d", n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	}
}
