package convfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// A value is one JSON value as parse reads it: nil, bool, json.Number,
// string, []any or map[string]any.
//
// node is a value with the path that leads to it, so that every problem
// names where in the file it is. A member that is not there is absent,
// which is told apart from null.
type node struct {
	v      any
	path   string
	absent bool
}

// parse reads data, one JSON value, refusing a key given twice (the
// decoder would keep the last one silently) and anything after the value.
func parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &Error{Problem: "the file holds more than one JSON value"}
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, notJSON(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, notJSON(err)
				}
				key := kt.(string) // the decoder only gives strings as keys
				if _, dup := obj[key]; dup {
					return nil, &Error{Problem: fmt.Sprintf("the key %q is given twice in one object (near byte %d)", key, dec.InputOffset())}
				}
				if obj[key], err = parseValue(dec); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, notJSON(err)
			}
			return obj, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := parseValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, notJSON(err)
			}
			return list, nil
		}
		return nil, &Error{Problem: fmt.Sprintf("not JSON: unexpected %q", t)}
	default:
		return t, nil
	}
}

func notJSON(err error) error {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return &Error{Problem: fmt.Sprintf("not JSON: %v (at byte %d)", err, syntax.Offset)}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Problem: "not JSON: the file ends in the middle of a value"}
	}
	return &Error{Problem: "not JSON: " + err.Error()}
}

// get is the member key of an object node; absent when the node is no
// object or has no such member.
func (n node) get(key string) node {
	path := key
	if n.path != "" {
		path = n.path + "." + key
	}
	obj, _ := n.v.(map[string]any)
	v, ok := obj[key]
	return node{v: v, path: path, absent: !ok}
}

// missing reports a node that is absent or null.
func (n node) missing() bool { return n.absent || n.v == nil }

func (n node) fail(format string, args ...any) error {
	return &Error{Path: n.path, Problem: fmt.Sprintf(format, args...)}
}

// want is the error of a node that is not of the kind wanted.
func (n node) want(kind string) error {
	if n.absent {
		return n.fail("missing (want %s)", kind)
	}
	return n.fail("want %s, got %s", kind, kindOf(n.v))
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func (n node) object() (node, error) {
	if _, ok := n.v.(map[string]any); !ok {
		return n, n.want("an object")
	}
	return n, nil
}

func (n node) str() (string, error) {
	s, ok := n.v.(string)
	if !ok {
		return "", n.want("a string")
	}
	return s, nil
}

// optString is a string that may be absent or null ("" then).
func (n node) optString() (string, error) {
	if n.missing() {
		return "", nil
	}
	return n.str()
}

// list is the elements of a list node; absent or null is an empty list
// when optional.
func (n node) list(optional bool) ([]node, error) {
	if optional && n.missing() {
		return nil, nil
	}
	l, ok := n.v.([]any)
	if !ok {
		return nil, n.want("a list")
	}
	out := make([]node, len(l))
	for i, v := range l {
		out[i] = node{v: v, path: n.path + "[" + strconv.Itoa(i) + "]"}
	}
	return out, nil
}

// count is a token count: a whole number, not negative; 0 when absent or
// null.
func (n node) count() (int64, error) {
	if n.missing() {
		return 0, nil
	}
	num, ok := n.v.(json.Number)
	if !ok {
		return 0, n.want("a number")
	}
	c, err := num.Int64()
	if err != nil || c < 0 {
		return 0, n.fail("want a whole number of tokens, got %s", num)
	}
	return c, nil
}

// compact is the node's value written as compact JSON, with <, > and &
// as they are (a tool's output read by people, not embedded in HTML).
func (n node) compact() (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(n.v); err != nil {
		return "", n.fail("cannot be written back as JSON: %v", err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}
