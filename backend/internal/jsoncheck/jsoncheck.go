// Package jsoncheck holds the checks a JSON text from outside passes
// before any decoder reads it: a bound on nesting (Depth, MaxDepth) and
// the refusal of a key given twice (RepeatedKey). Each is one linear pass
// over the bytes.
//
// Every JSON a client, a model or an MCP server sends is checked against
// MaxDepth before it is decoded. Decoders that recurse per level (and
// build something per level, such as the path an error names) cost
// memory and time that grow faster than the input; with the depth bound
// they stay linear in it. A repeated key is refused where the reader must
// say what it took (a stored agent's definition): encoding/json would
// keep the last value silently.
package jsoncheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MaxDepth is how many levels of lists and objects a JSON value read from
// outside may nest: `[]` is one level, `{"a": [1]}` two. The API's own
// messages nest a handful; 100 leaves room for any real document (a tool's
// structured result, a JSON Schema) and none for a bracket bomb.
const MaxDepth = 100

// DepthError reports JSON nested deeper than the limit.
type DepthError struct {
	// Max is the limit.
	Max int
	// Offset is the byte of the bracket that opened the level past it.
	Offset int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("JSON nests lists and objects more than %d levels deep (at byte %d)", e.Max, e.Offset)
}

// Depth returns a *DepthError when data nests lists and objects more
// than max levels deep, nil otherwise. It reads each byte once and
// allocates nothing unless it fails; brackets inside strings, escaped
// quotes included, do not count. It does not validate the JSON, which is
// the decoder's work: it only promises that a decoder reading data goes no
// deeper than max.
func Depth(data []byte, max int) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end := stringEnd(data, i+1)
			if end < 0 {
				// An unclosed string: a decoder stops there.
				return nil
			}
			i = end
		case '[', '{':
			depth++
			if depth > max {
				return &DepthError{Max: max, Offset: i}
			}
		case ']', '}':
			// More closings than openings is a decoder's syntax error;
			// it never makes room for more depth later.
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// stringEnd is the index of the quote that closes a string whose text
// starts at from, or -1. A quote preceded by an odd run of backslashes is
// escaped: the run's last backslash escapes it.
func stringEnd(data []byte, from int) int {
	for {
		j := bytes.IndexByte(data[from:], '"')
		if j < 0 {
			return -1
		}
		q := from + j
		backslashes := 0
		for k := q - 1; k >= from && data[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q
		}
		from = q + 1
	}
}

// RepeatedKey finds the first key an object of data gives twice, and
// returns its path (contents.slug, tools[2].name) and true; encoding/json
// would keep the last value silently, so a reader that must say what it
// took refuses the document instead. It returns false for JSON without a
// repeated key and for what is not JSON, which is the decoder's to
// report. It walks the tokens once, with no recursion.
func RepeatedKey(data []byte) (string, bool) {
	type level struct {
		object bool
		keys   map[string]bool
		// key is the object's current key; index the list's next index.
		key   string
		index int
		// expectKey says the next string token of an object is a key.
		expectKey bool
	}
	var stack []*level
	path := func() string {
		var b strings.Builder
		for _, l := range stack {
			if l.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(l.key)
			} else {
				fmt.Fprintf(&b, "[%d]", l.index-1)
			}
		}
		return b.String()
	}
	// value notes that a value starts in the innermost level.
	value := func() {
		if n := len(stack); n > 0 {
			if top := stack[n-1]; top.object {
				top.expectKey = true
			} else {
				top.index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
			if key, ok := tok.(string); ok {
				top := stack[n-1]
				if top.keys[key] {
					top.key = key
					return path(), true
				}
				top.keys[key], top.key, top.expectKey = true, key, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			value()
			stack = append(stack, &level{object: true, keys: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			value()
			stack = append(stack, &level{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", false
			}
		default:
			value()
		}
	}
}
