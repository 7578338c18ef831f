package transcript

import (
	"strings"

	"github.com/agents-os/agents/tui/internal/theme"
)

// markdown renders answers, one block at a time. An answer is cut at safe
// boundaries — blank lines after which no construct started before them
// (a fence, a list, a quote, a table, a setext heading) can continue —
// and each block is rendered alone. A stored answer and the same answer
// streamed therefore render to the same lines, and a streamed answer
// re-renders only its last, still growing block per delta. A markdown is
// not safe for concurrent use: each worker has its own.
type markdown struct {
	d drawer
}

func newMarkdown(st theme.MarkdownStyles) *markdown {
	return &markdown{d: drawer{st: st, p: newParser()}}
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

// block renders one block, without blank lines around it, so blocks
// join with exactly one blank line.
func (m *markdown) block(src string, width int) []string {
	if strings.TrimSpace(src) == "" {
		return nil
	}
	src = strings.ReplaceAll(src, "\t", "    ")
	doc := m.d.parse([]byte(src))
	lines := m.d.blocks(doc, width, false)
	for i, l := range lines {
		// Code is not wrapped: a long code line is cut.
		lines[i] = fit(l, width)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
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
