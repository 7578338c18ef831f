package ui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"

	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
)

// renderFooter is the line of keys above the status bar: those of
// whatever has the keyboard now (a dialog, the conversation's focused
// part, the tab), most used first, cut to the width with an ellipsis.
func (m *Model) renderFooter(w int) string {
	st := m.th.App
	h := help.New()
	h.ShortSeparator = " · "
	h.Styles.ShortKey = st.Key
	h.Styles.ShortDesc = st.Muted
	h.Styles.ShortSeparator = st.Muted
	h.Styles.Ellipsis = st.Muted
	h.SetWidth(max(w-1, 1))
	return layout.Pad(" "+h.ShortHelpView(m.footerKeys()), w)
}

// footerKeys are the keys the footer shows.
func (m *Model) footerKeys() []key.Binding {
	if m.dialog != nil {
		return m.dialog.Keys()
	}
	if t := m.top(); t != nil {
		return t.Keys()
	}
	h := func(a keys.Action, desc string) key.Binding { return keys.Hint(m.km, desc, a) }
	global := []key.Binding{h(keys.NewSession, "new session"), h(keys.OpenByID, "open by id"), h(keys.NextTab, "next tab"), h(keys.Help, "help"), h(keys.Quit, "quit")}
	list := []key.Binding{h(keys.Open, "open"), keys.Hint(m.km, "move", keys.Up, keys.Down), h(keys.Search, "search")}
	searching := []key.Binding{label("type", "search"), h(keys.Open, "done"), h(keys.Back, "done"), label("up/down", "to the rows")}
	switch m.tab {
	case chatsTab:
		switch {
		case m.chats.Confirming():
			return []key.Binding{label("y", "delete"), label("n", "keep")}
		case m.chats.Searching():
			return searching
		}
		return append(append(list, h(keys.Delete, "delete")), global...)
	case historyTab:
		if m.history.Focused() {
			return searching
		}
		return append(list, global...)
	case schedulesTab:
		if m.schedules.ShowingFirings() {
			return append([]key.Binding{h(keys.Open, "open the session"), keys.Hint(m.km, "move", keys.Up, keys.Down), h(keys.PauseSchedule, "pause / resume"),
				h(keys.Back, "back to the schedules")}, global...)
		}
		return append([]key.Binding{h(keys.Open, "firings"), keys.Hint(m.km, "move", keys.Up, keys.Down), h(keys.PauseSchedule, "pause / resume")}, global...)
	case agentsTab:
		if m.agents.Searching() {
			return searching
		}
		return append([]key.Binding{h(keys.Open, "new session with it"), keys.Hint(m.km, "move", keys.Up, keys.Down), h(keys.Search, "search"),
			h(keys.EditAgent, "edit"), keys.Hint(m.km, "scroll the agent", keys.PageUp, keys.PageDown)}, global...)
	}
	return append([]key.Binding{keys.Hint(m.km, "scroll", keys.Up, keys.Down)}, global...)
}

// label is a footer entry: a key as the footer names it and what it does.
func label(k, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc))
}
