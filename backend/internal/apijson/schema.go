package apijson

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Schemas builds the JSON Schemas (OpenAPI 3.1) of messages in their
// written form, one named definition per message.
type Schemas struct {
	// Defs holds the definitions made so far, by name.
	Defs map[string]any
	// Describe, when set, gives a descriptor's description ("" for none).
	Describe func(protoreflect.Descriptor) string
	// Prefix is where Defs are referred to ("#/components/schemas/").
	Prefix string
	// Lookup, when set, maps a message to the descriptor to describe, for
	// descriptors that carry source info beside the compiled-in ones.
	Lookup func(protoreflect.FullName) protoreflect.MessageDescriptor

	// input says the schemas being built describe what is read: nothing
	// is required, anything may be null, and an inlined message may come
	// nested under its own name too.
	input bool
	err   error
}

// Input refers to the schema of md as a request body, which is read
// rather than written: see Schemas.input. Its definition is named for the
// message, with "Input" after it unless it is a request.
func (s *Schemas) Input(md protoreflect.MessageDescriptor) map[string]any {
	s.input = true
	defer func() { s.input = false }()
	return s.Ref(md)
}

// Err is the first shape the schemas could not describe.
func (s *Schemas) Err() error { return s.err }

// Ref refers to the schema of md, defining it (and what it uses) first.
func (s *Schemas) Ref(md protoreflect.MessageDescriptor) map[string]any {
	if s.Lookup != nil {
		if d := s.Lookup(md.FullName()); d != nil {
			md = d
		}
	}
	if wkt, ok := wellKnownSchema(md.FullName()); ok {
		return wkt
	}
	name := string(md.Name())
	if md.Parent() != md.ParentFile() {
		name = strings.ReplaceAll(strings.TrimPrefix(string(md.FullName()), string(md.ParentFile().Package())+"."), ".", "_")
	}
	if s.input && !strings.HasSuffix(name, "Request") {
		name += "Input"
	}
	if _, done := s.Defs[name]; !done {
		s.Defs[name] = nil // reserved: messages may refer to themselves
		obj := &object{props: map[string]any{}}
		s.fields(md, obj)
		def := map[string]any{"type": "object", "properties": obj.props, "additionalProperties": false}
		if len(obj.required) > 0 {
			def["required"] = obj.required
		}
		if d := s.describe(md); d != "" {
			def["description"] = d
		}
		s.Defs[name] = def
	}
	return map[string]any{"$ref": s.Prefix + name}
}

type object struct {
	props    map[string]any
	required []string
}

// add puts a property in; a key two members of a flattened oneof share
// must have one schema.
func (s *Schemas) add(obj *object, key string, schema map[string]any, required bool) {
	if old, ok := obj.props[key]; ok {
		if !reflect.DeepEqual(withoutDescription(old), withoutDescription(schema)) {
			s.fail(fmt.Errorf("apijson: key %q has two shapes in one object", key))
		}
	} else {
		obj.props[key] = schema
	}
	if required && !slices.Contains(obj.required, key) {
		obj.required = append(obj.required, key)
	}
}

// fields adds the keys md is written with to obj, as the encoder writes
// them; required ones are always written.
func (s *Schemas) fields(md protoreflect.MessageDescriptor, obj *object) {
	if s.Lookup != nil {
		if d := s.Lookup(md.FullName()); d != nil {
			md = d
		}
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if hidden(fd) {
			continue
		}
		inOneof := fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic()
		if rule, ok := flatRule(fd); ok {
			if !rule.ofField {
				o := fd.ContainingOneof()
				s.add(obj, rule.key, map[string]any{"type": "string", "enum": memberNames(o), "description": "Which of " + strings.Join(memberNames(o), ", ") + " this is."}, false)
			}
			inner := &object{props: map[string]any{}}
			s.fields(fd.Message(), inner)
			for _, k := range slices.Sorted(maps.Keys(inner.props)) {
				s.add(obj, k, inner.props[k].(map[string]any), false)
			}
			continue
		}
		if inlined[fd.FullName()] {
			if s.input {
				s.add(obj, name(fd), s.field(fd), false)
			}
			inner := &object{props: map[string]any{}}
			s.fields(fd.Message(), inner)
			for _, k := range slices.Sorted(maps.Keys(inner.props)) {
				s.add(obj, k, inner.props[k].(map[string]any), slices.Contains(inner.required, k))
			}
			continue
		}
		schema := s.field(fd)
		if from, ok := fallback[fd.FullName()]; ok {
			alt := s.field(md.Fields().ByName(from))
			schema = map[string]any{"anyOf": []any{withoutNull(schema), withoutNull(alt), map[string]any{"type": "null"}}}
		}
		if d := s.describe(fd); d != "" {
			schema = describedAs(schema, d)
		}
		s.add(obj, name(fd), schema, !inOneof && !s.input)
	}
}

