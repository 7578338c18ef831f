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
	od    protoreflect.OneofDescriptor
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
	// plain: a singular field without presence (a string, a number, a
	// bool, an enum), whose value is written whether set or not, so it
	// is read with Get alone; message: a singular message field, set
	// when the message Get gives is valid. Both are outside oneofs and
	// without alt. Every other field is asked Has first.
	plain, message bool
	// enums, for a plain enum field, are the written forms of its
	// values by number (nil for a number the enum skips); a number past
	// them is written as enumJSON writes it.
	enums [][]byte
	// sub is the plan of a message field's messages (of a list's
	// elements), nil for other fields and maps.
	sub *messagePlan
}

type messagePlan struct {
	fields []fieldPlan
	// wellKnown: the type is one of google.protobuf's (see wellKnown).
	wellKnown bool
}

// maxEnumTable bounds the enum numbers a field's plan keeps the written
// form of: the API's enums number their values from 0 up.
const maxEnumTable = 64

var plans sync.Map // protoreflect.MessageDescriptor → *messagePlan

// planOf is the plan of messages of md's type, made on first use with
// the plans of the messages its fields hold, which its own refers to:
// a message's fields are written without looking their plans up.
func planOf(md protoreflect.MessageDescriptor) *messagePlan {
	if p, ok := plans.Load(md); ok {
		return p.(*messagePlan)
	}
	building := map[protoreflect.MessageDescriptor]*messagePlan{}
	p := buildPlan(md, building)
	// Published once all are complete, as they refer to one another. A
	// plan made meanwhile elsewhere is as good as these.
	for md, b := range building {
		plans.LoadOrStore(md, b)
	}
	return p
}

// buildPlan makes the plan of md's messages and, in building, those of
// the messages its fields hold that have none yet.
func buildPlan(md protoreflect.MessageDescriptor, building map[protoreflect.MessageDescriptor]*messagePlan) *messagePlan {
	if p, ok := plans.Load(md); ok {
		return p.(*messagePlan)
	}
	if p, ok := building[md]; ok {
		return p
	}
	fields := md.Fields()
	p := &messagePlan{}
	building[md] = p
	for i := range fields.Len() {
		fd := fields.Get(i)
		if hidden(fd) {
			continue
		}
		fp := fieldPlan{fd: fd, key: appendKey(nil, name(fd)), inlined: inlined[fd.FullName()], emptyNull: emptyIsNull[fd.FullName()]}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			fp.oneof, fp.od = true, o
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
		if !fp.oneof && !fp.inlined && fp.alt == nil && !fd.IsList() && !fd.IsMap() {
			fp.message = fd.Message() != nil
			fp.plain = !fp.message && !fd.HasPresence()
		}
		if fp.plain && fd.Kind() == protoreflect.EnumKind {
			fp.enums = enumTable(fd.Enum())
		}
		if fd.Message() != nil && !fd.IsMap() {
			fp.sub = buildPlan(fd.Message(), building)
		}
		p.fields = append(p.fields, fp)
	}
	p.wellKnown = md.FullName().Parent() == "google.protobuf"
	return p
}

// message writes m as one JSON value: an object, or the form of a
// well-known type.
func (e *encoder) message(m protoreflect.Message) error {
	return e.planMessage(planOf(m.Descriptor()), m)
}

// planMessage is message with m's plan.
func (e *encoder) planMessage(plan *messagePlan, m protoreflect.Message) error {
	if plan.wellKnown {
		if ok, err := e.wellKnown(m); ok {
			return err
		}
	}
	e.buf = append(e.buf, '{')
	first := true
	if err := e.planned(plan, m, &first); err != nil {
		return err
	}
	e.buf = append(e.buf, '}')
	return nil
}

