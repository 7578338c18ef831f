package transcript

import (
	"encoding/json"
	"strings"
)

// closeJSON completes JSON that was cut short, as a tool call's arguments
// are while the model streams them: an open string is closed (a half
// escape at its end dropped), a key with no value yet is dropped, as are
// a half-written number or literal and a trailing comma, and the open
// objects and arrays are closed. What it returns is valid JSON holding
// everything complete so far; ok is false when there is nothing yet, or
// the text is not JSON cut short but something else.
func closeJSON(s string) (out string, ok bool) {
	type frame struct {
		obj bool
		// expect is what comes next: a key, a colon, a value or a comma
		// (or the frame's end).
		expect byte
		// keyStart is where the object's last key began, to drop it when
		// it never gets its value.
		keyStart int
	}
	const (
		wantKey   = 'k'
		wantColon = ':'
		wantValue = 'v'
		wantComma = ','
	)
	stack := []frame{{expect: wantValue}}
	top := func() *frame { return &stack[len(stack)-1] }
	// valueDone moves the frame on past a complete value.
	valueDone := func() { top().expect = wantComma }
	cut := -1 // where to cut the text before closing it, -1 for nowhere
	openString := false
	i := 0
scan:
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			start := i
			end, complete, escStart := scanString(s, i)
			f := top()
			isKey := f.obj && f.expect == wantKey
			if !isKey && f.expect != wantValue {
				return "", false
			}
			if !complete {
				if isKey {
					cut = start
				} else {
					openString = true
					cut = escStart
				}
				break scan
			}
			if isKey {
				f.keyStart, f.expect = start, wantColon
			} else {
				valueDone()
			}
			i = end
		case c == '{' || c == '[':
			if top().expect != wantValue {
				return "", false
			}
			if c == '{' {
				stack = append(stack, frame{obj: true, expect: wantKey})
			} else {
				stack = append(stack, frame{expect: wantValue})
			}
			i++
		case c == '}' || c == ']':
			if len(stack) < 2 || top().obj != (c == '}') {
				return "", false
			}
			stack = stack[:len(stack)-1]
			valueDone()
			i++
		case c == ':':
			if f := top(); f.obj && f.expect == wantColon {
				f.expect = wantValue
			} else {
				return "", false
			}
			i++
		case c == ',':
			f := top()
			if len(stack) < 2 || f.expect != wantComma {
				return "", false
			}
			if f.obj {
				f.expect = wantKey
			} else {
				f.expect = wantValue
			}
			i++
		default:
			if top().expect != wantValue {
				return "", false
			}
			j := i
			for j < len(s) && strings.IndexByte("+-.0123456789eEabcdefghijklmnopqrstuvwxyz", s[j]) >= 0 {
				j++
			}
			if j == i {
				return "", false
			}
			if !json.Valid([]byte(s[i:j])) {
				if j < len(s) {
					return "", false
				}
				// A number or literal still being written.
				cut = i
				break scan
			}
			valueDone()
			i = j
		}
	}
	text := s
	if cut >= 0 {
		text = s[:cut]
	}
	var b strings.Builder
	b.WriteString(text)
	if openString {
		b.WriteByte('"')
		valueDone()
	}
	out = b.String()
	// A key without its value, or a value not begun, goes with the comma
	// before it.
	if f := top(); f.obj && (f.expect == wantColon || f.expect == wantValue) {
		out = out[:f.keyStart]
	}
	out = strings.TrimSuffix(strings.TrimRight(out, " \t\r\n"), ",")
	for k := len(stack) - 1; k >= 1; k-- {
		if stack[k].obj {
			out += "}"
		} else {
			out += "]"
		}
	}
	if strings.TrimSpace(out) == "" || !json.Valid([]byte(out)) {
		return "", false
	}
	return out, true
}

// scanString reads the string starting at s[i] (a quote): end is just
// past its closing quote when complete; when the text ends inside it,
// escStart is where to cut so that no half escape is left (the end of
// the text, or the backslash of an escape cut short).
func scanString(s string, i int) (end int, complete bool, escStart int) {
	j := i + 1
	for j < len(s) {
		switch s[j] {
		case '"':
			return j + 1, true, 0
		case '\\':
			need := 2
			if j+1 < len(s) && s[j+1] == 'u' {
				need = 6
			}
			if j+need > len(s) {
				return len(s), false, j
			}
			j += need
		default:
			j++
		}
	}
	return len(s), false, len(s)
}
