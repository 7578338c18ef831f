package transcript

import (
	"fmt"
	"net/url"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/agents-os/agents/tui/internal/theme"
)

// newParser is the parser of answers: goldmark's CommonMark, with the
// GFM tables, task boxes and strikethrough of mdextend.go. A drawer draws
// the tree it makes, with lipgloss, in the look of glamour's dark and
// light styles, without glamour's dependencies (chroma's lexers and
// styles, bluemonday), whose tables every start of the binary built,
// server and CLI alike. Code blocks are drawn in one colour, not
// highlighted.
func newParser() parser.Parser {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(append(parser.DefaultInlineParsers(), util.Prioritized(strikeParser{}, 500))...),
		parser.WithParagraphTransformers(append(parser.DefaultParagraphTransformers(), util.Prioritized(tableTransformer{}, 200), util.Prioritized(taskTransformer{}, 300))...),
	)
}

// drawer draws one parsed block of source.
type drawer struct {
	st  theme.MarkdownStyles
	src []byte
	p   parser.Parser
}

const (
	codeMargin = "  "
	quoteMark  = "│ "
	ruleLine   = "--------"
)

// blocks draws the block children of n at width, a blank line between
// each two (none in a tight list's items).
func (d *drawer) blocks(n ast.Node, width int, tight bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := d.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (d *drawer) block(n ast.Node, width int) []string {
	width = max(width, 1)
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return d.wrap(d.inlines(n, d.st.Text), width)
	case *ast.Heading:
		return d.heading(n, width)
	case *ast.ThematicBreak:
		return []string{d.st.Rule.Render(ruleLine)}
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return d.code(n)
	case *ast.Blockquote:
		var out []string
		for _, l := range d.blocks(n, width-ansi.StringWidth(quoteMark), false) {
			out = append(out, d.st.Quote.Render(quoteMark)+l)
		}
		return out
	case *ast.List:
		return d.list(n, width)
	case *ast.HTMLBlock:
		return d.html(n)
	case *tableNode:
		return d.table(n, width)
	}
	// Anything else: its blocks, as they come.
	return d.blocks(n, width, false)
}

func (d *drawer) heading(n *ast.Heading, width int) []string {
	if n.Level == 1 {
		return d.wrap(d.st.H1.Render(" "+ansi.Strip(d.inlines(n, d.st.H1))+" "), width)
	}
	st := d.st.Heading
	if n.Level >= 6 {
		st = d.st.H6
	}
	return d.wrap(st.Render(strings.Repeat("#", n.Level)+" ")+d.inlines(n, st), width)
}

// code draws a code block's lines as they are, after a margin; the
// caller cuts the ones too long.
func (d *drawer) code(n ast.Node) []string {
	lines := n.Lines()
	var out []string
	for i := range lines.Len() {
		seg := lines.At(i)
		l := strings.TrimRight(string(seg.Value(d.src)), "\r\n")
		if strings.TrimSpace(l) == "" {
			out = append(out, "") // no trailing spaces to draw
			continue
		}
		out = append(out, codeMargin+d.st.CodeBlock.Render(l))
	}
	return out
}

// html shows raw HTML's text without its tags.
func (d *drawer) html(n *ast.HTMLBlock) []string {
	var b strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		b.Write(seg.Value(d.src))
	}
	if n.HasClosure() {
		b.Write(n.ClosureLine.Value(d.src))
	}
	var out []string
	for _, l := range strings.Split(stripTags(b.String()), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, d.st.Text.Render(strings.TrimRight(l, " \r")))
		}
	}
	return out
}

// stripTags drops everything between < and >.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (d *drawer) list(n *ast.List, width int) []string {
	var out []string
	num := n.Start
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		marker := "• "
		if n.IsOrdered() {
			marker = fmt.Sprintf("%d. ", num)
			num++
		}
		if box, ok := item.Attribute(taskAttr); ok {
			marker = box.(string)
		}
		indent := ansi.StringWidth(marker)
		// Items follow each other without blank lines, loose or not, as
		// glamour drew them; the blocks of a loose item keep theirs.
		lines := d.blocks(item, width-indent, n.IsTight)
		if len(lines) == 0 {
			lines = []string{""}
		}
		out = append(out, d.st.Text.Render(marker)+lines[0])
		for _, l := range lines[1:] {
			if l != "" {
				l = strings.Repeat(" ", indent) + l
			}
			out = append(out, l)
		}
	}
	return out
}

