package apijson

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// decodeObject reads obj into m and refuses the keys no field took.
func (d decoder) decodeObject(m protoreflect.Message, obj map[string]any, path string) error {
	used := map[string]bool{}
	if err := d.decodeFields(m, obj, path, used); err != nil {
		return err
	}
	var unknown []string
	for k := range obj {
		if !used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	if why := ofAnotherMember(m, unknown[0]); why != "" {
		return &Error{Field: join(path, unknown[0]), Problem: why}
	}
	return &Error{Field: join(path, unknown[0]), Problem: notAField(m.Descriptor())}
}

// ofAnotherMember says, of a key no field took, which members of a
// flattened oneof it belongs to when another member was given (a mail
// of kind control with a text): the list of the message's fields holds
// it, so "is not a field here" would not say what is wrong. It is ""
// for a key of no member.
func ofAnotherMember(m protoreflect.Message, key string) string {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if _, ok := flatRule(fd); ok {
			o := fd.ContainingOneof()
			if m.WhichOneof(o) != fd {
				continue
			}
			var owners []string
			for j := range o.Fields().Len() {
				other := o.Fields().Get(j)
				if other != fd && (key == name(other) || slices.Contains(Fields(other.Message()), key)) {
					owners = append(owners, name(other))
				}
			}
			if len(owners) > 0 && !slices.Contains(Fields(fd.Message()), key) {
				return fmt.Sprintf("belongs to %s, not to the %s given: give the fields of one of %s", strings.Join(owners, " or "), name(fd), strings.Join(memberNames(o), ", "))
			}
			if why := ofAnotherMember(m.Get(fd).Message(), key); why != "" {
				return why
			}
			continue
		}
		if inlined[fd.FullName()] && m.Has(fd) {
			if why := ofAnotherMember(m.Get(fd).Message(), key); why != "" {
				return why
			}
		}
	}
	return ""
}

// notAField is the problem of a key no field of md takes.
func notAField(md protoreflect.MessageDescriptor) string {
	return "is not a field here; the fields are " + strings.Join(Fields(md), ", ")
}

// decodeFields reads into m the keys of obj that are m's, marking them
// used; an inlined message or a flattened oneof reads from the same obj.
func (d decoder) decodeFields(m protoreflect.Message, obj map[string]any, path string, used map[string]bool) error {
	fields := m.Descriptor().Fields()
	oneofsDone := map[protoreflect.FullName]bool{}
	for i := range fields.Len() {
		fd := fields.Get(i)
		if hidden(fd) {
			continue
		}
		if _, ok := flatRule(fd); ok {
			o := fd.ContainingOneof()
			if !oneofsDone[o.FullName()] {
				oneofsDone[o.FullName()] = true
				if err := d.decodeFlatOneof(m, o, obj, path, used); err != nil {
					return err
				}
			}
			continue
		}
		if inlined[fd.FullName()] {
			sub := m.NewField(fd).Message()
			before := len(used)
			// Given nested as well as at the top, the message's fields
			// are noted as they are read, to refuse one given in both.
			d := d
			if nestedIn(fd, obj) {
				d.given = map[fieldOf]place{}
			}
			if err := d.decodeKeys(m, fd, obj, path, used, func(v any, p string) error { return d.decodeMessage(sub, v, p) }); err != nil {
				return err
			}
			if err := d.decodeFields(sub, obj, path, used); err != nil {
				return err
			}
			if len(used) > before {
				m.Set(fd, protoreflect.ValueOfMessage(sub))
			}
			continue
		}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			if other := m.WhichOneof(o); other != nil && givenIn(fd, obj) {
				return &Error{Field: join(path, name(fd)), Problem: fmt.Sprintf("cannot be given with `%s`: set one of %s", name(other), strings.Join(memberNames(o), ", "))}
			}
		}
		if err := d.decodeKeys(m, fd, obj, path, used, func(v any, p string) error { return d.decodeField(m, fd, v, p) }); err != nil {
			return err
		}
	}
	return nil
}

// nestedIn reports whether obj gives fd an object.
func nestedIn(fd protoreflect.FieldDescriptor, obj map[string]any) bool {
	for _, k := range keys(fd) {
		if _, ok := obj[k].(map[string]any); ok {
			return true
		}
	}
	return false
}

// givenIn reports whether obj gives fd a value.
func givenIn(fd protoreflect.FieldDescriptor, obj map[string]any) bool {
	for _, k := range keys(fd) {
		if v, ok := obj[k]; ok && v != nil {
			return true
		}
	}
	return false
}

