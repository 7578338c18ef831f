package transcript

import (
	"bytes"
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// The two GFM additions to CommonMark that answers use: tables and
// strikethrough, as goldmark extensions of our own (goldmark's extension
// package compiles its regular expressions at start-up, in every
// command).

// tableNode is a GFM table: its header and rows as cell sources (parsed
// as inline markdown when drawn), and each column's alignment.
type tableNode struct {
	ast.BaseBlock
	align []lipgloss.Position
	// set says which columns name an alignment; the others take none.
	set  []bool
	rows [][]string // the header first
}

var kindTable = ast.NewNodeKind("Table")

func (n *tableNode) Kind() ast.NodeKind { return kindTable }

func (n *tableNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// tableTransformer turns the lines of a paragraph from a header row
// followed by a delimiter row (`| --- | :-: |`) on into a table.
type tableTransformer struct{}

func (tableTransformer) Transform(p *ast.Paragraph, reader text.Reader, _ parser.Context) {
	lines := p.Lines()
	src := reader.Source()
	row := func(i int) []byte {
		seg := lines.At(i)
		return seg.Value(src)
	}
	for i := 1; i < lines.Len(); i++ {
		align, set, ok := delimiterRow(row(i))
		if !ok {
			continue
		}
		header := splitRow(row(i - 1))
		if len(header) != len(align) {
			continue
		}
		t := &tableNode{align: align, set: set, rows: [][]string{header}}
		for j := i + 1; j < lines.Len(); j++ {
			t.rows = append(t.rows, splitRow(row(j)))
		}
		parent := p.Parent()
		if i == 1 {
			parent.ReplaceChild(parent, p, t)
		} else {
			// The lines before the header stay a paragraph.
			lines.SetSliced(0, i-1)
			parent.InsertAfter(parent, p, t)
		}
		return
	}
}

// delimiterRow reads a table's delimiter row: each column's alignment.
func delimiterRow(line []byte) ([]lipgloss.Position, []bool, bool) {
	if !bytes.ContainsRune(line, '|') {
		return nil, nil, false
	}
	cells := splitRow(line)
	align := make([]lipgloss.Position, len(cells))
	set := make([]bool, len(cells))
	for i, c := range cells {
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		dashes := strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if dashes == "" || strings.Trim(dashes, "-") != "" {
			return nil, nil, false
		}
		switch {
		case left && right:
			align[i], set[i] = lipgloss.Center, true
		case right:
			align[i], set[i] = lipgloss.Right, true
		case left:
			align[i], set[i] = lipgloss.Left, true
		}
	}
	return align, set, true
}

// splitRow cuts a table row into its cells' sources, at the pipes not
// escaped with a backslash; the pipes at either end are optional.
func splitRow(line []byte) []string {
	s := strings.TrimSpace(string(line))
	s = strings.TrimPrefix(s, "|")
	if strings.HasSuffix(s, "|") && !strings.HasSuffix(s, `\|`) {
		s = s[:len(s)-1]
	}
	var cells []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '|':
			cells = append(cells, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(cells, strings.TrimSpace(s[start:]))
}

// table draws a table as wide as the answer, as glamour did: lines
// between the columns and under the header, none around.
func (d *drawer) table(n *tableNode, width int) []string {
	cols := len(n.align)
	rows := make([][]string, len(n.rows))
	cell := &drawer{st: d.st, p: d.p}
	for i, r := range n.rows {
		rows[i] = make([]string, cols)
		for j := range cols {
			if j < len(r) {
				rows[i][j] = cell.cell(r[j])
			}
		}
	}
	t := table.New().Width(width).Wrap(true).
		Border(lipgloss.NormalBorder()).BorderStyle(d.st.Table).
		BorderTop(false).BorderBottom(false).BorderLeft(false).BorderRight(false).
		Headers(rows[0]...).Rows(rows[1:]...).
		StyleFunc(func(_, col int) lipgloss.Style {
			st := lipgloss.NewStyle().Margin(0, 1)
			if col < cols && n.set[col] {
				st = st.Align(n.align[col])
				switch n.align[col] {
				case lipgloss.Left:
					st = st.PaddingRight(0)
				case lipgloss.Right:
					st = st.PaddingLeft(0)
				}
			}
			return st
		})
	lines := strings.Split(t.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ") // the last column's margin
	}
	return lines
}

// cell draws one cell's inline markdown.
func (d *drawer) cell(src string) string {
	doc := d.parse([]byte(src))
	if p := doc.FirstChild(); p != nil {
		return strings.ReplaceAll(d.inlines(p, d.st.Text), "\n", " ")
	}
	return ""
}

// taskTransformer finds the box a task list item starts with ("[ ] ",
// "[x] "), before the item's text is parsed: it marks the item and drops
// the box from the text.
type taskTransformer struct{}

// taskAttr is the attribute of a task item: its box as drawn.
var taskAttr = []byte("task")

func (taskTransformer) Transform(p *ast.Paragraph, reader text.Reader, _ parser.Context) {
	item, ok := p.Parent().(*ast.ListItem)
	if !ok || item.FirstChild() != p || p.Lines().Len() == 0 {
		return
	}
	seg := p.Lines().At(0)
	v := seg.Value(reader.Source())
	if len(v) < 4 || v[0] != '[' || v[2] != ']' || v[3] != ' ' && v[3] != '\t' {
		return
	}
	switch v[1] {
	case ' ':
		item.SetAttribute(taskAttr, "[ ] ")
	case 'x', 'X':
		item.SetAttribute(taskAttr, "[✓] ")
	default:
		return
	}
	p.Lines().Set(0, seg.WithStart(seg.Start+4))
}

// strikeNode is text between tildes: ~~gone~~.
type strikeNode struct{ ast.BaseInline }

var kindStrike = ast.NewNodeKind("Strikethrough")

func (n *strikeNode) Kind() ast.NodeKind { return kindStrike }

func (n *strikeNode) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// strikeParser finds runs of one or two tildes; the parser pairs them as
// it pairs emphasis.
type strikeParser struct{}

func (strikeParser) Trigger() []byte { return []byte{'~'} }

func (strikeParser) Parse(_ ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, seg := block.PeekLine()
	d := parser.ScanDelimiter(line, before, 1, strikeDelimiter{})
	if d == nil || d.OriginalLength > 2 || before == '~' {
		return nil
	}
	d.Segment = seg.WithStop(seg.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	pc.PushDelimiter(d)
	return d
}

type strikeDelimiter struct{}

func (strikeDelimiter) IsDelimiter(b byte) bool { return b == '~' }

func (strikeDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char && opener.OriginalLength == closer.OriginalLength
}

func (strikeDelimiter) OnMatch(int) ast.Node { return &strikeNode{} }
