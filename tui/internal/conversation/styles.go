package conversation

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
)

// statusLabel names a status as the header shows it.
func statusLabel(st theme.ConversationStyles, m *agentsv1.SessionMeta) string {
	switch m.GetStatus() {
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		return st.Accent.Render("● running")
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		return st.Warn.Render("◆ waiting for calls")
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		return st.Warn.Render("❚❚ paused")
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		label := "✗ failed"
		if r := m.GetStatusReason(); r != "" {
			label += ": " + firstLine(r)
		}
		return st.Error.Render(label)
	case agentsv1.SessionStatus_SESSION_STATUS_READY:
		return st.OK.Render("○ ready")
	}
	return st.Muted.Render("loading…")
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