// decodeKeys calls read with the value of each key of obj that names fd;
// null leaves the field unset. A field is given once: under one of its
// names, and in one of the forms it is read in (nested or at the top).
func (d decoder) decodeKeys(m protoreflect.Message, fd protoreflect.FieldDescriptor, obj map[string]any, path string, used map[string]bool, read func(v any, path string) error) error {
	first := ""
	for _, k := range keys(fd) {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if first != "" {
			return givenTwice(path, fd, place{path, first}, k)
		}
		first = k
		if err := d.give(m, fd, path, k); err != nil {
			return err
		}
		used[k] = true
		if v == nil {
			continue
		}
		if err := read(v, join(path, k)); err != nil {
			return err
		}
	}
	return nil
}

// decoder reads one body.
type decoder struct {
	// given, while a message inlined in its holder's object is read
	// from both its nested form and the top, says where each of its
	// fields was given, so that one given in both is refused rather
	// than silently taken from the second. Nil otherwise.
	given map[fieldOf]place
}

type fieldOf struct {
	m  protoreflect.Message
	fd protoreflect.FieldDescriptor
}

// place is where a field was given: the key under the object's path,
// joined only for an error.
type place struct{ path, key string }

// give notes that fd of m is given under key in the object at path,
// refusing a second time.
func (d decoder) give(m protoreflect.Message, fd protoreflect.FieldDescriptor, path, key string) error {
	if d.given == nil {
		return nil
	}
	at := fieldOf{m, fd}
	if first, ok := d.given[at]; ok {
		return givenTwice(path, fd, first, key)
	}
	d.given[at] = place{path, key}
	return nil
}

// givenTwice refuses fd given again under key in the object at path, as
// the query refuses a parameter given in both its spellings.
func givenTwice(path string, fd protoreflect.FieldDescriptor, first place, key string) error {
	return &Error{Field: join(path, name(fd)), Problem: fmt.Sprintf("is given twice, as %s and as %s: give it once", join(first.path, first.key), join(path, key))}
}

// keys are the names a field is read under: its JSON name, its proto
// name and protojson's camelCase one. A field renamed by the rules is read
// under its new name only (and that name in camelCase): its old one is
// another field's in the same object.
func keys(fd protoreflect.FieldDescriptor) []string {
	if k, ok := keyCache.Load(fd); ok {
		return k.([]string)
	}
	k := fieldKeys(fd)
	keyCache.Store(fd, k)
	return k
}

// keyCache holds each field's keys, worked out once: every request's
// decoding asks for the keys of every field of its messages.
var keyCache sync.Map // protoreflect.FieldDescriptor → []string

