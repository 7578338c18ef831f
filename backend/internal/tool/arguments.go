package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxArgumentDepth is how deeply a call's arguments may nest: the
// arguments object is level 1. No tool needs more, and a deeper value is
// a model (or a prompt injected into it) probing the decoder.
const MaxArgumentDepth = 64

// maxProblems bounds what one refusal lists: enough for the model to fix
// its call, never a message as long as a hostile call.
const maxProblems = 8

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
	var d argDecoder
	args, err := d.decode(compileSchema(spec.Parameters, 1), text)
	if err != nil {
		return Args{}, fmt.Errorf("invalid arguments for %s: %w", spec.Name, err)
	}
	return args, nil
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

// frame is one object or array being decoded.
type frame struct {
	schema *schema
	object bool
	// key is the member being read; index counts the members or
	// elements read; wantKey says an object's next token is a key.
	key     string
	index   int
	wantKey bool
	// seen maps the case-folded spelling of each key read to the key.
	seen map[string]string
}

// argDecoder decodes one call's arguments.
type argDecoder struct {
	stack    []frame
	out      []byte
	problems []string
	unknown  bool
	// start is where the top-level member being read begins in out;
	// names and spans are the members read.
	start int
	names []string
	spans [][2]int
}

func (d *argDecoder) decode(root *schema, text string) (Args, error) {
	if t := strings.TrimSpace(text); t == "" || t == "null" {
		text = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return Args{}, syntaxError(err)
	}
	if tok != json.Delim('{') {
		return Args{}, fmt.Errorf("the arguments must be a JSON object, got %s", kindOf(tok))
	}
	d.open(root, true)
	for len(d.stack) > 0 {
		tok, err := dec.Token()
		if err != nil {
			return Args{}, syntaxError(err)
		}
		if err := d.token(tok); err != nil {
			return Args{}, err
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return Args{}, errors.New("the arguments must be one JSON object, with nothing after it")
	}
	if len(d.problems) > 0 {
		if d.unknown {
			d.problems = append(d.problems, "accepted arguments: "+acceptedNames(root))
		}
		return Args{}, errors.New(strings.Join(d.problems, "; "))
	}
	args := Args{object: d.out, names: d.names, values: make(map[string]json.RawMessage, len(d.names))}
	for i, name := range d.names {
		args.values[name] = d.out[d.spans[i][0]:d.spans[i][1]:d.spans[i][1]]
	}
	return args, nil
}

// token takes the next token of the text.
func (d *argDecoder) token(tok json.Token) error {
	f := &d.stack[len(d.stack)-1]
	switch {
	case tok == json.Delim('}') || tok == json.Delim(']'):
		d.close(f)
		return nil
	case f.object && f.wantKey:
		d.key(f, tok.(string))
		return nil
	}
	child := d.childSchema(f)
	if len(d.stack) == 1 {
		d.start = len(d.out)
	}
	d.comma(f)
	kind := kindOf(tok)
	if !child.allows(kind, tok) && !(kind == "null" && f.object && !slices.Contains(f.schema.requiredNames(), f.key)) {
		d.problem("%s %s must be %s, got %s", d.valueWord(), d.path(), typeNames(child.types), jsonType(kind))
		child = nil
	}
	switch tok {
	case json.Delim('{'), json.Delim('['):
		if len(d.stack) == MaxArgumentDepth {
			return fmt.Errorf("the arguments nest deeper than %d levels", MaxArgumentDepth)
		}
		d.open(child, tok == json.Delim('{'))
		return nil
	}
	switch v := tok.(type) {
	case string:
		d.out = appendString(d.out, v)
	case json.Number:
		d.out = append(d.out, v...)
	case bool:
		d.out = strconv.AppendBool(d.out, v)
	case nil:
		d.out = append(d.out, "null"...)
	}
	d.valueDone()
	return nil
}

// key takes an object's key: refused when the object has it already, in
// any case, or when the schema does not allow it.
func (d *argDecoder) key(f *frame, key string) {
	f.wantKey, f.key = false, key
	folded := foldKey(key)
	switch prev, ok := f.seen[folded]; {
	case !ok:
		f.seen[folded] = key
	case prev == key:
		d.problem("duplicate key %s", d.path())
	default:
		d.problem("keys %s and %q differ only in case: give the key once, spelt as the schema says", d.path(), prev)
	}
	if s := f.schema; s != nil {
		if _, declared := s.properties[key]; !declared {
			name, variant := s.folded[folded]
			switch {
			case variant:
				d.problem("unknown %s %s: names are case-sensitive; did you mean %q?", d.memberWord(), d.path(), name)
			case s.closed:
				d.problem("unknown %s %s", d.memberWord(), d.path())
			}
			d.unknown = d.unknown || (variant || s.closed) && len(d.stack) == 1
		}
	}
	if f.index > 0 {
		d.out = append(d.out, ',')
	}
	d.out = appendString(d.out, key)
	d.out = append(d.out, ':')
}

// childSchema is the schema of the value about to be read in f.
func (d *argDecoder) childSchema(f *frame) *schema {
	s := f.schema
	switch {
	case s == nil:
		return nil
	case !f.object:
		return s.items
	}
	if c, declared := s.properties[f.key]; declared {
		return c
	}
	if _, variant := s.folded[foldKey(f.key)]; variant || s.closed {
		return nil
	}
	return s.additional
}

// comma separates array elements; an object's keys write their own.
func (d *argDecoder) comma(f *frame) {
	if !f.object && f.index > 0 {
		d.out = append(d.out, ',')
	}
}

func (d *argDecoder) open(s *schema, object bool) {
	f := frame{schema: s, object: object, wantKey: object}
	if object {
		f.seen = map[string]string{}
		d.out = append(d.out, '{')
	} else {
		d.out = append(d.out, '[')
	}
	d.stack = append(d.stack, f)
}

// close ends an object (checking its required keys) or an array.
func (d *argDecoder) close(f *frame) {
	if f.object {
		for _, name := range f.schema.requiredNames() {
			if f.seen[foldKey(name)] != name {
				f.key = name
				d.problem("missing required %s %s", d.memberWord(), d.path())
			}
		}
		d.out = append(d.out, '}')
	} else {
		d.out = append(d.out, ']')
	}
	d.stack = d.stack[:len(d.stack)-1]
	if len(d.stack) > 0 {
		d.valueDone()
	}
}

// valueDone ends a value: the next token of an object is a key.
func (d *argDecoder) valueDone() {
	f := &d.stack[len(d.stack)-1]
	if f.object {
		if len(d.stack) == 1 {
			d.names = append(d.names, f.key)
			d.spans = append(d.spans, [2]int{d.start, len(d.out)})
		}
		f.wantKey = true
	}
	f.index++
}

func (s *schema) requiredNames() []string {
	if s == nil {
		return nil
	}
	return s.required
}

func (d *argDecoder) problem(format string, args ...any) {
	if len(d.problems) < maxProblems {
		d.problems = append(d.problems, fmt.Sprintf(format, args...))
	}
}

// memberWord names what the key being read is: an argument at the top,
// a field below.
func (d *argDecoder) memberWord() string {
	if len(d.stack) == 1 {
		return "argument"
	}
	return "field"
}

// valueWord names what the value being read is: an argument's value, a
// field's or an element's.
func (d *argDecoder) valueWord() string {
	if !d.stack[len(d.stack)-1].object {
		return "element"
	}
	return d.memberWord()
}

// path names the value being read for a message, quoted: "prompt",
// "options.force", "files[2]"; built only for a problem.
func (d *argDecoder) path() string {
	var b strings.Builder
	for i, f := range d.stack {
		switch {
		case f.object && i == 0:
			b.WriteString(f.key)
		case f.object:
			b.WriteByte('.')
			b.WriteString(f.key)
		default:
			fmt.Fprintf(&b, "[%d]", f.index)
		}
	}
	return strconv.Quote(b.String())
}

// acceptedNames lists the arguments a schema declares.
func acceptedNames(s *schema) string {
	if s == nil || len(s.names) == 0 {
		return "none"
	}
	return strings.Join(s.names, ", ")
}

func syntaxError(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the arguments are not valid JSON: unexpected end of JSON input")
	}
	return fmt.Errorf("the arguments are not valid JSON: %v", err)
}

