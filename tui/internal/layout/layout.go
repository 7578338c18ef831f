// Package layout cuts and pads rendered text to the box a screen was
// given, measuring ANSI-styled strings by their cells, never their bytes.
package layout

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Fit returns s as exactly h lines, each cut to at most w cells and padded
// with spaces to w, so a screen never spills over its neighbours.
func Fit(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		lines[i] = Pad(l, w)
	}
	return strings.Join(lines, "\n")
}

// Pad cuts one line to w cells (ending in … when cut) and fills the rest
// with spaces.
func Pad(line string, w int) string {
	if ansi.StringWidth(line) > w {
		line = ansi.Truncate(line, w, "…")
	}
	if n := w - ansi.StringWidth(line); n > 0 {
		line += strings.Repeat(" ", n)
	}
	return line
}

// Columns lays left and right out on one line of w cells: left is cut
// first when both do not fit, so the right part (a state, a count) stays.
func Columns(left, right string, w int) string {
	rw := ansi.StringWidth(right)
	if rw >= w {
		return Pad(right, w)
	}
	if ansi.StringWidth(left) > w-rw && w-rw > 1 {
		// Cut, it keeps a space before right, so the two do not read as
		// one word.
		return Pad(left, w-rw-1) + " " + right
	}
	return Pad(left, w-rw) + right
}

// Keep says which of a table's right-hand columns, of the given widths,
// show in w cells so the left part (a title) keeps at least minLeft: the
// columns giveWay names go first, in its order, until it does. A narrow
// terminal then still shows each row's title rather than every column
// but it.
func Keep(w, minLeft int, widths, giveWay []int) []bool {
	keep := make([]bool, len(widths))
	used := 0
	for i, cw := range widths {
		keep[i] = true
		used += cw
	}
	for _, i := range giveWay {
		if w-used >= minLeft {
			break
		}
		keep[i] = false
		used -= widths[i]
	}
	return keep
}

// Seg is a piece of a row: plain text and the style it is drawn in.
type Seg struct {
	Text  string
	Style lipgloss.Style
}

// Row lays segments out on one line of w cells: left ones from the
// start, right ones flush with the end. Text is cut before it is styled
// (the last left segments give way first), so no escape code is ever cut
// in half; bg, when not nil, is painted under the whole line, gaps
// included, which is how a selected row is drawn.
func Row(w int, left, right []Seg, bg color.Color) string {
	rw := 0
	for _, s := range right {
		rw += ansi.StringWidth(s.Text)
	}
	if rw > w {
		right, rw = nil, 0
	}
	room := w - rw
	paint := func(s lipgloss.Style) lipgloss.Style {
		if bg != nil {
			return s.Background(bg)
		}
		return s
	}
	var b strings.Builder
	used := 0
	for _, s := range left {
		t := s.Text
		if used+ansi.StringWidth(t) > room {
			t = ansi.Truncate(t, room-used, "…")
		}
		if t == "" {
			continue
		}
		b.WriteString(paint(s.Style).Render(t))
		used += ansi.StringWidth(t)
	}
	if gap := w - used - rw; gap > 0 {
		b.WriteString(paint(lipgloss.NewStyle()).Render(strings.Repeat(" ", gap)))
	}
	for _, s := range right {
		b.WriteString(paint(s.Style).Render(s.Text))
	}
	return b.String()
}

// Scroll shows lines from top in h lines, top clamped so the last screen
// is full; when lines are left below, the last line shown is more
// instead, so a cut list never looks complete.
func Scroll(lines []string, top, h int, more string) (shown []string, clamped int) {
	top = max(0, min(top, len(lines)-h))
	shown = lines[top:]
	if len(shown) > h && h > 0 {
		shown = append(shown[:h-1:h-1], more)
	}
	return shown, top
}

// Words shortens plain text to at most w cells at a word boundary,
// ending in "…" when it cut, so no word is shown in part. A long word
// (a path, an address) that would leave less than half the room used is
// cut within instead, as most of it says more than nothing.
func Words(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return ansi.Truncate(s, max(w, 0), "")
	}
	fields := strings.Fields(s)
	out := ""
	for _, f := range fields {
		next := f
		if out != "" {
			next = out + " " + f
		}
		if ansi.StringWidth(next)+1 > w {
			break
		}
		out = next
	}
	if ansi.StringWidth(out)*2 < w {
		return ansi.Truncate(s, w, "…")
	}
	// A word that is only a separator ("·", "—") does not end a line.
	for _, sep := range []string{" ·", " —", " -", ",", ":", ";"} {
		out = strings.TrimSuffix(out, sep)
	}
	return out + "…"
}

// Parts joins as many of parts, from the first, as fit in w cells with
// sep between them: a hint line drops whole hints, never half of one.
// When even the first does not fit, it is shortened with Words.
func Parts(parts []string, sep string, w int) string {
	out := ""
	for i, p := range parts {
		next := p
		if i > 0 {
			next = out + sep + p
		}
		if ansi.StringWidth(next) > w {
			if i == 0 {
				return Words(p, w)
			}
			break
		}
		out = next
	}
	return out
}
