package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
)

// renderFooter is the line of keys above the status bar: those of
// whatever has the keyboard now (a dialog, the conversation's focused
// part, the tab), most used first, as many whole ones as fit, then an
// ellipsis; the quit key always ends the line.
func (m *Model) renderFooter(w int) string {
	st := m.th.App
	hint := func(b key.Binding) string {
		return st.Key.Render(b.Help().Key) + " " + st.Muted.Render(b.Help().Desc)
	}
	sep := st.Muted.Render(" · ")
	quit := hint(m.quitHint())
	room := w - 1 - ansi.StringWidth(quit) - ansi.StringWidth(sep)
	if room < 1 {
		return layout.Pad(" "+quit, w)
	}
	// Whole hints only: bubbles' help view adds one past its width when
	// its ellipsis would not fit either.
	var shown []string
	used, cut := 0, false
	for _, b := range m.footerKeys() {
		if !b.Enabled() {
			continue
		}
		h := hint(b)
		need := ansi.StringWidth(h)
		if len(shown) > 0 {
			need += ansi.StringWidth(sep)
		}
		if used+need > room {
			cut = true
			break
		}
		shown = append(shown, h)
		used += need
	}
	ellipsis := st.Muted.Render(" …")
	for cut && len(shown) > 0 && used+ansi.StringWidth(ellipsis) > room {
		last := shown[len(shown)-1]
		shown = shown[:len(shown)-1]
		used -= ansi.StringWidth(last)
		if len(shown) > 0 {
			used -= ansi.StringWidth(sep)
		}
	}
	line := strings.Join(shown, sep)
	switch {
	case cut:
		line += ellipsis + sep
	case line != "":
		line += sep
	}
	return layout.Pad(" "+line+quit, w)
}

// quitHint is the quit key that works now: q, unless a text field would
// type it.
func (m *Model) quitHint() key.Binding {
	if m.typing() {
		return keys.Hint(m.km, "quit", keys.Quit)
	}
	return keys.Hint(m.km, "quit", keys.QuitOutsideText)
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
	global := []key.Binding{h(keys.NewSession, "new session"), h(keys.OpenByID, "open by id"), h(keys.NextTab, "next tab"), h(keys.Help, "help")}
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
	case webhooksTab:
		switch {
		case m.webhooks.Confirming():
			return []key.Binding{label("y", "delete"), label("n", "keep")}
		case m.webhooks.ShowingDeliveries():
			return append([]key.Binding{keys.Hint(m.km, "move", keys.Up, keys.Down), h(keys.ToggleWebhook, "disable / enable"),
				h(keys.Back, "back to the webhooks")}, global...)
		}
		return append([]key.Binding{h(keys.Open, "deliveries"), keys.Hint(m.km, "move", keys.Up, keys.Down), h(keys.ToggleWebhook, "disable / enable"),
			h(keys.Delete, "delete")}, global...)
	case agentsTab:
		if m.agents.Searching() {
			return searching
		}
		if m.agents.ShowingVersions() {
			return append([]key.Binding{keys.Hint(m.km, "older / newer", keys.OlderVersion, keys.NewerVersion), keys.Hint(m.km, "scroll", keys.PageUp, keys.PageDown),
				h(keys.Back, "back to the agent")}, global...)
		}
		return append([]key.Binding{h(keys.Open, "new session with it"), keys.Hint(m.km, "move", keys.Up, keys.Down), h(keys.Search, "search"),
			h(keys.EditAgent, "edit"), h(keys.AgentVersions, "versions"), keys.Hint(m.km, "scroll the agent", keys.PageUp, keys.PageDown)}, global...)
	}
	return append([]key.Binding{keys.Hint(m.km, "scroll", keys.Up, keys.Down)}, global...)
}

// label is a footer entry: a key as the footer names it and what it does.
func label(k, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc))
}
