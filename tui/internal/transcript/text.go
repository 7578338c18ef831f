package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
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

// indent puts prefix before the first line and as many spaces before
// the others, wrapping the lines at what is left of width: a label or a
// mark ("✗ failed: ") is not repeated, the text goes on under itself.
func indent(prefix string, st lipgloss.Style, text string, width int) []string {
	w := ansi.StringWidth(prefix)
	lines := wrapPlain(text, width-w)
	for i, l := range lines {
		lines[i] = prefix + st.Render(l)
		if i == 0 {
			prefix = strings.Repeat(" ", w)
		}
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
		// Arguments still streaming read as what they hold so far, their
		// strings unescaped, and "…" for the rest to come.
		closed, ok := closeJSON(args)
		if !ok || json.Unmarshal([]byte(closed), &obj) != nil {
			return oneLine(args)
		}
		if len(obj) == 0 {
			return "…"
		}
		return shortObject(obj) + "…"
	}
	return shortObject(obj)
}

// shortObject is an object of arguments on one line: a lone argument's
// value, else key=value pairs by key.
func shortObject(obj map[string]json.RawMessage) string {
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

// prettyJSON indents JSON arguments; arguments cut short (still
// streaming) are indented as far as they go, then "…"; other malformed
// JSON stays as written.
func prettyJSON(args string) string {
	if out, ok := indentJSON(args); ok {
		return out
	}
	closed, ok := closeJSON(args)
	if !ok {
		return args
	}
	out, ok := indentJSON(closed)
	if !ok {
		return args
	}
	return out + "\n…"
}

// indentJSON indents JSON with its strings as they read: a model's
// encoder may have escaped <, > and & (\u003e), which say nothing to a
// person. Keys keep their order and numbers stay as written.
func indentJSON(s string) (string, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var b strings.Builder
	if indentValue(dec, &b, "") != nil {
		return "", false
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", false
	}
	return b.String(), true
}

// indentValue writes the next value of dec, indented from prefix.
func indentValue(dec *json.Decoder, b *strings.Builder, prefix string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		closing := "}"
		if t == '[' {
			closing = "]"
		}
		b.WriteString(t.String())
		n := 0
		for dec.More() {
			if n > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + prefix + "  ")
			if t == '{' {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				b.WriteString(quoteJSON(key.(string)) + ": ")
			}
			if err := indentValue(dec, b, prefix+"  "); err != nil {
				return err
			}
			n++
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		if n > 0 {
			b.WriteString("\n" + prefix)
		}
		b.WriteString(closing)
	case string:
		b.WriteString(quoteJSON(t))
	case json.Number:
		b.WriteString(t.String())
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	}
	return nil
}

// quoteJSON is s as a JSON string, <, > and & left as they are.
func quoteJSON(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
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