// kindOf names a token's JSON type; integral numbers are "integer" only
// when written without a fraction or exponent.
func kindOf(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "object"
		}
		return "array"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(string(v), ".eE") {
			return "number"
		}
		return "integer"
	case bool:
		return "boolean"
	}
	return "null"
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

// appendString writes s as a JSON string: only what JSON requires is
// escaped, so the text reads as the model meant it.
func appendString(out []byte, s string) []byte {
	out = append(out, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			out = append(out, '\\', byte(r))
		case r == '\n':
			out = append(out, `\n`...)
		case r == '\r':
			out = append(out, `\r`...)
		case r == '\t':
			out = append(out, `\t`...)
		case r < 0x20:
			out = append(out, fmt.Sprintf(`\u%04x`, r)...)
		default:
			out = utf8.AppendRune(out, r)
		}
	}
	return append(out, '"')
}

// foldKey is a key's spelling with case folded as strings.EqualFold
// folds it (so "ſ" and "s" are one letter): two keys are one key in
// different cases when their folded spellings are equal.
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s) && ascii; i++ {
		ascii = s[i] < utf8.RuneSelf
	}
	if ascii {
		// The smallest letter of each ASCII letter's fold orbit is its
		// upper case, as below.
		return strings.ToUpper(s)
	}
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}
