package tool

import (
	"encoding/json"
	"fmt"
)

// CheckSchema reports why a tool's parameters schema cannot be read as
// the arguments' decoder reads it, nil when it can. A schema the decoder
// cannot read checks nothing (see compileSchema), so the calls of a
// tool with such a schema would reach it, and the approval that judges
// them, unchecked: such a tool is refused where it is loaded. Each
// keyword the decoder uses must have its JSON Schema form ("type" a name
// or a list of names, "properties" an object of schemas, "required" a
// list of names, "additionalProperties" and "items" a schema); a nested
// schema may also be true or false. An empty schema is none at all.
func CheckSchema(raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	return checkSchema(raw, "parameters", 1, false)
}

func checkSchema(raw json.RawMessage, at string, depth int, nested bool) error {
	if depth > MaxArgumentDepth {
		return fmt.Errorf("%s: nested deeper than %d levels", at, MaxArgumentDepth)
	}
	var b bool
	if nested && json.Unmarshal(raw, &b) == nil {
		return nil // true accepts anything, false nothing: both are checked
	}
	var kw map[string]json.RawMessage
	if json.Unmarshal(raw, &kw) != nil || kw == nil {
		return fmt.Errorf("%s: a schema must be a JSON object", at)
	}
	if t, ok := kw["type"]; ok {
		var one string
		var many []string
		if json.Unmarshal(t, &one) != nil && json.Unmarshal(t, &many) != nil {
			return fmt.Errorf("%s.type: must be a type's name or a list of them", at)
		}
	}
	if p, ok := kw["properties"]; ok {
		names, values := objectMembers(p)
		if names == nil {
			return fmt.Errorf("%s.properties: must be an object", at)
		}
		for i, name := range names {
			if err := checkSchema(values[i], at+".properties."+name, depth+1, true); err != nil {
				return err
			}
		}
	}
	if r, ok := kw["required"]; ok {
		var names []string
		if json.Unmarshal(r, &names) != nil {
			return fmt.Errorf("%s.required: must be a list of names", at)
		}
	}
	if ap, ok := kw["additionalProperties"]; ok {
		if err := checkSchema(ap, at+".additionalProperties", depth+1, true); err != nil {
			return err
		}
	}
	if items, ok := kw["items"]; ok {
		if err := checkSchema(items, at+".items", depth+1, true); err != nil {
			return err
		}
	}
	return nil
}
