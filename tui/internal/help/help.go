// Package help is the Help tab, generated from the keymap: every action
// with its keys, grouped as the keymap groups them, so a keymap file's
// changes show here too.
package help

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/agents-os/agents/tui/internal/keys"
	"github.com/agents-os/agents/tui/internal/layout"
	"github.com/agents-os/agents/tui/internal/theme"
)

// groupTitles name the keymap's groups, in the order they are shown.
var groupTitles = []struct{ group, title string }{
	{"global", "Everywhere"},
	{"list", "Lists"},
	{"conversation", "Conversation"},
	{"transcript", "Transcript"},
	{"composer", "Composer"},
	{"draft", "Draft"},
	{"pending", "Pending calls"},
}

// Help is the Help tab.
type Help struct {
	th     *theme.Theme
	km     *keys.Map
	scroll int
	height int
}

// New returns the Help tab of a keymap.
func New(th *theme.Theme, km *keys.Map) *Help { return &Help{th: th, km: km} }

// HandleKey scrolls; it reports whether it used the key.
func (m *Help) HandleKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(msg, m.km.Get(keys.Up)):
		m.scroll--
	case key.Matches(msg, m.km.Get(keys.Down)):
		m.scroll++
	case key.Matches(msg, m.km.Get(keys.PageUp)):
		m.scroll -= max(1, m.height-1)
	case key.Matches(msg, m.km.Get(keys.PageDown)):
		m.scroll += max(1, m.height-1)
	default:
		return nil, false
	}
	m.scroll = max(0, m.scroll)
	return nil, true
}

// Render draws the keymap in w×h cells, in two columns when it is wide
// enough for them and one does not fit the height.
func (m *Help) Render(w, h int) string {
	sections := m.sections()
	colW := w
	var lines []string
	if total := count(sections); total > h && w >= 100 {
		colW = (w - 2) / 2
		left, right := split(sections, (total+1)/2)
		l, r := m.lines(left, colW), m.lines(right, colW)
		for i := range max(len(l), len(r)) {
			lines = append(lines, layout.Pad(at(l, i), colW)+"  "+at(r, i))
		}
	} else {
		lines = m.lines(sections, colW)
	}
	m.height = h
	more := m.th.App.Muted.Render(m.km.Get(keys.Down).Help().Key + " for more")
	shown, top := layout.Scroll(lines, m.scroll, h, more)
	m.scroll = top
	return layout.Fit(strings.Join(shown, "\n"), w, h)
}

type section struct {
	title    string
	bindings []*keys.Binding
}

func (m *Help) sections() []section {
	var out []section
	for _, g := range groupTitles {
		s := section{title: g.title}
		for _, b := range m.km.Bindings() {
			if b.Group == g.group {
				s.bindings = append(s.bindings, b)
			}
		}
		if len(s.bindings) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// count is the lines the sections take: a title, the bindings, a blank.
func count(ss []section) int {
	n := 0
	for _, s := range ss {
		n += len(s.bindings) + 2
	}
	return n
}

// split cuts the sections in two columns at the section boundary nearest
// half the lines.
func split(ss []section, half int) (left, right []section) {
	n := 0
	for i, s := range ss {
		if n+len(s.bindings)+2 > half && i > 0 {
			return ss[:i], ss[i:]
		}
		n += len(s.bindings) + 2
	}
	return ss, nil
}

// keyWidth is the width of the keys column: the longest keys, within a
// third of the column.
func keyWidth(ss []section, w int) int {
	n := 0
	for _, s := range ss {
		for _, b := range s.bindings {
			n = max(n, ansi.StringWidth(b.Help().Key))
		}
	}
	return min(n+2, max(8, w/3))
}

func (m *Help) lines(ss []section, w int) []string {
	st := m.th.App
	keyWidth := keyWidth(ss, w)
	var out []string
	for i, s := range ss {
		if i > 0 {
			out = append(out, "")
		}
		out = append(out, st.Heading.Render(s.title))
		for _, b := range s.bindings {
			// Nothing is cut: keys too long for their column have a line
			// of their own, descriptions wrap under themselves.
			k := b.Help().Key
			pad := strings.Repeat(" ", keyWidth)
			lead := st.Key.Render(fmt.Sprintf("%-*s", keyWidth, k))
			if ansi.StringWidth(k) > keyWidth-1 {
				out = append(out, "  "+st.Key.Render(ansi.Hardwrap(k, max(1, w-2), true)))
				lead = pad
			}
			desc := strings.Split(ansi.Wrap(b.Help().Desc, max(1, w-keyWidth-2), ""), "\n")
			for i, d := range desc {
				if i > 0 {
					lead = pad
				}
				out = append(out, "  "+lead+d)
			}
		}
	}
	return out
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}
