package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"sync"
)

// MaxArgumentDepth is how deeply a call's arguments may nest: the
// arguments object is level 1. No tool needs more, and a deeper value is
// a model (or a prompt injected into it) probing the decoder.
const MaxArgumentDepth = 64

// Args are a call's arguments as DecodeArgs decoded them: the one value
// an approval policy judges and the tool runs on. Every string in it is
// decoded (escapes resolved) and every value is in one canonical JSON
// spelling, so two readers of it cannot disagree.
type Args struct {
	object json.RawMessage
	names  []string
	values map[string]json.RawMessage
}

// DecodeArgs decodes a call's arguments, the JSON text the model wrote,
// and checks them against the tool's parameters schema. Empty text and
// null are an empty object. It refuses, saying why in words the model
// can act on:
//
//   - text that is not one JSON object, or nests deeper than
//     MaxArgumentDepth;
//   - a key given twice in one object, in the same spelling or in
//     spellings that differ only in case ({"prompt": …, "PROMPT": …}):
//     decoders disagree on which one wins;
//   - a key that differs only in case from one the schema declares
//     ("Prompt" for "prompt"): keys are case-sensitive, and a lenient
//     decoder would take it for the declared one;
//   - a key the schema does not declare where it closes the object
//     ("additionalProperties": false);
//   - a declared value of the wrong JSON type, and a missing required
//     one. A null stands for an optional value left out.
//
// The schema keywords it follows are type, properties, required,
// additionalProperties and items, at every level; it ignores the others.
// Decoding is linear in the text's length.
func DecodeArgs(spec Spec, text string) (Args, error) {
	return decodeWith(compileSchema(spec.Parameters, 1), spec.Name, text)
}

func decodeWith(s *schema, name, text string) (Args, error) {
	var d argDecoder
	args, err := d.decode(s, text)
	if err != nil {
		return Args{}, fmt.Errorf("invalid arguments for %s: %w", name, err)
	}
	return args, nil
}

// Schemas is DecodeArgs with the schemas it compiled kept: a tool's
// schema is the same text call after call, and compiling it costs more
// than decoding most calls. The zero value is ready; it is safe for
// concurrent use.
type Schemas struct {
	mu       sync.Mutex
	compiled map[string]*schema
}

// maxSchemas bounds what Schemas keeps; past it, it starts afresh (the
// tools of the agents loaded are far fewer).
const maxSchemas = 1024

// Decode is DecodeArgs(spec, text).
func (c *Schemas) Decode(spec Spec, text string) (Args, error) {
	c.mu.Lock()
	s, ok := c.compiled[string(spec.Parameters)]
	c.mu.Unlock()
	if !ok {
		// A compiled schema is never changed after, so sharing it is
		// safe; two callers compiling the same one at once is harmless.
		s = compileSchema(spec.Parameters, 1)
		c.mu.Lock()
		if c.compiled == nil || len(c.compiled) >= maxSchemas {
			c.compiled = map[string]*schema{}
		}
		c.compiled[string(spec.Parameters)] = s
		c.mu.Unlock()
	}
	return decodeWith(s, spec.Name, text)
}

// ArgumentProblem says why no call of the tool can give an argument
// spelt name, "" when one can: the schema declares a name that differs
// from it only in case, or closes the arguments object without declaring
// it. An approval rule on such an argument would never match.
func ArgumentProblem(spec Spec, name string) string {
	s := compileSchema(spec.Parameters, 1)
	if s == nil {
		return ""
	}
	if _, declared := s.properties[name]; declared {
		return ""
	}
	if declared, variant := s.folded[foldKey(name)]; variant {
		return fmt.Sprintf("%s takes %q, not %q: names are case-sensitive", spec.Name, declared, name)
	}
	if s.closed {
		return fmt.Sprintf("%s takes no argument %q (it takes %s)", spec.Name, name, acceptedNames(s))
	}
	return ""
}

// JSON is the arguments object in its canonical spelling.
func (a Args) JSON() json.RawMessage {
	if a.object == nil {
		return json.RawMessage("{}")
	}
	return a.object
}

// Names are the arguments given, in the order the model gave them.
func (a Args) Names() []string { return a.names }

// Value is an argument's JSON value, false when the call does not give
// it.
func (a Args) Value(name string) (json.RawMessage, bool) {
	v, ok := a.values[name]
	return v, ok
}

// Values are the arguments given, each as its JSON value: a copy the
// caller may keep.
func (a Args) Values() map[string]json.RawMessage { return maps.Clone(a.values) }

// String is a string argument's text; "" when it is not given, null or
// not a string.
func (a Args) String(name string) string {
	var s string
	if v, ok := a.values[name]; ok && len(v) > 0 && v[0] == '"' {
		_ = json.Unmarshal(v, &s)
	}
	return s
}

// Bool is a boolean argument; false when it is not given or not a
// boolean.
func (a Args) Bool(name string) bool { return string(a.values[name]) == "true" }

// Int is an integer argument, saturated at the bounds of int64; 0 when
// it is not given or not an integral number.
func (a Args) Int(name string) int64 {
	v := string(a.values[name])
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return i
	}
	f, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange), f != math.Trunc(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
