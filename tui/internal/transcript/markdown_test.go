package transcript

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agents-os/agents/tui/internal/theme"
)

var markdownCorpus = []string{
	answerMarkdown,
	longAnswer(8),
	"# Title one\n\nText under it.\n\n### Third level\n\n#### Fourth\n\n###### Sixth",
	"- a\n- b\n  - nested one\n  - nested two\n    - deeper\n- c",
	"3. three\n4. four\n\n10. ten\n11. eleven",
	"> quoted text that is long enough to wrap around at forty columns for sure\n> second line\n\nafter",
	"before\n\n---\n\nafter",
	"| a | bb | c |\n|---|:--:|--:|\n| 1 | 2 | 3 |\n| long cell | x | y |",
	"A [link](https://example.com) and ![img](https://example.com/i.png) and <https://auto.example>.",
	"*em* **strong** ~~strike~~ ***both*** `code`",
	"- [ ] todo\n- [x] done",
	"line one  \nline two\\\nline three\nsoft",
	"    indented code\n    more",
	"Text with <b>html</b> inline.",
	"A very long paragraph that goes on and on and on to check the wrapping of words at the width of the terminal, and keeps going a bit more so that it wraps more than twice at forty columns.",
	"- a long list item that goes on and on and on to check the wrapping of words at the width\n- short",
	"1. first\n\n   second paragraph of first\n2. second",
	"Setext\n======\n\nSub\n---",
	"```\nplain fence\n```",
	"Escapes: \\*not em\\* and &amp; &copy;",
	"https://bare.example.com/path and www.example.com",
	"Hard\\\nbreak",
}

// Every construct an answer may use, drawn at two widths: the look of
// glamour's styles, which drew the answers before.
func TestMarkdownConstructs(t *testing.T) {
	t.Parallel()
	m := newMarkdown(theme.New(true).Transcript.Markdown)
	var b strings.Builder
	for _, src := range markdownCorpus {
		for _, w := range []int{40, 80} {
			fmt.Fprintf(&b, "=== width %d\n%s\n", w, src)
			b.WriteString("---\n")
			b.WriteString(plain(m.render(src, w)))
		}
	}
	golden(t, "markdown_constructs", b.String())
}

// The styles the plain goldens cannot show: each inline construct gets
// its attribute, a link is a terminal hyperlink to its address.
func TestMarkdownInlineStyles(t *testing.T) {
	t.Parallel()
	m := newMarkdown(theme.New(true).Transcript.Markdown)
	for _, c := range []struct{ src, want string }{
		{"*em*", "\x1b[3;"},
		{"**strong**", "\x1b[1;"},
		{"~~gone~~", ";9m"},
		{"`code`", "48;5;236"},
		{"[text](https://example.com/a)", "\x1b]8;;https://example.com/a\a"},
		{"# Title", "48;5;63"},
	} {
		if got := strings.Join(m.render(c.src, 60), "\n"); !strings.Contains(got, c.want) {
			t.Errorf("%q renders as %q, without %q", c.src, got, c.want)
		}
	}
}
