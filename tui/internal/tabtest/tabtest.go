// Package tabtest is what the tests of the tabs share: a key press by
// its name, and a tab's commands run to their end.
package tabtest

import (
	"strconv"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/agents-os/agents/tui/internal/msgs"
)

// Key is the press of a key by its name, as a terminal reports it:
// "enter", "esc", "tab", "backspace", "up", "down", "pgup", "pgdown",
// "f1"…"f12", "ctrl+r", or a character ("A" is a shifted "a").
func Key(name string) tea.KeyPressMsg {
	if code, ok := named[name]; ok {
		return tea.KeyPressMsg{Code: code}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(name, "f")); err == nil && name[0] == 'f' {
		return tea.KeyPressMsg{Code: tea.KeyF1 + rune(n-1)}
	}
	if k, ok := strings.CutPrefix(name, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: []rune(k)[0], Mod: tea.ModCtrl}
	}
	r := []rune(name)[0]
	if unicode.IsUpper(r) {
		return tea.KeyPressMsg{Code: unicode.ToLower(r), ShiftedCode: r, Text: name, Mod: tea.ModShift}
	}
	return tea.KeyPressMsg{Code: r, Text: name}
}

// named are the keys called by a name rather than by what they type.
var named = map[string]rune{
	"enter":     tea.KeyEnter,
	"esc":       tea.KeyEscape,
	"tab":       tea.KeyTab,
	"backspace": tea.KeyBackspace,
	"up":        tea.KeyUp,
	"down":      tea.KeyDown,
	"pgup":      tea.KeyPgUp,
	"pgdown":    tea.KeyPgDown,
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