func (s *Schemas) field(fd protoreflect.FieldDescriptor) map[string]any {
	switch {
	case fd.IsMap():
		return map[string]any{"type": "object", "additionalProperties": s.singular(fd.MapValue())}
	case fd.IsList():
		return map[string]any{"type": "array", "items": s.singular(fd)}
	}
	schema := s.singular(fd)
	nullable := s.input || fd.Message() != nil || fd.HasPresence() || emptyIsNull[fd.FullName()] || fd.Kind() == protoreflect.EnumKind
	if !nullable || (!s.input && fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic()) {
		return schema
	}
	if fd.Kind() == protoreflect.EnumKind {
		return schema // its enum has null already
	}
	return map[string]any{"anyOf": []any{schema, map[string]any{"type": "null"}}}
}

// singular is the schema of one value of fd.
func (s *Schemas) singular(fd protoreflect.FieldDescriptor) map[string]any {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return map[string]any{"type": "boolean"}
	case protoreflect.StringKind:
		return map[string]any{"type": "string"}
	case protoreflect.BytesKind:
		return map[string]any{"type": "string", "contentEncoding": "base64"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return map[string]any{"type": "integer", "format": "int32"}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return map[string]any{"type": "integer", "format": "int64"}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return map[string]any{"type": "integer", "minimum": 0}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return map[string]any{"type": "number"}
	case protoreflect.EnumKind:
		var values []any
		for _, n := range EnumNames(fd.Enum()) {
			values = append(values, n)
		}
		return map[string]any{"type": []string{"string", "null"}, "enum": append(values, nil)}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return s.Ref(fd.Message())
	}
	s.fail(fmt.Errorf("apijson: field %s: kind %v has no JSON schema", fd.FullName(), fd.Kind()))
	return map[string]any{}
}

func (s *Schemas) describe(d protoreflect.Descriptor) string {
	if s.Describe == nil {
		return ""
	}
	return s.Describe(d)
}

func (s *Schemas) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// wellKnownSchema is the written form of the well-known types.
func wellKnownSchema(name protoreflect.FullName) (map[string]any, bool) {
	switch name {
	case "google.protobuf.Timestamp":
		return map[string]any{"type": "string", "format": "date-time"}, true
	case "google.protobuf.Duration":
		return map[string]any{"type": "string", "description": `A duration such as "10m", "1h30m" or "1.5s"; read also as a number of seconds.`}, true
	case "google.protobuf.Struct", "google.protobuf.Empty":
		return map[string]any{"type": "object"}, true
	case "google.protobuf.Value":
		return map[string]any{}, true
	case "google.protobuf.ListValue":
		return map[string]any{"type": "array"}, true
	}
	return nil, false
}

// describedAs adds a description; a $ref is wrapped, since not every tool
// reads siblings of one.
func describedAs(schema map[string]any, d string) map[string]any {
	if _, isRef := schema["$ref"]; isRef {
		return map[string]any{"allOf": []any{schema}, "description": d}
	}
	out := maps.Clone(schema)
	out["description"] = d
	return out
}

func withoutNull(schema map[string]any) map[string]any {
	if alts, ok := schema["anyOf"].([]any); ok && len(alts) == 2 {
		return alts[0].(map[string]any)
	}
	return schema
}

func withoutDescription(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := maps.Clone(m)
	delete(out, "description")
	if all, ok := out["allOf"].([]any); ok && len(all) == 1 && len(out) == 1 {
		return all[0]
	}
	return out
}
