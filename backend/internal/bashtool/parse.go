package bashtool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

// description is what a script prints for "describe" once validated.
type description struct {
	Slug            string
	Description     string
	Args            []Arg
	EmptyResult     string // replaces an empty stdout; "" means keep it empty
	OutputMediaType string
}

// The wire shapes. Pointers tell a missing field from an empty one:
// agents-exe requires every field below that is not marked optional.
type wireDescription struct {
	Slug            *string         `json:"slug"`
	Description     *string         `json:"description"`
	Args            *[]wireArg      `json:"args"`
	EmptyResult     json.RawMessage `json:"empty-result"`      // optional
	OutputMediaType *string         `json:"output-media-type"` // optional
}

type wireArg struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Type        *string `json:"type"`
	BackingType *string `json:"backing_type"`
	Arity       *string `json:"arity"`
	Mode        *string `json:"mode"`
}

type wireEmptyResult struct {
	Tag      string  `json:"tag"`
	Contents *string `json:"contents"`
}

// parseDescription decodes and validates the output of "describe". Unknown
// fields are accepted so that descriptions written for newer agents-exe
// versions (for example an argument "tier") still load; nesting past
// jsoncheck.MaxDepth is refused before decoding.
func parseDescription(data []byte) (description, error) {
	if err := jsoncheck.Depth(data, jsoncheck.MaxDepth); err != nil {
		return description{}, fmt.Errorf("invalid JSON: %w", err)
	}
	var wire wireDescription
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&wire); err != nil {
		return description{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return description{}, errors.New("invalid JSON: unexpected data after the description object")
	}

	var problems []string
	complain := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	var d description
	switch {
	case wire.Slug == nil:
		complain(`missing "slug"`)
	case !validSlug(*wire.Slug):
		complain(`"slug" %q must be non-empty and use only letters, digits, "_" and "-"`, *wire.Slug)
	case len(toolNamePrefix)+len(*wire.Slug) > maxToolNameLength:
		complain(`"slug" %q is too long: the tool name %q must be at most %d characters`,
			*wire.Slug, toolNamePrefix+*wire.Slug, maxToolNameLength)
	default:
		d.Slug = *wire.Slug
	}
	if wire.Description == nil {
		complain(`missing "description"`)
	} else {
		d.Description = *wire.Description
	}
	if wire.Args == nil {
		complain(`missing "args" (use [] for a tool without arguments)`)
	} else {
		d.Args, problems = parseArgs(*wire.Args, problems)
	}
	if len(wire.EmptyResult) > 0 && string(wire.EmptyResult) != "null" {
		msg, err := parseEmptyResult(wire.EmptyResult)
		if err != nil {
			complain("%v", err)
		}
		d.EmptyResult = msg
	}
	if wire.OutputMediaType != nil {
		d.OutputMediaType = *wire.OutputMediaType
	}

	if len(problems) > 0 {
		return description{}, errors.New(strings.Join(problems, "; "))
	}
	return d, nil
}

func parseArgs(wires []wireArg, problems []string) ([]Arg, []string) {
	args := make([]Arg, 0, len(wires))
	seenNames := map[string]bool{}
	seenEnvVars := map[string]string{}
	for i, w := range wires {
		where := fmt.Sprintf("args[%d]", i)
		if w.Name != nil {
			where = fmt.Sprintf("args[%d] (%q)", i, *w.Name)
		}
		complain := func(format string, a ...any) {
			problems = append(problems, where+": "+fmt.Sprintf(format, a...))
		}
		missing := missingArgFields(w)
		if len(missing) > 0 {
			complain("missing %s", strings.Join(missing, ", "))
			continue
		}
		arg := Arg{
			Name:        *w.Name,
			Description: *w.Description,
			Type:        *w.Type,
			BackingType: BackingType(*w.BackingType),
			Arity:       Arity(*w.Arity),
			Mode:        Mode(*w.Mode),
		}
		if !validArgName(arg.Name) {
			complain(`"name" must be 1 to 64 letters, digits, "_", "." or "-"`)
		} else if seenNames[arg.Name] {
			complain("duplicate argument name")
		}
		seenNames[arg.Name] = true
		if !arg.BackingType.known() {
			complain(`invalid "backing_type" %q (allowed: %s)`, arg.BackingType, allowedBackingTypes)
		}
		if !arg.Arity.known() {
			complain(`invalid "arity" %q (allowed: %s)`, arg.Arity, allowedArities)
		}
		if !arg.Mode.known() {
			complain(`invalid "mode" %q (allowed: %s)`, arg.Mode, allowedModes)
		}
		if arg.Mode == ModeEnv {
			envName := arg.EnvVarName()
			if isReservedEnvVar(envName) {
				complain("env mode would set the reserved variable %s", envName)
			} else if other, taken := seenEnvVars[envName]; taken {
				complain("env mode variable %s is also used by argument %q", envName, other)
			}
			seenEnvVars[envName] = arg.Name
		}
		args = append(args, arg)
	}
	return args, problems
}

func missingArgFields(w wireArg) []string {
	var missing []string
	for _, f := range []struct {
		name    string
		present bool
	}{
		{`"name"`, w.Name != nil},
		{`"description"`, w.Description != nil},
		{`"type"`, w.Type != nil},
		{`"backing_type"`, w.BackingType != nil},
		{`"arity"`, w.Arity != nil},
		{`"mode"`, w.Mode != nil},
	} {
		if !f.present {
			missing = append(missing, f.name)
		}
	}
	return missing
}

// parseEmptyResult reads the agents-exe "empty-result" object:
// {"tag": "AddMessage", "contents": "text"} or {"tag": "DoNothing"}.
func parseEmptyResult(raw json.RawMessage) (string, error) {
	var w wireEmptyResult
	if err := json.Unmarshal(raw, &w); err != nil {
		return "", fmt.Errorf(`invalid "empty-result": %v`, err)
	}
	switch w.Tag {
	case "DoNothing":
		return "", nil
	case "AddMessage":
		if w.Contents == nil {
			return "", errors.New(`"empty-result" with tag "AddMessage" needs a string "contents"`)
		}
		return *w.Contents, nil
	default:
		return "", fmt.Errorf(`invalid "empty-result" tag %q (allowed: "AddMessage", "DoNothing")`, w.Tag)
	}
}