// planned writes m's fields, as its plan says, as members of the object
// being written, so an inlined message or a flattened oneof adds its own
// to its holder's.
func (e *encoder) planned(plan *messagePlan, m protoreflect.Message, first *bool) error {
	// The member set of the oneof last met: a oneof's members are asked
	// which is set once, not each whether it is.
	var od protoreflect.OneofDescriptor
	var set protoreflect.FieldDescriptor
	for i := range plan.fields {
		fp := &plan.fields[i]
		fd := fp.fd
		if fp.oneof {
			if fp.od != od {
				od, set = fp.od, m.WhichOneof(fp.od)
			}
			if fd != set {
				continue // only the member set is written
			}
			if fp.flat != nil {
				if fp.flatKey != nil {
					e.comma(first)
					e.buf = append(e.buf, fp.flatKey...)
					e.buf = append(e.buf, fp.member...)
				}
				if err := e.planned(fp.sub, m.Get(fd).Message(), first); err != nil {
					return err
				}
				continue
			}
		}
		if fp.inlined {
			if err := e.planned(fp.sub, m.Get(fd).Message(), first); err != nil {
				return err
			}
			continue
		}
		e.comma(first)
		e.buf = append(e.buf, fp.key...)
		if e.replace != nil {
			if b, ok := e.replace.Replace(e.buf, m, fd); ok {
				e.buf = b
				continue
			}
		}
		if fp.plain {
			// Most fields: a value written as it is, set or not, so no Has.
			if err := e.plain(fp, m.Get(fd)); err != nil {
				return err
			}
			continue
		}
		if fp.message {
			// Get gives an unset message as an invalid one: no Has.
			v := m.Get(fd)
			if err := e.field(fd, fp.sub, v, v.Message().IsValid(), false); err != nil {
				return err
			}
			continue
		}
		// An empty list or map is written without Get, which makes a new
		// empty one for every unset repeated field.
		var v protoreflect.Value
		has := m.Has(fd)
		sub := fp.sub
		switch {
		case !has && fp.alt != nil:
			v, has = m.Get(fp.alt), m.Has(fp.alt)
			sub = nil // a message of the alt's type
		case !has && fd.IsList():
			e.buf = append(e.buf, "[]"...)
			continue
		case !has && fd.IsMap():
			e.buf = append(e.buf, "{}"...)
			continue
		default:
			v = m.Get(fd)
		}
		if err := e.field(fd, sub, v, has, fp.emptyNull); err != nil {
			return err
		}
	}
	return nil
}

// plain writes the value of a plain field (see fieldPlan).
func (e *encoder) plain(fp *fieldPlan, v protoreflect.Value) error {
	if fp.enums != nil {
		if n := v.Enum(); n >= 0 && int(n) < len(fp.enums) && fp.enums[n] != nil {
			e.buf = append(e.buf, fp.enums[n]...)
			return nil
		}
	}
	return e.field(fp.fd, nil, v, true, fp.emptyNull)
}

func (e *encoder) comma(first *bool) {
	if !*first {
		e.buf = append(e.buf, ',')
	}
	*first = false
}

// field writes v, the value of fd; sub, when not nil, is the plan of its
// messages.
func (e *encoder) field(fd protoreflect.FieldDescriptor, sub *messagePlan, v protoreflect.Value, has, emptyNull bool) error {
	switch {
	case fd.IsList():
		e.buf = append(e.buf, '[')
		list := v.List()
		for i := range list.Len() {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.singular(fd, sub, list.Get(i)); err != nil {
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
			if err := e.singular(fd.MapValue(), nil, m.Get(k)); err != nil {
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
	return e.singular(fd, sub, v)
}

func (e *encoder) singular(fd protoreflect.FieldDescriptor, sub *messagePlan, v protoreflect.Value) error {
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
		if sub != nil {
			return e.planMessage(sub, v.Message())
		}
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

// enumTable is the written form of ed's values numbered below
// maxEnumTable, by number, as enumJSON writes them.
func enumTable(ed protoreflect.EnumDescriptor) [][]byte {
	values := ed.Values()
	var table [][]byte
	for i := range values.Len() {
		n := values.Get(i).Number()
		if n < 0 || n >= maxEnumTable {
			continue
		}
		if int(n) >= len(table) {
			table = append(table, make([][]byte, int(n)+1-len(table))...)
		}
		table[n] = enumJSON(ed, n)
	}
	return table
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
