package tool

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// schema is the part of a JSON schema the decoder checks; nil checks
// nothing.
type schema struct {
	// types are the JSON types a value may have; none: any.
	types []string
	// properties are the declared keys of an object, in declaration
	// order in names; folded maps each declared key's case-folded
	// spelling to it.
	properties map[string]*schema
	names      []string
	folded     map[string]string
	required   []string
	// closed refuses keys the schema does not declare; additional is
	// the schema of those it allows.
	closed     bool
	additional *schema
	items      *schema
}

// compileSchema reads the keywords the decoder checks. The schema comes
// from the tool, not the model, and a schema that cannot be read checks
// nothing rather than refuse every call; it is read MaxArgumentDepth
// levels deep at most, as deep as any value it can check.
func compileSchema(raw json.RawMessage, depth int) *schema {
	var kw map[string]json.RawMessage
	if depth > MaxArgumentDepth || json.Unmarshal(raw, &kw) != nil || kw == nil {
		return nil
	}
	s := &schema{}
	var one string
	if json.Unmarshal(kw["type"], &one) == nil && one != "" {
		s.types = []string{one}
	} else {
		_ = json.Unmarshal(kw["type"], &s.types)
	}
	if names, values := objectMembers(kw["properties"]); names != nil {
		s.properties = make(map[string]*schema, len(names))
		s.folded = make(map[string]string, len(names))
		for i, name := range names {
			if _, dup := s.properties[name]; dup {
				continue
			}
			s.names = append(s.names, name)
			s.properties[name] = compileSchema(values[i], depth+1)
			s.folded[foldKey(name)] = name
		}
	}
	_ = json.Unmarshal(kw["required"], &s.required)
	var open bool
	if json.Unmarshal(kw["additionalProperties"], &open) == nil {
		s.closed = !open
	} else if ap, ok := kw["additionalProperties"]; ok {
		s.additional = compileSchema(ap, depth+1)
	}
	if items, ok := kw["items"]; ok {
		s.items = compileSchema(items, depth+1)
	}
	return s
}

// objectMembers lists the members of a JSON object in their order; nil
// when raw is not an object.
func objectMembers(raw json.RawMessage) ([]string, []json.RawMessage) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil
	}
	names := []string{}
	var values []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		name, isKey := tok.(string)
		var v json.RawMessage
		if err != nil || !isKey || dec.Decode(&v) != nil {
			return nil, nil
		}
		names, values = append(names, name), append(values, v)
	}
	return names, values
}

// allows reports whether a value of kind passes the schema's type;
// integral numbers are integers.
func (s *schema) allows(kind string, tok json.Token) bool {
	if s == nil || len(s.types) == 0 {
		return true
	}
	for _, t := range s.types {
		switch {
		case t == kind, t == "number" && kind == "integer":
			return true
		case t == "integer" && kind == "number":
			if f, err := strconv.ParseFloat(string(tok.(json.Number)), 64); err == nil && f == math.Trunc(f) {
				return true
			}
		}
	}
	return false
}

func (s *schema) requiredNames() []string {
	if s == nil {
		return nil
	}
	return s.required
}

// acceptedNames lists the arguments a schema declares.
func acceptedNames(s *schema) string {
	if s == nil || len(s.names) == 0 {
		return "none"
	}
	return strings.Join(s.names, ", ")
}

// jsonType is a kind as JSON names its types: an integer is a number.
func jsonType(kind string) string {
	if kind == "integer" {
		return "number"
	}
	return kind
}

// typeNames says which types a schema allows: "a string or null".
func typeNames(types []string) string {
	named := make([]string, len(types))
	for i, t := range types {
		switch {
		case t == "null":
			named[i] = t
		case t != "" && strings.IndexByte("aeiou", t[0]) >= 0:
			named[i] = "an " + t
		default:
			named[i] = "a " + t
		}
	}
	return strings.Join(named, " or ")
}
