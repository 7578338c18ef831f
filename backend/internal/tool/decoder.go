package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxProblems bounds what one refusal lists: enough for the model to fix
// its call, never a message as long as a hostile call.
const maxProblems = 8

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
