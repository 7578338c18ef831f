package agentfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Error is one problem in one file: which file, which field inside it (a
// path such as "contents.extraAgents[0].path"), and why. JSON syntax errors
// have no field; they carry the Line and Column (1-based, in characters)
// where the parser gave up instead.
//
// The same type reports warnings (Set.Warnings): problems that did not stop
// the file from loading.
type Error struct {
	File string
	// Agent is the slug of the stored agent at fault, for a problem of a
	// definition that is no file (File is then empty).
	Agent  string
	Field  string
	Line   int
	Column int
	Reason string
}

// Error formats the problem as "file: field: reason", or
// "file:line:column: reason" for syntax errors, leaving out empty parts.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.File == "" && e.Agent != "" {
		b.WriteString("stored agent " + e.Agent)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	} else if e.Field != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Field)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// JSONError turns an error from encoding/json about data (the content of
// file) into an *Error: syntax errors get their line and column, type
// errors their field. Other errors are wrapped as they are.
func JSONError(file string, data []byte, err error) *Error {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		line, col := position(data, syntax.Offset)
		return &Error{File: file, Line: line, Column: col, Reason: syntax.Error()}
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return &Error{File: file, Field: typ.Field, Reason: fmt.Sprintf("must be %s, got %s", describeGoType(typ.Type.Kind().String()), typ.Value)}
	}
	return &Error{File: file, Reason: err.Error()}
}

// position converts the byte offset encoding/json reports (the number of
// bytes read when it failed, so the offending byte is the one before) into
// a line and a column counted in characters.
func position(data []byte, offset int64) (line, col int) {
	at := int(offset) - 1
	if at < 0 {
		at = 0
	}
	if at > len(data) {
		at = len(data)
	}
	before := data[:at]
	line = 1 + bytes.Count(before, []byte("\n"))
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	col = 1 + utf8.RuneCount(before[lineStart:])
	return line, col
}

func describeGoType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "a list"
	case "map", "struct":
		return "an object"
	default:
		return "a number"
	}
}
