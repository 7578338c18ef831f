package theme

import "charm.land/lipgloss/v2"

// MarkdownStyles draw the answers: the colours of glamour's dark and light
// styles, which the answers were drawn with before, so they look the same.
type MarkdownStyles struct {
	// Text is every word's base; the others add to it.
	Text lipgloss.Style
	// Heading draws headings from the second level down (with their
	// "## " marks); H1 the first level, on a background.
	Heading, H1, H6 lipgloss.Style
	Emph, Strong    lipgloss.Style
	Strike          lipgloss.Style
	// Code is inline code; CodeBlock fenced and indented code.
	Code, CodeBlock lipgloss.Style
	// LinkText is a link's text, Link its address.
	Link, LinkText lipgloss.Style
	// ImageText is an image's description, Image its address.
	Image, ImageText lipgloss.Style
	Rule             lipgloss.Style
	// Quote is the mark before every line of a block quote, Table the
	// lines between a table's cells.
	Quote, Table lipgloss.Style
}

func newMarkdownStyles(dark bool) MarkdownStyles {
	c := func(light, darkColor string) lipgloss.Style {
		if dark {
			return lipgloss.NewStyle().Foreground(lipgloss.Color(darkColor))
		}
		return lipgloss.NewStyle().Foreground(lipgloss.Color(light))
	}
	codeBg := "254"
	if dark {
		codeBg = "236"
	}
	text := c("234", "252")
	return MarkdownStyles{
		Text:      text,
		Heading:   c("27", "39").Bold(true),
		H1:        lipgloss.NewStyle().Foreground(lipgloss.Color("228")).Background(lipgloss.Color("63")).Bold(true),
		H6:        c("27", "35"),
		Emph:      lipgloss.NewStyle().Italic(true),
		Strong:    lipgloss.NewStyle().Bold(true),
		Strike:    lipgloss.NewStyle().Strikethrough(true),
		Code:      lipgloss.NewStyle().Foreground(lipgloss.Color("203")).Background(lipgloss.Color(codeBg)),
		CodeBlock: c("242", "244"),
		Link:      c("36", "30").Underline(true),
		LinkText:  c("29", "35").Bold(true),
		Image:     c("205", "212").Underline(true),
		ImageText: c("243", "243"),
		Rule:      c("249", "240"),
		Quote:     text,
		Table:     text,
	}
}