func fieldKeys(fd protoreflect.FieldDescriptor) []string {
	n := name(fd)
	alts := []string{string(fd.Name()), fd.JSONName()}
	if _, ok := renamed[fd.FullName()]; ok {
		alts = []string{CamelCase(n)}
	}
	alts = append(alts, aliases[fd.FullName()]...)
	out := []string{n}
	for _, k := range alts {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// CamelCase is a snake_case name in camelCase, the other spelling every
// name is read under.
func CamelCase(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// decodeFlatOneof reads a flattened oneof: a member given nested under its
// own name, or named by the rule's key, or else the first member whose
// fields hold every key of obj that belongs to some member.
func (d decoder) decodeFlatOneof(m protoreflect.Message, o protoreflect.OneofDescriptor, obj map[string]any, path string, used map[string]bool) error {
	members := o.Fields()
	for i := range members.Len() {
		fd := members.Get(i)
		for _, k := range keys(fd) {
			// A key holding no object is not this member nested: the
			// discriminator of a flattened oneof inside it may share
			// its name (MailBody's control).
			if _, ok := obj[k].(map[string]any); ok {
				return d.decodeKeys(m, fd, obj, path, used, func(v any, p string) error { return d.decodeField(m, fd, v, p) })
			}
		}
	}
	rule := flattened[o.FullName()]
	var member protoreflect.FieldDescriptor
	if v, ok := obj[rule.key]; ok && v != nil {
		s, isString := v.(string)
		if rule.ofField {
			member = members.ByName(protoreflect.Name(strings.ReplaceAll(s, ".", "_")))
			if member == nil {
				return nil // an event kind without a body
			}
		} else {
			used[rule.key] = true
			if isString {
				member = members.ByName(protoreflect.Name(s))
			}
			if member == nil {
				return &Error{Field: join(path, rule.key), Problem: "must be one of " + strings.Join(memberNames(o), ", ")}
			}
		}
	} else {
		member = guessMember(o, obj, used)
	}
	if member == nil {
		return nil
	}
	if err := d.give(m, member, path, flatKey(member, obj, rule)); err != nil {
		return err
	}
	sub := m.NewField(member).Message()
	if err := d.decodeFields(sub, obj, path, used); err != nil {
		return err
	}
	m.Set(member, protoreflect.ValueOfMessage(sub))
	return nil
}

// flatKey names the key a flattened member was given by: its rule's key,
// or the first of its fields in obj.
func flatKey(member protoreflect.FieldDescriptor, obj map[string]any, rule oneofRule) string {
	if _, ok := obj[rule.key]; ok && !rule.ofField {
		return rule.key
	}
	for _, k := range Fields(member.Message()) {
		if _, ok := obj[k]; ok {
			return k
		}
	}
	return name(member)
}

// guessMember is the first member of o whose fields hold every unused
// key of obj that some member has; nil when obj has none.
func guessMember(o protoreflect.OneofDescriptor, obj map[string]any, used map[string]bool) protoreflect.FieldDescriptor {
	members := o.Fields()
	sets := make([][]string, members.Len())
	var given []string
	for i := range members.Len() {
		sets[i] = Fields(members.Get(i).Message())
		for _, k := range sets[i] {
			if _, ok := obj[k]; ok && !used[k] && !slices.Contains(given, k) {
				given = append(given, k)
			}
		}
	}
	if len(given) == 0 {
		return nil
	}
	for i, set := range sets {
		if !slices.ContainsFunc(given, func(k string) bool { return !slices.Contains(set, k) }) {
			return members.Get(i)
		}
	}
	return nil
}

func memberNames(o protoreflect.OneofDescriptor) []string {
	var out []string
	for i := range o.Fields().Len() {
		out = append(out, string(o.Fields().Get(i).Name()))
	}
	return out
}

// Fields lists the keys an object of md is read with, in their snake_case
// form, through inlined messages and flattened oneofs.
func Fields(md protoreflect.MessageDescriptor) []string {
	var out []string
	add := func(k string) {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if hidden(fd) {
			continue
		}
		if rule, ok := flatRule(fd); ok {
			if !rule.ofField {
				add(rule.key)
			}
			add(name(fd))
			for _, k := range Fields(fd.Message()) {
				add(k)
			}
			continue
		}
		add(name(fd))
		if inlined[fd.FullName()] {
			for _, k := range Fields(fd.Message()) {
				add(k)
			}
		}
	}
	return out
}

func (d decoder) decodeField(m protoreflect.Message, fd protoreflect.FieldDescriptor, v any, path string) error {
	switch {
	case fd.IsList():
		arr, ok := v.([]any)
		if !ok {
			return &Error{Field: path, Problem: "must be a list"}
		}
		list := m.Mutable(fd).List()
		for i, el := range arr {
			p := fmt.Sprintf("%s[%d]", path, i)
			if el == nil {
				return &Error{Field: p, Problem: "must not be null"}
			}
			if fd.Message() != nil {
				item := list.NewElement()
				if err := d.decodeMessage(item.Message(), el, p); err != nil {
					return err
				}
				list.Append(item)
				continue
			}
			item, err := decodeScalar(fd, el, p)
			if err != nil {
				return err
			}
			list.Append(item)
		}
		return nil
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			return &Error{Field: path, Problem: "must be an object"}
		}
		mm := m.Mutable(fd).Map()
		names := make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			key, err := decodeScalar(fd.MapKey(), k, join(path, k))
			if err != nil {
				return err
			}
			p := join(path, k)
			if fd.MapValue().Message() != nil {
				item := mm.NewValue()
				if err := d.decodeMessage(item.Message(), obj[k], p); err != nil {
					return err
				}
				mm.Set(key.MapKey(), item)
				continue
			}
			item, err := decodeScalar(fd.MapValue(), obj[k], p)
			if err != nil {
				return err
			}
			mm.Set(key.MapKey(), item)
		}
		return nil
	case fd.Message() != nil:
		return d.decodeMessage(m.Mutable(fd).Message(), v, path)
	}
	val, err := decodeScalar(fd, v, path)
	if err != nil {
		return err
	}
	m.Set(fd, val)
	return nil
}

// decodeMessage reads one message value: an object, or the form of a
// well-known type.
func (d decoder) decodeMessage(m protoreflect.Message, v any, path string) error {
	switch x := m.Interface().(type) {
	case *timestamppb.Timestamp:
		s, _ := v.(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return &Error{Field: path, Problem: `must be a time in RFC 3339, such as "2025-01-02T15:04:05Z"`}
		}
		*x = *timestamppb.New(t)
		return nil
	case *durationpb.Duration:
		d, ok := parseDuration(v)
		if !ok {
			return &Error{Field: path, Problem: `must be a duration such as "10m" or "1.5s", or a number of seconds`}
		}
		*x = *durationpb.New(d)
		return nil
	}
	if m.Descriptor().FullName().Parent() == "google.protobuf" {
		b, err := json.Marshal(v)
		if err == nil {
			err = protojson.Unmarshal(b, m.Interface())
		}
		if err != nil {
			return &Error{Field: path, Problem: "must be " + wellKnownWant(m.Descriptor().FullName())}
		}
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return &Error{Field: path, Problem: "must be an object"}
	}
	return d.decodeObject(m, obj, path)
}

func wellKnownWant(name protoreflect.FullName) string {
	switch name {
	case "google.protobuf.Struct", "google.protobuf.Empty":
		return "an object"
	case "google.protobuf.ListValue":
		return "a list"
	}
	return "a JSON value"
}

// parseDuration reads "10m", "1.5s" or a number of seconds.
func parseDuration(v any) (time.Duration, bool) {
	switch x := v.(type) {
	case string:
		if d, err := time.ParseDuration(x); err == nil {
			return d, true
		}
		return parseDuration(json.Number(x))
	case json.Number:
		f, err := x.Float64()
		if err != nil || math.Abs(f) > math.MaxInt64/1e9 {
			return 0, false
		}
		return time.Duration(f * float64(time.Second)), true
	}
	return 0, false
}

func decodeScalar(fd protoreflect.FieldDescriptor, v any, path string) (protoreflect.Value, error) {
	bad := func(problem string) (protoreflect.Value, error) {
		return protoreflect.Value{}, &Error{Field: path, Problem: problem}
	}
	switch fd.Kind() {
	case protoreflect.BoolKind:
		if b, ok := v.(bool); ok {
			return protoreflect.ValueOfBool(b), nil
		}
		return bad("must be true or false")
	case protoreflect.StringKind:
		if s, ok := v.(string); ok {
			return protoreflect.ValueOfString(s), nil
		}
		return bad("must be a string")
	case protoreflect.BytesKind:
		s, ok := v.(string)
		if ok {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
				if b, err := enc.DecodeString(s); err == nil {
					return protoreflect.ValueOfBytes(b), nil
				}
			}
		}
		return bad("must be a base64 string")
	case protoreflect.EnumKind:
		if ev := enumValue(fd.Enum(), v); ev != nil {
			return protoreflect.ValueOfEnum(ev.Number()), nil
		}
		return bad("must be one of " + strings.Join(EnumNames(fd.Enum()), ", "))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if s, ok := number(v); ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				if fd.Kind() == protoreflect.FloatKind {
					return protoreflect.ValueOfFloat32(float32(f)), nil
				}
				return protoreflect.ValueOfFloat64(f), nil
			}
		}
		return bad("must be a number")
	}
	s, ok := number(v)
	if !ok {
		return bad("must be a whole number")
	}
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return bad(fmt.Sprintf("must be a whole number from %d to %d", math.MinInt32, math.MaxInt32))
		}
		return protoreflect.ValueOfInt32(int32(n)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad("must be a whole number")
		}
		return protoreflect.ValueOfInt64(n), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return bad(fmt.Sprintf("must be a whole number from 0 to %d", math.MaxUint32))
		}
		return protoreflect.ValueOfUint32(uint32(n)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return bad("must be a whole number, 0 or more")
		}
		return protoreflect.ValueOfUint64(n), nil
	}
	return bad(fmt.Sprintf("has kind %v, which JSON cannot carry", fd.Kind()))
}