// wrap cuts styled text into lines of width, at spaces where it can; a
// hard line break always starts a new line.
func (d *drawer) wrap(s string, width int) []string {
	var out []string
	for _, part := range strings.Split(s, "\n") {
		out = append(out, strings.Split(lipgloss.Wrap(part, width, ""), "\n")...)
	}
	return out
}

// inlines draws n's inline children in st, one line with "\n" at the
// hard line breaks.
func (d *drawer) inlines(n ast.Node, st lipgloss.Style) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		d.inline(&b, c, st)
	}
	return b.String()
}

func (d *drawer) inline(b *strings.Builder, n ast.Node, st lipgloss.Style) {
	switch n := n.(type) {
	case *ast.Text:
		b.WriteString(st.Render(resolve(n.Segment.Value(d.src))))
		switch {
		case n.HardLineBreak():
			b.WriteString("\n")
		case n.SoftLineBreak():
			b.WriteString(st.Render(" "))
		}
	case *ast.String:
		v := n.Value
		if !n.IsRaw() {
			v = []byte(resolve(v))
		}
		b.WriteString(st.Render(string(v)))
	case *ast.CodeSpan:
		var code strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch t := c.(type) {
			case *ast.Text:
				code.Write(t.Segment.Value(d.src))
			case *ast.String:
				code.Write(t.Value)
			}
		}
		// Non-breaking spaces: the padding never wraps away from the code.
		b.WriteString(d.st.Code.Render("\u00a0" + code.String() + "\u00a0"))
	case *ast.Emphasis:
		inner := inherit(st, d.st.Emph)
		if n.Level >= 2 {
			inner = inherit(st, d.st.Strong)
		}
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			d.inline(b, c, inner)
		}
	case *strikeNode:
		inner := inherit(st, d.st.Strike)
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			d.inline(b, c, inner)
		}
	case *ast.Link:
		dest := string(n.Destination)
		label := d.inlines(n, inherit(st, d.st.LinkText))
		if label != "" && ansi.Strip(label) != dest {
			b.WriteString(hyperlink(dest, label))
			b.WriteString(st.Render(" "))
		}
		b.WriteString(hyperlink(dest, d.st.Link.Render(dest)))
	case *ast.AutoLink:
		dest := string(n.URL(d.src))
		if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(dest), "mailto:") {
			dest = "mailto:" + dest
		}
		b.WriteString(hyperlink(dest, d.st.Link.Render(string(n.Label(d.src)))))
	case *ast.Image:
		dest := string(n.Destination)
		alt := ansi.Strip(d.inlines(n, st))
		b.WriteString(d.st.ImageText.Render("Image: " + alt + " →"))
		b.WriteString(st.Render(" "))
		b.WriteString(hyperlink(dest, d.st.Image.Render(dest)))
	case *ast.RawHTML:
		// Tags show nothing; the text between them is Text.
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			d.inline(b, c, st)
		}
	}
}

// inherit is outer with what add sets on top.
func inherit(outer, add lipgloss.Style) lipgloss.Style {
	return add.Inherit(outer)
}

// hyperlink makes text a terminal hyperlink (OSC 8) to dest when dest is
// a web or mail address; otherwise text as it is.
func hyperlink(dest, text string) string {
	u, err := url.Parse(dest)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "mailto") {
		return text
	}
	return ansi.SetHyperlink(dest) + text + ansi.ResetHyperlink()
}

// resolve is a text's source with backslash escapes and character
// references resolved, as a reader sees it.
func resolve(v []byte) string {
	return string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v))))
}

// parse parses one block of markdown.
func (d *drawer) parse(src []byte) ast.Node {
	d.src = src
	return d.p.Parse(text.NewReader(src))
}
