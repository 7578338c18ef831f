package bashtool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// invocation is a call's arguments laid out the way the script declared.
type invocation struct {
	argv  []string          // the words after "run"
	stdin []byte            // stdin-mode values, one line each
	env   map[string]string // env-mode values
}

// prepareInvocation turns the model's arguments, each a JSON value, into
// an invocation. The JSON text was decoded by the caller (package tool),
// once, so that an approval policy and the script see one value.
//
// Arguments follow declaration order, as in agents-exe: an omitted optional
// argument contributes nothing, so later positional words move up. Keys the
// tool does not declare are rejected (rather than silently dropped) so that
// the model learns about a misspelt optional argument instead of calling
// the tool without it. A JSON null counts as an omitted argument.
func (t *Tool) prepareInvocation(values map[string]json.RawMessage) (invocation, error) {
	var problems []string
	unknownSeen := false
	for _, key := range sortedKeys(values) {
		if !slices.ContainsFunc(t.Args, func(a Arg) bool { return a.Name == key }) {
			problems = append(problems, fmt.Sprintf("unknown argument %q", key))
			unknownSeen = true
		}
	}

	inv := invocation{env: map[string]string{}}
	for _, arg := range t.Args {
		raw, present := values[arg.Name]
		if present && jsonKind(raw) == "null" {
			present = false
		}
		if !present {
			if arg.Required() {
				problems = append(problems, fmt.Sprintf("missing required argument %q (%s)", arg.Name, arg.BackingType))
			}
			continue
		}
		text, err := valueAsText(arg.BackingType, raw)
		if err != nil {
			problems = append(problems, fmt.Sprintf("argument %q %v", arg.Name, err))
			continue
		}
		if arg.Mode != ModeStdin && strings.ContainsRune(text, 0) {
			problems = append(problems, fmt.Sprintf("argument %q must not contain a NUL character", arg.Name))
			continue
		}
		switch arg.Mode {
		case ModePositional:
			inv.argv = append(inv.argv, text)
		case ModeDashDashSpace:
			inv.argv = append(inv.argv, "--"+arg.Name, text)
		case ModeDashDashEqual:
			inv.argv = append(inv.argv, "--"+arg.Name+"="+text)
		case ModeStdin:
			inv.stdin = append(inv.stdin, text...)
			inv.stdin = append(inv.stdin, '\n')
		case ModeEnv:
			inv.env[arg.EnvVarName()] = text
		}
	}

	if len(problems) > 0 {
		if unknownSeen {
			problems = append(problems, "accepted arguments: "+t.argumentNames())
		}
		return invocation{}, fmt.Errorf("invalid arguments for %s: %s", t.Name(), strings.Join(problems, "; "))
	}
	return inv, nil
}

func (t *Tool) argumentNames() string {
	if len(t.Args) == 0 {
		return "none"
	}
	names := make([]string, len(t.Args))
	for i, a := range t.Args {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

// valueAsText checks a value against its backing type and renders it the
// way the script receives it: strings verbatim, numbers as written by the
// model, integers in plain decimal, booleans as true/false.
func valueAsText(backing BackingType, raw json.RawMessage) (string, error) {
	kind := jsonKind(raw)
	switch backing {
	case BackingString:
		var s string
		if kind != "string" || json.Unmarshal(raw, &s) != nil {
			return "", fmt.Errorf("must be a string, got %s", kind)
		}
		return s, nil
	case BackingNumber:
		if kind != "number" {
			return "", fmt.Errorf("must be a number, got %s", kind)
		}
		return string(bytes.TrimSpace(raw)), nil
	case BackingInteger:
		if kind != "number" {
			return "", fmt.Errorf("must be an integer, got %s", kind)
		}
		return integerText(string(bytes.TrimSpace(raw)))
	case BackingBoolean:
		var b bool
		if kind != "boolean" || json.Unmarshal(raw, &b) != nil {
			return "", fmt.Errorf("must be a boolean, got %s", kind)
		}
		return strconv.FormatBool(b), nil
	}
	return "", fmt.Errorf("has an unsupported backing type %q", backing)
}

// integerText accepts integral numbers however they are written (3, 3.0,
// 3e2) because JSON does not distinguish them; the script gets plain digits.
func integerText(literal string) (string, error) {
	if i, err := strconv.ParseInt(literal, 10, 64); err == nil {
		return strconv.FormatInt(i, 10), nil
	}
	f, err := strconv.ParseFloat(literal, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return "", fmt.Errorf("must be an integer, got %s", literal)
	}
	return strconv.FormatInt(int64(f), 10), nil
}

// jsonKind names the JSON type of a value for error messages.
func jsonKind(raw []byte) string {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return "nothing"
	}
	switch trimmed[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
