package apijson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The encoder is on every answer's path and every event's (an SSE frame
// is encoded once per event), so what the rules decide about a message's
// fields is worked out once per message type (plan), and strings, enum
// names and keys are appended without going through encoding/json.

type encoder struct {
	buf []byte
	// Replace, when set, may give the encoding of a field's value to write
	// instead of encoding it (see Replacer).
	replace Replacer
}

// fieldPlan is what the rules say of one field of a message type.
type fieldPlan struct {
	fd protoreflect.FieldDescriptor
	// key is `"name":`, the member's key as written.
	key []byte
	// oneof: the field is a member of a real oneof and written only when
	// set; flat, when the oneof is flattened, holds its rule.
	oneof bool
	flat  *oneofRule
	// flatKey is `"key":` of a flattened oneof whose key names the member
	// with its proto name (not ofField), and member the name as written.
	flatKey, member []byte
	// inlined fields have their message's fields written into the holder.
	inlined bool
	// alt is the field written in its place when it is unset (fallback).
	alt protoreflect.FieldDescriptor
	// emptyNull writes an empty string as null.
	emptyNull bool
}

type messagePlan struct {
	fields []fieldPlan
}

var plans sync.Map // protoreflect.MessageDescriptor → *messagePlan

// planOf is the plan of messages of md's type, made on first use.
func planOf(md protoreflect.MessageDescriptor) *messagePlan {
	if p, ok := plans.Load(md); ok {
		return p.(*messagePlan)
	}
	fields := md.Fields()
	p := &messagePlan{}
	for i := range fields.Len() {
		fd := fields.Get(i)
		if hidden(fd) {
			continue
		}
		fp := fieldPlan{fd: fd, key: appendKey(nil, name(fd)), inlined: inlined[fd.FullName()], emptyNull: emptyIsNull[fd.FullName()]}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			fp.oneof = true
			if rule, ok := flatRule(fd); ok {
				fp.flat = &rule
				if !rule.ofField {
					fp.flatKey = appendKey(nil, rule.key)
					fp.member = appendString(nil, string(fd.Name()))
				}
			}
		}
		if from, ok := fallback[fd.FullName()]; ok {
			fp.alt = fields.ByName(from)
		}
		p.fields = append(p.fields, fp)
	}
	actual, _ := plans.LoadOrStore(md, p)
	return actual.(*messagePlan)
}

// message writes m as one JSON value: an object, or the form of a
// well-known type.
func (e *encoder) message(m protoreflect.Message) error {
	if ok, err := e.wellKnown(m); ok {
		return err
	}
	e.buf = append(e.buf, '{')
	first := true
	if err := e.fields(m, &first); err != nil {
		return err
	}
	e.buf = append(e.buf, '}')
	return nil
}

