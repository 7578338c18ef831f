// Package jsonx extends encoding/json with what reading untrusted JSON
// needs besides a decoder: a bound on nesting, checked in one linear pass
// over the bytes before any decoder recurses into them.
//
// Every JSON a client, a model or an MCP server sends is checked against
// MaxDepth before it is decoded. Decoders that recurse per level (and
// build something per level, such as the path an error names) cost
// memory and time that grow faster than the input; with the depth bound
// they stay linear in it.
package jsonx

import (
	"bytes"
	"fmt"
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

// CheckDepth returns a *DepthError when data nests lists and objects more
// than max levels deep, nil otherwise. It reads each byte once and
// allocates nothing unless it fails; brackets inside strings, escaped
// quotes included, do not count. It does not validate the JSON, which is
// the decoder's work: it only promises that a decoder reading data goes no
// deeper than max.
func CheckDepth(data []byte, max int) error {
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
