// Package apijson is the JSON the API speaks: the messages of
// api/agents/v1 as the plain HTTP routes (/v1/…) and their event streams
// write and read them, in a form designed for people (Marshal,
// Unmarshal), and as the Connect protocol carries them, protobuf's
// canonical JSON for its generated clients, whose refusals are explained
// in the routes' words (ConnectCodec). Both read a body only once it has
// passed jsoncheck.
//
// The routes' form, in detail.
//
// Written:
//
//   - snake_case names (the proto field names);
//   - enum values in lowercase without their type's prefix ("ready" for
//     SESSION_STATUS_READY), null when unset;
//   - every integer as a JSON number, 64-bit ones included;
//   - every field present: lists as [] and maps as {} when empty, unset
//     messages and optional fields as null; of a oneof only the member
//     set;
//   - timestamps in RFC 3339, durations as Go writes them, shortened
//     ("10m", "1h30m", "1.5s");
//   - the shapes of rules.go: a session's summary at the top of the
//     session object, a mail's body beside its envelope, an event's body
//     beside its position.
//
// Read: the same form, and beside it the long one protojson reads —
// camelCase names, full enum names, 64-bit integers as strings, nested
// bodies — plus durations as "10m" or a number of seconds. Unknown fields
// are refused, as are a key given twice, a field given under two of its
// names (parent_id and parentId) or both nested and at the top, and a
// body nested deeper than jsoncheck.MaxDepth; every error names the field in
// the API's words ("field `agent` must be a string").
package apijson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

// Marshal writes m in the route representation.
func Marshal(m proto.Message) ([]byte, error) {
	scratch := scratchBuffers.Get().(*[]byte)
	b, err := AppendReplacing((*scratch)[:0], m, nil)
	var out []byte
	if err == nil {
		out = bytes.Clone(b)
	}
	if cap(b) <= maxScratch {
		*scratch = b
		scratchBuffers.Put(scratch)
	}
	return out, err
}

// A Replacer may give, for a field of a message being written, the
// encoding of its value, appended to dst: a value encoded earlier and
// kept (a stored turn never changes). ok false leaves the field to the
// encoder, and dst as it was. The field's key, and its place among the
// members, are the encoder's. A replacement must be one JSON value in
// this representation. (An interface rather than a function: a closure
// the encoder holds would be allocated with what it captures.)
type Replacer interface {
	Replace(dst []byte, m protoreflect.Message, fd protoreflect.FieldDescriptor) (out []byte, ok bool)
}

// AppendReplacing appends m's encoding to dst, where replace, when not
// nil, may give the encoding of a field's value (see Replacer). It is
// for a caller that writes the encoding out and keeps its buffer for the
// next: an answer written to its response needs no copy of its own. On
// an error the bytes after len(dst) are undefined.
func AppendReplacing(dst []byte, m proto.Message, replace Replacer) ([]byte, error) {
	e := encoder{buf: dst, replace: replace}
	err := e.message(m.ProtoReflect())
	return e.buf, err
}

// An answer is written into a scratch buffer kept from earlier answers and
// copied out at its size: one allocation instead of a buffer that grows
// from nothing, doubling, for every answer and event. Buffers grown past
// maxScratch (a long session's export) are left to the collector.
var scratchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxScratch = 64 << 10

// Unmarshal reads data, one JSON object, into m. Errors are *Error.
//
// A body nested deeper than jsoncheck.MaxDepth is refused before it is
// parsed, and nothing is built per level but the value itself (the path
// an error names is put together only for the error), so reading stays
// linear in the body.
func Unmarshal(data []byte, m proto.Message) error {
	if !utf8.Valid(data) {
		return &Error{Problem: "the body is not UTF-8"}
	}
	var deep *jsoncheck.DepthError
	if errors.As(jsoncheck.Depth(data, jsoncheck.MaxDepth), &deep) {
		return &Error{Problem: fmt.Sprintf("the body nests lists and objects more than %d levels deep (at byte %d)", deep.Max, deep.Offset)}
	}
	sh := shapeOf(m.ProtoReflect().Descriptor())
	var (
		v   any
		err error
	)
	if json.Valid(data) {
		v, err = parseValid(data, sh)
		if err != nil {
			return err
		}
	} else {
		// Read as a decoder reads it, for the error it names.
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if v, err = parseValue(dec, sh); err != nil {
			return err
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return &Error{Problem: "the body holds more than one JSON value"}
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &Error{Problem: "the body must be a JSON object"}
	}
	return decoder{}.decodeObject(m.ProtoReflect(), obj, "")
}

// parseValue reads one JSON value as encoding/json would into an any,
// refusing what that would let pass silently, a key given twice, and
// a key the object's shape does not take (nil: any key), as soon as it
// is read.
func parseValue(dec *json.Decoder, sh *shape) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, notJSON(err)
	}
	switch tok {
	case json.Delim('{'):
		obj := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, notJSON(err)
			}
			k := kt.(string) // the decoder allows only strings as keys
			if _, dup := obj[k]; dup {
				return nil, &Error{Field: k, Problem: "is given twice"}
			}
			inner := sh
			if sh != nil {
				var ok bool
				if inner, ok = sh.takes(k); !ok {
					return nil, &Error{Field: k, Problem: notAField(sh.md)}
				}
			}
			v, err := parseValue(dec, inner)
			if err != nil {
				return nil, within(err, k)
			}
			obj[k] = v
		}
		if _, err := dec.Token(); err != nil {
			return nil, notJSON(err)
		}
		return obj, nil
	case json.Delim('['):
		arr := []any{}
		for i := 0; dec.More(); i++ {
			v, err := parseValue(dec, sh)
			if err != nil {
				return nil, within(err, "["+strconv.Itoa(i)+"]")
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, notJSON(err)
		}
		return arr, nil
	}
	return tok, nil
}

func notJSON(err error) error {
	return &Error{Problem: "the body is not JSON: " + syntaxProblem(err)}
}

// within puts a field's error under the key or index holding it, on the
// way out of the value: only an error pays for its path.
func within(err error, segment string) error {
	var e *Error
	if !errors.As(err, &e) || e.Field == "" {
		return err
	}
	if strings.HasPrefix(e.Field, "[") {
		e.Field = segment + e.Field
	} else {
		e.Field = segment + "." + e.Field
	}
	return e
}

// Error is a value that does not fit the field it was given for.
type Error struct {
	// Field is the path of the field (message.text, params.TOKEN), empty
	// for the whole body.
	Field   string
	Problem string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return fmt.Sprintf("field `%s` %s", e.Field, e.Problem)
}

// syntaxProblem says where a body stops being JSON.
func syntaxProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "it ends too early"
	}
	return err.Error()
}