// fields writes m's fields as members of the object being written, so an
// inlined message or a flattened oneof adds its own to its holder's.
func (e *encoder) fields(m protoreflect.Message, first *bool) error {
	plan := planOf(m.Descriptor())
	for i := range plan.fields {
		fp := &plan.fields[i]
		fd := fp.fd
		if fp.oneof {
			if !m.Has(fd) {
				continue // only the member set is written
			}
			if fp.flat != nil {
				if fp.flatKey != nil {
					e.comma(first)
					e.buf = append(e.buf, fp.flatKey...)
					e.buf = append(e.buf, fp.member...)
				}
				if err := e.fields(m.Get(fd).Message(), first); err != nil {
					return err
				}
				continue
			}
		}
		if fp.inlined {
			if err := e.fields(m.Get(fd).Message(), first); err != nil {
				return err
			}
			continue
		}
		e.comma(first)
		e.buf = append(e.buf, fp.key...)
		if e.replace != nil {
			if b, ok := e.replace(e.buf, m, fd); ok {
				e.buf = b
				continue
			}
		}
		// An empty list or map is written without Get, which makes a new
		// empty one for every unset repeated field.
		var v protoreflect.Value
		has := m.Has(fd)
		switch {
		case !has && fp.alt != nil:
			v, has = m.Get(fp.alt), m.Has(fp.alt)
		case !has && fd.IsList():
			e.buf = append(e.buf, "[]"...)
			continue
		case !has && fd.IsMap():
			e.buf = append(e.buf, "{}"...)
			continue
		default:
			v = m.Get(fd)
		}
		if err := e.field(fd, v, has, fp.emptyNull); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) comma(first *bool) {
	if !*first {
		e.buf = append(e.buf, ',')
	}
	*first = false
}

func (e *encoder) field(fd protoreflect.FieldDescriptor, v protoreflect.Value, has, emptyNull bool) error {
	switch {
	case fd.IsList():
		e.buf = append(e.buf, '[')
		list := v.List()
		for i := range list.Len() {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.singular(fd, list.Get(i)); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
		return nil
	case fd.IsMap():
		m := v.Map()
		keys := make([]protoreflect.MapKey, 0, m.Len())
		m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			keys = append(keys, k)
			return true
		})
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return strings.Compare(a.String(), b.String()) })
		e.buf = append(e.buf, '{')
		for i, k := range keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = appendKey(e.buf, k.String())
			if err := e.singular(fd.MapValue(), m.Get(k)); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
		return nil
	}
	if !has && (fd.Message() != nil || fd.HasPresence()) {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if emptyNull && v.String() == "" {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	return e.singular(fd, v)
}

func (e *encoder) singular(fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		e.buf = strconv.AppendBool(e.buf, v.Bool())
	case protoreflect.StringKind:
		if !utf8.ValidString(v.String()) {
			return fmt.Errorf("apijson: %s is not UTF-8", fd.FullName())
		}
		e.buf = appendString(e.buf, v.String())
	case protoreflect.BytesKind:
		e.buf = append(e.buf, '"')
		e.buf = base64.StdEncoding.AppendEncode(e.buf, v.Bytes())
		e.buf = append(e.buf, '"')
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		e.buf = strconv.AppendInt(e.buf, v.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		e.buf = strconv.AppendUint(e.buf, v.Uint(), 10)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("apijson: %s is %v, which JSON cannot hold", fd.FullName(), f)
		}
		e.buf = strconv.AppendFloat(e.buf, f, 'g', -1, 64)
	case protoreflect.EnumKind:
		e.buf = append(e.buf, enumJSON(fd.Enum(), v.Enum())...)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.message(v.Message())
	default:
		return fmt.Errorf("apijson: %s has kind %v", fd.FullName(), fd.Kind())
	}
	return nil
}

var enumCache sync.Map // enum value's protoreflect.FullName → []byte

// enumJSON is the written form of enum value n of ed: null for the
// unset value, its number for one the descriptor does not know.
func enumJSON(ed protoreflect.EnumDescriptor, n protoreflect.EnumNumber) []byte {
	if n == 0 {
		return []byte("null")
	}
	ev := ed.Values().ByNumber(n)
	if ev == nil {
		return strconv.AppendInt(nil, int64(n), 10)
	}
	if b, ok := enumCache.Load(ev.FullName()); ok {
		return b.([]byte)
	}
	b := appendString(nil, enumName(ev))
	enumCache.Store(ev.FullName(), b)
	return b
}

const (
	timestampName protoreflect.FullName = "google.protobuf.Timestamp"
	durationName  protoreflect.FullName = "google.protobuf.Duration"
)

// wellKnown writes the well-known types; ok is false for other messages.
func (e *encoder) wellKnown(m protoreflect.Message) (ok bool, err error) {
	name := m.Descriptor().FullName()
	if name.Parent() != "google.protobuf" {
		return false, nil
	}
	switch name {
	case timestampName:
		t := m.Interface().(*timestamppb.Timestamp).AsTime().UTC()
		e.buf = append(e.buf, '"')
		e.buf = t.AppendFormat(e.buf, time.RFC3339Nano)
		e.buf = append(e.buf, '"')
	case durationName:
		e.buf = appendString(e.buf, Duration(m.Interface().(*durationpb.Duration).AsDuration()))
	default:
		// Struct, Value, ListValue and Empty are JSON already.
		b, err := protojson.Marshal(m.Interface())
		if err != nil {
			return true, err
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			return true, err
		}
		e.buf = append(e.buf, compact.Bytes()...)
	}
	return true, nil
}

// appendKey appends `"k":`.
func appendKey(dst []byte, k string) []byte {
	return append(appendString(dst, k), ':')
}

// appendString appends s as a JSON string, leaving <, > and & as they
// are. A string with nothing to escape (nearly every one) is copied as
// it is; any other goes through encoding/json, so both agree on every
// escape.
func appendString(dst []byte, s string) []byte {
	if !needsEscape(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	var out strings.Builder
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(dst, strings.TrimSuffix(out.String(), "\n")...)
}

// needsEscape reports whether encoding/json would write s other than
// between two quotes: a quote, a backslash, a control character, invalid
// UTF-8, or U+2028 and U+2029 (which it escapes for JavaScript).
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			return true
		}
		i += size
	}
	return false
}

// Duration is the written form of a duration: Go's, without the zero
// units it ends with ("10m", not "10m0s"; "1h", not "1h0m0s").
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
