package transcript

import (
	"strings"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
)

// markdown renders answers with glamour, one block at a time. An answer is
// cut at safe boundaries — blank lines after which no construct started
// before them (a fence, a list, a quote, a table, a setext heading) can
// continue — and each block is rendered alone. A stored answer and the
// same answer streamed therefore render to the same lines, and a streamed
// answer re-renders only its last, still growing block per delta.
type markdown struct {
	style     gansi.StyleConfig
	width     int
	renderers map[int]*glamour.TermRenderer
}

func newMarkdown(style string) *markdown {
	cfg, ok := styles.DefaultStyles[style]
	if !ok {
		cfg = &styles.ASCIIStyleConfig
	}
	c := *cfg
	// The transcript draws its own gutter: the document needs no margin.
	var zero uint
	c.Document.Margin = &zero
	return &markdown{style: c, renderers: map[int]*glamour.TermRenderer{}}
}

// render is the whole of text at width.
func (m *markdown) render(text string, width int) []string {
	var out []string
	start := 0
	for _, end := range blockEnds(text, 0) {
		out = appendBlock(out, m.block(text[start:end], width))
		start = end
	}
	return appendBlock(out, m.block(text[start:], width))
}

// block renders one block; glamour's blank lines around it go, so blocks
// join with exactly one blank line.
func (m *markdown) block(src string, width int) []string {
	if strings.TrimSpace(src) == "" {
		return nil
	}
	src = strings.ReplaceAll(src, "\t", "    ")
	out, err := m.renderer(width).Render(src)
	if err != nil {
		return wrapPlain(src, width)
	}
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	for i, l := range lines {
		// Glamour does not wrap code: a long code line is cut.
		lines[i] = fit(trimPadding(l), width)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func (m *markdown) renderer(width int) *glamour.TermRenderer {
	if r, ok := m.renderers[width]; ok {
		return r
	}
	r, err := glamour.NewTermRenderer(glamour.WithStyles(m.style), glamour.WithWordWrap(width))
	if err != nil {
		// Only a broken option fails; the built-in styles are not.
		panic(err)
	}
	m.renderers[width] = r
	return r
}

func appendBlock(out, block []string) []string {
	if len(block) == 0 {
		return out
	}
	if len(out) > 0 {
		out = append(out, "")
	}
	return append(out, block...)
}

// stream is a streamed answer's rendering: the blocks already complete
// stay rendered, only the open tail is rendered again.
type stream struct {
	width  int
	text   string   // what was rendered last
	stable int      // text[:stable] is complete blocks
	done   []string // their lines
}

func (s *stream) render(m *markdown, text string, width int) []string {
	if width != s.width || !strings.HasPrefix(text, s.text[:s.stable]) {
		*s = stream{width: width}
	}
	s.text = text
	for _, end := range blockEnds(text, s.stable) {
		s.done = appendBlock(s.done, m.block(text[s.stable:end], width))
		s.stable = end
	}
	return appendBlock(s.done[:len(s.done):len(s.done)], m.block(text[s.stable:], width))
}

// blockEnds lists the safe boundaries of text after from, which is itself
// a boundary (or 0): offsets where a block may end and a new one start.
// A boundary is the start of a complete line that follows a blank line,
// outside any fence, where neither the line before the blank nor the line
// after it can belong to a construct spanning the blank. Raw HTML and
// link reference definitions can reach across anything, so after one the
// rest is a single block.
func blockEnds(text string, from int) []int {
	var ends []int
	var fence byte  // the fence character while inside a fence
	var last string // the last non-blank line
	blank := false  // a blank line came after last
	for pos := from; pos < len(text); {
		nl := strings.IndexByte(text[pos:], '\n')
		if nl < 0 {
			break // an incomplete line decides nothing yet
		}
		line := text[pos : pos+nl]
		start := pos
		pos += nl + 1
		if fence != 0 {
			if c := fenceChar(line); c == fence {
				fence = 0
			}
			last = line
			continue
		}
		if strings.TrimSpace(line) == "" {
			blank = last != ""
			continue
		}
		if blank && endsBlock(last) && startsBlock(line) {
			ends = append(ends, start)
		}
		if opensRaw(line) {
			return ends
		}
		blank = false
		last = line
		fence = fenceChar(line)
	}
	return ends
}

// endsBlock says the last line before a blank closes what it is part of.
func endsBlock(line string) bool {
	if indented(line) {
		return false // list continuation or indented code
	}
	t := strings.TrimLeft(line, " ")
	return !listItem(t) && t[0] != '>' && !strings.Contains(line, "|") && !underline(t)
}

// startsBlock says a line after a blank cannot continue the block before.
func startsBlock(line string) bool {
	return !indented(line) && !underline(strings.TrimLeft(line, " "))
}

func indented(line string) bool {
	return line[0] == ' ' || line[0] == '\t'
}

// fenceChar is the character of a code fence the line opens or closes, 0
// when it is not a fence line.
func fenceChar(line string) byte {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 {
		return 0
	}
	if c := t[0]; (c == '`' || c == '~') && t[1] == c && t[2] == c {
		return c
	}
	return 0
}

// listItem says a line (without its indent) opens a list item: "- ",
// "* ", "+ ", "1. " or "1) ".
func listItem(t string) bool {
	if len(t) >= 2 && strings.IndexByte("-*+", t[0]) >= 0 && (t[1] == ' ' || t[1] == '\t') {
		return true
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t')
}

// underline says a line could underline a setext heading (or be a rule
// that a paragraph above turns into one).
func underline(t string) bool {
	t = strings.TrimRight(t, " \t")
	if t == "" || (t[0] != '=' && t[0] != '-') {
		return false
	}
	return strings.Trim(t, t[:1]) == ""
}

// opensRaw says a line starts raw HTML or defines a link reference.
func opensRaw(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(t) >= 2 && t[0] == '<' {
		c := t[1]
		return c == '/' || c == '!' || c == '?' || (c|0x20 >= 'a' && c|0x20 <= 'z')
	}
	if len(t) > 0 && t[0] == '[' {
		if end := strings.Index(t, "]:"); end > 1 {
			return true
		}
	}
	return false
}

// trimPadding drops the spaces glamour pads every line to the wrap width
// with, and the escape sequences around them: they show nothing and cost
// bytes on every redraw. A run of spaces with a background shows, and
// stays.
func trimPadding(line string) string {
	for {
		cut := paddingStart(line)
		if cut == len(line) {
			return line
		}
		line = line[:cut]
	}
}

// paddingStart is where the last invisible run of line starts: spaces
// after a reset, or a style with no background, its spaces and the reset
// that ends them; len(line) when the line does not end with one.
func paddingStart(line string) int {
	rest := strings.TrimRight(line, " ")
	if rest != line {
		if rest == "" || !strings.Contains(rest, "\x1b[") || endsWithReset(rest) {
			return len(rest)
		}
		return len(line)
	}
	var body string
	switch {
	case strings.HasSuffix(line, "\x1b[m"):
		body = line[:len(line)-len("\x1b[m")]
	case strings.HasSuffix(line, "\x1b[0m"):
		body = line[:len(line)-len("\x1b[0m")]
	default:
		return len(line)
	}
	spaces := strings.TrimRight(body, " ")
	i := strings.LastIndex(spaces, "\x1b[")
	if i < 0 || !strings.HasSuffix(spaces, "m") {
		return len(line)
	}
	params := spaces[i+2 : len(spaces)-1]
	if strings.Trim(params, "0123456789;") != "" || showsSpaces(params) {
		return len(line)
	}
	return i
}

func endsWithReset(s string) bool {
	return strings.HasSuffix(s, "\x1b[m") || strings.HasSuffix(s, "\x1b[0m")
}

// showsSpaces says SGR parameters make a space visible: a background, a
// reverse video, an underline or a strike.
func showsSpaces(params string) bool {
	ps := strings.Split(params, ";")
	for i := 0; i < len(ps); i++ {
		switch p := ps[i]; {
		case p == "38" || p == "58":
			// An extended colour: its own parameters follow.
			if i+1 < len(ps) && ps[i+1] == "5" {
				i += 2
			} else if i+1 < len(ps) && ps[i+1] == "2" {
				i += 4
			}
		case p == "48", p == "4", p == "7", p == "9", p == "53":
			return true
		case len(p) == 2 && p[0] == '4' && p[1] <= '7', len(p) == 3 && p[:2] == "10":
			return true
		}
	}
	return false
}
