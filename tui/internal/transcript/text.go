package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// wrapPlain wraps text that is not markdown at width, breaking long
// words when it must.
func wrapPlain(text string, width int) []string {
	text = strings.ReplaceAll(strings.TrimRight(text, "\n"), "\t", "    ")
	if text == "" {
		return nil
	}
	return strings.Split(ansi.Wrap(text, max(width, 1), ""), "\n")
}

// indent puts prefix before every line, wrapping the lines at what is
// left of width.
func indent(prefix string, st lipgloss.Style, text string, width int) []string {
	w := ansi.StringWidth(prefix)
	lines := wrapPlain(text, width-w)
	for i, l := range lines {
		lines[i] = prefix + st.Render(l)
	}
	return lines
}

// fit cuts a single line to width with an ellipsis.
func fit(line string, width int) string {
	if ansi.StringWidth(line) <= width {
		return line
	}
	return ansi.Truncate(line, max(width, 1), "…")
}

// oneLine is the first line of text, with a mark when more follows.
func oneLine(text string) string {
	text = strings.TrimSpace(text)
	first, rest, more := strings.Cut(text, "\n")
	first = strings.ReplaceAll(first, "\t", " ")
	if more && strings.TrimSpace(rest) != "" {
		return first + " …"
	}
	return first
}

// shortArgs is a call's arguments on one line: the value of a single
// argument alone, otherwise key=value pairs in key order; malformed JSON
// as the model wrote it.
func shortArgs(args string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil {
		return oneLine(args)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	value := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return oneLine(s)
		}
		return oneLine(string(raw))
	}
	if len(keys) == 1 {
		return value(obj[keys[0]])
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + value(obj[k])
	}
	return strings.Join(parts, " ")
}

// prettyJSON indents JSON arguments; malformed JSON stays as written.
func prettyJSON(args string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(args), "", "  ") != nil {
		return args
	}
	return buf.String()
}

// duration is a call's duration, short.
func duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}
