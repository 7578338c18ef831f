// Package tabtest is what the tests of the tabs share: a key press by
// its name, and a tab's commands run to their end.
package tabtest

import (
	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/tui/internal/msgs"
)

// Key is the press of a key by its name: "enter", "esc", "down",
// "ctrl+d", or a letter.
func Key(name string) tea.KeyPressMsg {
	switch name {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: rune(name[0]), Text: name}
}

// Run runs cmd, batches included, and hands every answer to handle, and
// what it asks next too; it returns the status lines asked for.
func Run(handle func(tea.Msg) tea.Cmd, cmd tea.Cmd) []msgs.Status {
	if cmd == nil {
		return nil
	}
	var out []msgs.Status
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			out = append(out, Run(handle, c)...)
		}
	case msgs.Status:
		out = append(out, msg)
	case nil:
	default:
		out = append(out, Run(handle, handle(msg))...)
	}
	return out
}
