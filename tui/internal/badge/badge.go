// Package badge draws what every session list shows of a session at a
// glance: its status icon and its unread marker, the same in Chats and
// History.
package badge

import (
	"charm.land/lipgloss/v2"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
)

// Icons, one cell wide each so columns line up. A waiting session is the
// one status that asks something of the user, so it alone shows unread
// in its icon (filled) as well as in the marker.
const (
	ready         = "○"
	running       = "●"
	waitingUnread = "◆"
	waitingRead   = "◇"
	paused        = "‖"
	failed        = "✗"
	unread        = "•"
)

// Icon is the icon of a session in status s.
func Icon(s agentsv1.SessionStatus, isUnread bool) string {
	switch s {
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		return running
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		if isUnread {
			return waitingUnread
		}
		return waitingRead
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		return paused
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		return failed
	default:
		return ready
	}
}

// Style is the style of Icon.
func Style(st theme.AppStyles, s agentsv1.SessionStatus, isUnread bool) lipgloss.Style {
	switch s {
	case agentsv1.SessionStatus_SESSION_STATUS_RUNNING:
		return st.Running
	case agentsv1.SessionStatus_SESSION_STATUS_WAITING:
		return st.Waiting.Bold(isUnread)
	case agentsv1.SessionStatus_SESSION_STATUS_PAUSED:
		return st.Paused
	case agentsv1.SessionStatus_SESSION_STATUS_FAILED:
		return st.Failed
	default:
		return st.Ready
	}
}

// UnreadMark is the marker of a session with news not seen yet, or a
// blank of the same width; draw it with AppStyles.Unread.
func UnreadMark(isUnread bool) string {
	if isUnread {
		return unread
	}
	return " "
}

// Title is a session's title, or its agent and short id when it has none
// yet (an empty session just created).
func Title(m *agentsv1.SessionMeta) string {
	if t := m.GetTitle(); t != "" {
		return t
	}
	return "(untitled " + ShortID(m.GetId()) + ")"
}

// ShortID is the first block of a UUID: enough to tell sessions apart on
// screen.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
