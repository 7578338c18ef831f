package apijson

import (
	"encoding/json"
	"strconv"
)

// parseValid reads data, one JSON value that json.Valid accepted, as
// parseValue reads it through a json.Decoder, with the same refusals in
// the same order (a key given twice, a key the shape does not take).
// Every error parseValue may still give for a valid body is one of
// those: syntax is not checked again. It spares a body the decoder's
// Token, which for every key and scalar builds, and drops, a syntax
// error for the byte that ends it; a prompt's body paid most of its
// reading for those.
func parseValid(data []byte, sh *shape) (any, error) {
	r := validReader{data: data}
	return r.value(sh)
}

// validReader walks valid JSON: it only looks for where each value ends.
type validReader struct {
	data []byte
	i    int
}

func (r *validReader) space() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *validReader) value(sh *shape) (any, error) {
	r.space()
	switch c := r.data[r.i]; c {
	case '{':
		r.i++
		obj := map[string]any{}
		for {
			r.space()
			if r.data[r.i] == '}' {
				r.i++
				return obj, nil
			}
			if r.data[r.i] == ',' {
				r.i++
				r.space()
			}
			k, err := r.str()
			if err != nil {
				return nil, err
			}
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
			r.space()
			r.i++ // the colon
			v, err := r.value(inner)
			if err != nil {
				return nil, within(err, k)
			}
			obj[k] = v
		}
	case '[':
		r.i++
		arr := []any{}
		for i := 0; ; i++ {
			r.space()
			if r.data[r.i] == ']' {
				r.i++
				return arr, nil
			}
			if r.data[r.i] == ',' {
				r.i++
			}
			v, err := r.value(sh)
			if err != nil {
				return nil, within(err, "["+strconv.Itoa(i)+"]")
			}
			arr = append(arr, v)
		}
	case '"':
		return r.str()
	case 't':
		r.i += len("true")
		return true, nil
	case 'f':
		r.i += len("false")
		return false, nil
	case 'n':
		r.i += len("null")
		return nil, nil
	}
	start := r.i
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case '-', '+', '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			r.i++
			continue
		}
		break
	}
	return json.Number(r.data[start:r.i]), nil
}

// str reads the string at r.i: as it stands when it has no escape, and
// unquoted as encoding/json unquotes it otherwise.
func (r *validReader) str() (string, error) {
	start := r.i // the opening quote
	escaped := false
	for r.i++; r.data[r.i] != '"'; r.i++ {
		if r.data[r.i] == '\\' {
			escaped = true
			r.i++ // the escaped byte, which may be a quote
		}
	}
	r.i++
	if !escaped {
		return string(r.data[start+1 : r.i-1]), nil
	}
	var s string
	if err := json.Unmarshal(r.data[start:r.i], &s); err != nil {
		return "", notJSON(err)
	}
	return s, nil
}
