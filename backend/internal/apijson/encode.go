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
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

type encoder struct {
	buf bytes.Buffer
}

// message writes m as one JSON value: an object, or the form of a
// well-known type.
func (e *encoder) message(m protoreflect.Message) error {
	if ok, err := e.wellKnown(m); ok {
		return err
	}
	e.buf.WriteByte('{')
	first := true
	if err := e.fields(m, &first); err != nil {
		return err
	}
	e.buf.WriteByte('}')
	return nil
}

// fields writes m's fields as members of the object being written, so an
// inlined message or a flattened oneof adds its own to its holder's.
func (e *encoder) fields(m protoreflect.Message, first *bool) error {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if hidden(fd) {
			continue
		}
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			if !m.Has(fd) {
				continue // only the member set is written
			}
			if rule, ok := flatRule(fd); ok {
				if !rule.ofField {
					e.key(rule.key, first)
					e.string(string(fd.Name()))
				}
				if err := e.fields(m.Get(fd).Message(), first); err != nil {
					return err
				}
				continue
			}
		}
		if inlined[fd.FullName()] {
			if err := e.fields(m.Get(fd).Message(), first); err != nil {
				return err
			}
			continue
		}
		v, has := m.Get(fd), m.Has(fd)
		if from, ok := fallback[fd.FullName()]; ok && !has {
			alt := m.Descriptor().Fields().ByName(from)
			v, has = m.Get(alt), m.Has(alt)
		}
		e.key(name(fd), first)
		if err := e.field(fd, v, has); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) key(k string, first *bool) {
	if !*first {
		e.buf.WriteByte(',')
	}
	*first = false
	e.string(k)
	e.buf.WriteByte(':')
}

func (e *encoder) field(fd protoreflect.FieldDescriptor, v protoreflect.Value, has bool) error {
	switch {
	case fd.IsList():
		e.buf.WriteByte('[')
		list := v.List()
		for i := range list.Len() {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			if err := e.singular(fd, list.Get(i)); err != nil {
				return err
			}
		}
		e.buf.WriteByte(']')
		return nil
	case fd.IsMap():
		m := v.Map()
		keys := make([]protoreflect.MapKey, 0, m.Len())
		m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			keys = append(keys, k)
			return true
		})
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return strings.Compare(a.String(), b.String()) })
		e.buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			e.string(k.String())
			e.buf.WriteByte(':')
			if err := e.singular(fd.MapValue(), m.Get(k)); err != nil {
				return err
			}
		}
		e.buf.WriteByte('}')
		return nil
	}
	if !has && (fd.Message() != nil || fd.HasPresence()) {
		e.buf.WriteString("null")
		return nil
	}
	if emptyIsNull[fd.FullName()] && v.String() == "" {
		e.buf.WriteString("null")
		return nil
	}
	return e.singular(fd, v)
}

func (e *encoder) singular(fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		e.buf.WriteString(strconv.FormatBool(v.Bool()))
	case protoreflect.StringKind:
		if !utf8.ValidString(v.String()) {
			return fmt.Errorf("apijson: %s is not UTF-8", fd.FullName())
		}
		e.string(v.String())
	case protoreflect.BytesKind:
		e.string(base64.StdEncoding.EncodeToString(v.Bytes()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		e.buf.WriteString(strconv.FormatInt(v.Int(), 10))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		e.buf.WriteString(strconv.FormatUint(v.Uint(), 10))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("apijson: %s is %v, which JSON cannot hold", fd.FullName(), f)
		}
		e.buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case protoreflect.EnumKind:
		ev := fd.Enum().Values().ByNumber(v.Enum())
		switch {
		case v.Enum() == 0:
			e.buf.WriteString("null")
		case ev == nil:
			e.buf.WriteString(strconv.Itoa(int(v.Enum())))
		default:
			e.string(enumName(ev))
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return e.message(v.Message())
	default:
		return fmt.Errorf("apijson: %s has kind %v", fd.FullName(), fd.Kind())
	}
	return nil
}

// wellKnown writes the well-known types; ok is false for other messages.
func (e *encoder) wellKnown(m protoreflect.Message) (ok bool, err error) {
	name := m.Descriptor().FullName()
	if name.Parent() != "google.protobuf" {
		return false, nil
	}
	switch x := m.Interface().(type) {
	case *timestamppb.Timestamp:
		e.string(x.AsTime().UTC().Format(time.RFC3339Nano))
	case *durationpb.Duration:
		e.string(Duration(x.AsDuration()))
	default:
		// Struct, Value, ListValue and Empty are JSON already.
		b, err := protojson.Marshal(m.Interface())
		if err != nil {
			return true, err
		}
		return true, json.Compact(&e.buf, b)
	}
	return true, nil
}

// string writes s as a JSON string, leaving <, > and & as they are.
func (e *encoder) string(s string) {
	b, _ := json.Marshal(s) // a string always encodes
	if bytes.ContainsAny(b, `\`) {
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		b = bytes.TrimSuffix(out.Bytes(), []byte("\n"))
	}
	e.buf.Write(b)
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
