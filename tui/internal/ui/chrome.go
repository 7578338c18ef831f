package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
)

// View draws the frame: the tab bar, the screen in front, the keys of
// what has the focus, the status bar.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

func (m *Model) render() string {
	w, h := m.w, m.h
	if w <= 0 || h <= 0 {
		return ""
	}
	bodyH := max(0, h-3)
	var lost string
	if m.connKnown && !m.conn.Connected {
		lost = m.renderLost(w)
		bodyH = max(0, bodyH-1)
	}
	var foot string
	if m.dialog != nil {
		foot = m.dialog.Render(w)
		bodyH = max(0, bodyH-strings.Count(foot, "\n")-1)
	}
	var body string
	if t := m.top(); t != nil {
		body = t.Render(w, bodyH)
	} else {
		body = m.renderTab(w, bodyH)
	}
	parts := []string{m.renderTabs(w), layout.Fit(body, w, bodyH)}
	if foot != "" {
		parts = append(parts, foot)
	}
	if lost != "" {
		parts = append(parts, lost)
	}
	parts = append(parts, m.renderFooter(w), m.renderStatus(w))
	return layout.Fit(strings.Join(parts, "\n"), w, h)
}

func (m *Model) renderTab(w, h int) string {
	switch m.tab {
	case chatsTab:
		return m.chats.Render(w, h)
	case agentsTab:
		return m.agents.Render(w, h)
	case schedulesTab:
		return m.schedules.Render(w, h)
	case webhooksTab:
		return m.webhooks.Render(w, h)
	case historyTab:
		return m.history.Render(w, h)
	default:
		return m.help.Render(w, h)
	}
}

// renderTabs is the tab bar; an open conversation shows as one more tab,
// the active one.
func (m *Model) renderTabs(w int) string {
	st := m.th.App
	chats := "Chats"
	if n := m.chats.Unread(); n > 0 {
		chats = fmt.Sprintf("Chats %s", st.Unread.Render(fmt.Sprintf("•%d", n)))
	}
	names := []string{chats, "Agents", "History", "Schedules", "Webhooks", "Help"}
	t := m.top()
	var b strings.Builder
	for i, name := range names {
		if t == nil && tab(i) == m.tab {
			b.WriteString(st.ActiveTab.Render(name))
		} else {
			b.WriteString(st.Tab.Render(name))
		}
	}
	if t != nil {
		b.WriteString(st.Muted.Render("›"))
		b.WriteString(st.ActiveTab.Render(m.sessionTitle(t.SessionID())))
	}
	hint := st.Muted.Render(m.km.Get(keys.Help).Help().Key + " help ")
	return layout.Columns(b.String(), hint, w)
}

// renderStatus is the status bar: the last result or error on the left,
// shortened at a word when it must, the connection on the right, always.
func (m *Model) renderStatus(w int) string {
	st := m.th.App
	text, style := m.status.Text, st.Status
	if m.status.Err != nil {
		text, style = m.status.Err.Error(), st.Error
	}
	// The server's address gives way first, then the text's last words.
	right := m.renderConn(w*2/3, true) + " "
	if ansi.StringWidth(text) > w-ansi.StringWidth(right)-2 {
		right = m.renderConn(w*2/3, false) + " "
	}
	room := max(w-ansi.StringWidth(right)-2, 0)
	return layout.Columns(" "+style.Render(layout.Words(text, room)), right, w)
}

// renderConn says whether the event stream is up, and, with target, to
// which server, in at most most cells.
func (m *Model) renderConn(most int, withTarget bool) string {
	st := m.th.App
	target := ""
	if withTarget {
		target = st.Muted.Render(" · " + m.c.Target())
	}
	var s string
	switch {
	case !m.connKnown:
		s = st.Muted.Render("○ connecting") + target
	case m.conn.Connected:
		s = st.Connected.Render("● connected") + target
	default:
		s = st.Disconnected.Render("○ reconnecting in "+roundUp(m.conn.Retry)) + target
	}
	if ansi.StringWidth(s) > most {
		s = ansi.Truncate(s, most, "…")
	}
	return s
}

// renderLost is the line above the status bar while the server is away:
// why, in full, and that nothing is lost by waiting.
func (m *Model) renderLost(w int) string {
	why := "the event stream ended"
	if m.conn.Err != nil {
		why = m.conn.Err.Error()
	}
	return layout.Pad(m.th.App.Error.Render(" server away: "+why)+m.th.App.Muted.Render(" · the screen catches up on reconnection"), w)
}

// roundUp shows a retry wait in whole seconds, never as 0s.
func roundUp(d time.Duration) string {
	return fmt.Sprintf("%ds", max(1, int((d+time.Second-1)/time.Second)))
}
