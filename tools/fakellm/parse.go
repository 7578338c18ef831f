package fakellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// LoadRules reads and checks a rules file. Errors are *RulesError naming
// the file, and the rule and field when the problem is inside one.
func LoadRules(path string) (Rules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Rules{}, &RulesError{File: path, Rule: -1, Err: err}
	}
	rules, err := ParseRules(data)
	if re, ok := errors.AsType[*RulesError](err); ok {
		re.File = path
	}
	return rules, err
}

// ParseRules decodes and checks a rules document. Unknown fields are errors,
// so that a misspelt condition cannot silently match everything. Errors are
// *RulesError.
func ParseRules(data []byte) (Rules, error) {
	var top struct {
		Model         string            `json:"model"`
		ContextWindow int               `json:"context_window"`
		Default       json.RawMessage   `json:"default"`
		Rules         []json.RawMessage `json:"rules"`
	}
	if err := decodeStrict(data, &top); err != nil {
		return Rules{}, jsonError(data, -1, "", "", err)
	}
	rules := Rules{Model: top.Model, ContextWindow: top.ContextWindow}
	if len(top.Default) > 0 && !bytes.Equal(top.Default, []byte("null")) {
		var reply Reply
		if err := decodeStrict(top.Default, &reply); err != nil {
			return Rules{}, jsonError(top.Default, -1, "", "default", err)
		}
		rules.Default = &reply
	}
	for i, raw := range top.Rules {
		rule, err := parseRule(raw)
		if err != nil {
			return Rules{}, jsonError(raw, i, peekName(raw), "", err)
		}
		rules.Rules = append(rules.Rules, rule)
	}
	if err := rules.Validate(); err != nil {
		return Rules{}, err
	}
	return rules, nil
}

func parseRule(raw json.RawMessage) (Rule, error) {
	var rule Rule
	if err := decodeStrict(raw, &rule); err != nil {
		return Rule{}, err
	}
	// A rule without a reply is almost certainly a mistake; an empty answer
	// must be asked for explicitly with "reply": {}.
	var presence struct {
		Reply json.RawMessage `json:"reply"`
	}
	if err := json.Unmarshal(raw, &presence); err != nil {
		return Rule{}, err
	}
	if len(presence.Reply) == 0 || bytes.Equal(presence.Reply, []byte("null")) {
		return Rule{}, &fieldError{field: "reply", err: errors.New("is required")}
	}
	return rule, nil
}

// decodeStrict decodes exactly one JSON value into v, rejecting unknown
// fields and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("no JSON value (the document is empty)")
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// jsonError turns a decoding error into a *RulesError, locating syntax
// errors by line and column and type errors by field.
func jsonError(data []byte, rule int, name, field string, err error) *RulesError {
	re := &RulesError{Rule: rule, RuleName: name, Field: field, Err: err}
	if fe, ok := errors.AsType[*fieldError](err); ok {
		re.Field, re.Err = joinField(field, fe.field), fe.err
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		line, col := lineColumn(data, se.Offset)
		re.Err = fmt.Errorf("line %d, column %d: %v", line, col, se)
	}
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		re.Field = joinField(field, te.Field)
		re.Err = fmt.Errorf("cannot use a JSON %s here (want %s)", te.Value, te.Type)
	}
	return re
}

func joinField(outer, inner string) string {
	switch {
	case outer == "":
		return inner
	case inner == "":
		return outer
	}
	return outer + "." + inner
}

// lineColumn gives the 1-based line and column of the byte a syntax error
// blames: the last one read, since the decoder's offset counts it.
func lineColumn(data []byte, offset int64) (line, col int) {
	pos := max(0, min(int(offset), len(data))-1)
	before := data[:pos]
	line = bytes.Count(before, []byte("\n")) + 1
	col = pos - bytes.LastIndexByte(before, '\n')
	return line, col
}

// peekName reads a rule's name, if any, for error messages about a rule
// that failed to decode.
func peekName(raw json.RawMessage) string {
	var named struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &named) // best effort: the name only decorates the error
	return named.Name
}