// number is the text of a JSON number, or of a string holding one (the
// long form of 64-bit integers).
func number(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), true
	case string:
		return x, x != ""
	}
	return "", false
}

// enumValue reads an enum value: the short name in any case ("ready",
// "READY"), the full name ("SESSION_STATUS_READY") or its number.
func enumValue(ed protoreflect.EnumDescriptor, v any) protoreflect.EnumValueDescriptor {
	values := ed.Values()
	switch x := v.(type) {
	case string:
		upper := strings.ToUpper(x)
		if ev := values.ByName(protoreflect.Name(upper)); ev != nil {
			return ev
		}
		return values.ByName(protoreflect.Name(enumPrefix(ed) + upper))
	case json.Number:
		if n, err := strconv.ParseInt(x.String(), 10, 32); err == nil {
			return values.ByNumber(protoreflect.EnumNumber(n))
		}
	}
	return nil
}

// EnumNames lists the written forms of an enum's values, the unset one
// left out.
func EnumNames(ed protoreflect.EnumDescriptor) []string {
	var out []string
	for i := range ed.Values().Len() {
		if ev := ed.Values().Get(i); ev.Number() != 0 {
			out = append(out, enumName(ev))
		}
	}
	return out
}

// ParseEnum reads an enum value as the query parameters give it, in any
// of the forms a body takes.
func ParseEnum(ed protoreflect.EnumDescriptor, s string) (protoreflect.EnumNumber, bool) {
	if ev := enumValue(ed, s); ev != nil && ev.Number() != 0 {
		return ev.Number(), true
	}
	return 0, false
}

// ParseDuration reads a duration as the query parameters give it: "10m",
// "1.5s" or a number of seconds.
func ParseDuration(s string) (time.Duration, bool) {
	return parseDuration(s)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
