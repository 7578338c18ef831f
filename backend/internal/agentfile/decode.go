package agentfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// decoder reads the JSON of one file field by field, so that every problem
// names the field it is about.
//
// It keeps the first error only: once one is set, every read returns a zero
// value. A file then reports the problem that matters (the first) rather
// than a cascade of its consequences.
type decoder struct {
	err      *Error
	warnings []*Error
}

func (d *decoder) failed() bool { return d.err != nil }

func (d *decoder) failf(field, format string, args ...any) {
	if d.err == nil {
		d.err = &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) warnf(field, format string, args ...any) {
	d.warnings = append(d.warnings, &Error{Field: field, Reason: fmt.Sprintf(format, args...)})
}

// object is one JSON object being read; it remembers which keys were read
// so that the others can be reported as unknown.
type object struct {
	path   string
	values map[string]json.RawMessage
	read   map[string]bool
}

func (o *object) field(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// get returns the value of key. A null value counts as absent, as it does
// for agents-exe's optional fields.
func (o *object) get(key string) (json.RawMessage, bool) {
	o.read[key] = true
	raw, ok := o.values[key]
	if !ok || kindOf(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// getFirst returns the first of keys that is present. Used where agents-exe
// files and its documentation disagree on capitalisation ("Path"/"path").
func (o *object) getFirst(keys ...string) (key string, raw json.RawMessage, ok bool) {
	for _, k := range keys {
		if raw, ok := o.get(k); ok {
			return k, raw, true
		}
	}
	return keys[0], nil, false
}

func (o *object) has(key string) bool {
	_, ok := o.values[key]
	return ok
}

// unread returns the keys never read, sorted.
func (o *object) unread() []string {
	var keys []string
	for k := range o.values {
		if !o.read[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// known returns the keys looked up in o, sorted: the fields its reader
// knows, whether the file sets them or not.
func (o *object) known() []string {
	keys := make([]string, 0, len(o.read))
	for k := range o.read {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// kindOf names the JSON type of raw, for messages.
func kindOf(raw json.RawMessage) string {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "list"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// isEmptyValue reports whether raw carries nothing: null, "", [] or {}.
func isEmptyValue(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	switch string(t) {
	case "", "null", `""`:
		return true
	}
	if t[0] == '[' || t[0] == '{' {
		return len(bytes.TrimSpace(t[1:len(t)-1])) == 0
	}
	return false
}

func (d *decoder) object(field string, raw json.RawMessage) *object {
	if d.failed() {
		return nil
	}
	if k := kindOf(raw); k != "object" {
		d.failf(field, "must be an object, got %s", k)
		return nil
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(raw, &values); err != nil {
		d.failf(field, "%v", err)
		return nil
	}
	return &object{path: field, values: values, read: map[string]bool{}}
}

func (d *decoder) str(field string, raw json.RawMessage) string {
	if d.failed() {
		return ""
	}
	if k := kindOf(raw); k != "string" {
		d.failf(field, "must be a string, got %s", k)
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		d.failf(field, "%v", err)
	}
	return s
}

func (d *decoder) boolean(field string, raw json.RawMessage) bool {
	if d.failed() {
		return false
	}
	if k := kindOf(raw); k != "boolean" {
		d.failf(field, "must be true or false, got %s", k)
		return false
	}
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte("true"))
}

func (d *decoder) integer(field string, raw json.RawMessage) int {
	if d.failed() {
		return 0
	}
	if k := kindOf(raw); k != "number" {
		d.failf(field, "must be a whole number, got %s", k)
		return 0
	}
	text := string(bytes.TrimSpace(raw))
	n, err := strconv.Atoi(text)
	if err != nil {
		d.failf(field, "must be a whole number, got %s", text)
	}
	return n
}

func (d *decoder) number(field string, raw json.RawMessage) float64 {
	if d.failed() {
		return 0
	}
	if k := kindOf(raw); k != "number" {
		d.failf(field, "must be a number, got %s", k)
		return 0
	}
	text := string(bytes.TrimSpace(raw))
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		d.failf(field, "must be a number, got %s", text)
	}
	return f
}

func (d *decoder) list(field string, raw json.RawMessage) []json.RawMessage {
	if d.failed() {
		return nil
	}
	if k := kindOf(raw); k != "list" {
		d.failf(field, "must be a list, got %s", k)
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.failf(field, "%v", err)
	}
	return items
}

func (d *decoder) strings(field string, raw json.RawMessage) []string {
	items := d.list(field, raw)
	out := make([]string, 0, len(items))
	for i, item := range items {
		out = append(out, d.str(index(field, i), item))
	}
	return out
}

// requiredString reads a string that must be present and not blank.
func (d *decoder) requiredString(o *object, key string) string {
	if d.failed() {
		return ""
	}
	raw, ok := o.get(key)
	if !ok {
		d.failf(o.field(key), "required field is missing")
		return ""
	}
	s := d.str(o.field(key), raw)
	if !d.failed() && strings.TrimSpace(s) == "" {
		d.failf(o.field(key), "must not be empty")
	}
	return s
}

// optionalString reads a string that may be absent ("" then).
func (d *decoder) optionalString(o *object, key string) string {
	raw, ok := o.get(key)
	if !ok {
		return ""
	}
	return d.str(o.field(key), raw)
}

// optionalBool reads a boolean that defaults to def when absent.
func (d *decoder) optionalBool(o *object, key string, def bool) bool {
	raw, ok := o.get(key)
	if !ok {
		return def
	}
	return d.boolean(o.field(key), raw)
}

// warnUnread reports, as warnings, the keys of o nobody read. Keys for
// which ignored is true are fields of the agents-exe format this server
// does not implement; they are reported only when they carry something.
func (d *decoder) warnUnread(o *object, ignored func(key string) bool) {
	if o == nil {
		return
	}
	for _, key := range o.unread() {
		switch {
		case ignored(key):
			if !isEmptyValue(o.values[key]) {
				d.warnf(o.field(key), "not supported by this server; ignored")
			}
		default:
			if meant := suggestField(key, o.known()); meant != "" {
				d.warnf(o.field(key), "unknown field; ignored (did you mean %q?)", meant)
			} else {
				d.warnf(o.field(key), "unknown field; ignored")
			}
		}
	}
}

// unsupportedField is a field of the agents-exe format this server does
// not implement, and what a file that sets it goes without.
type unsupportedField struct {
	name string
	cost string // "" when there is nothing more to say than "ignored"
}

// warnUnsupported reports, as warnings, the fields of o that this server
// does not implement, when they carry something. Reading them makes them
// known names, so a misspelling of one is recognised too.
func (d *decoder) warnUnsupported(o *object, fields []unsupportedField) {
	for _, f := range fields {
		raw, ok := o.get(f.name)
		if !ok || isEmptyValue(raw) {
			continue
		}
		if f.cost == "" {
			d.warnf(o.field(f.name), "not supported by this server; ignored")
		} else {
			d.warnf(o.field(f.name), "not supported by this server; ignored: %s", f.cost)
		}
	}
}

// suggestField returns the field of known that key most likely misspells
// (case aside, at most a few letters added, dropped, changed or swapped),
// or "" when none is close.
func suggestField(key string, known []string) string {
	limit := min(1+len(key)/6, 3)
	best, bestDist := "", limit+1
	for _, k := range known {
		if dist := editDistance(strings.ToLower(key), strings.ToLower(k)); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best
}

// editDistance counts the single-letter insertions, deletions,
// substitutions and swaps of neighbours that turn a into b (the optimal
// string alignment distance), over bytes: field names are ASCII.
func editDistance(a, b string) int {
	// Three rows of the dynamic programming table: two back, one back,
	// and the one being filled.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// noIgnoredFields is warnUnread's ignored for objects where every unread
// key is unknown.
func noIgnoredFields(string) bool { return false }

func index(field string, i int) string {
	return fmt.Sprintf("%s[%d]", field, i)
}
