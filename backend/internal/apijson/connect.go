package apijson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

// ConnectCodec is the Connect protocol's "json" codec with the API's
// words in its errors: a body protojson refuses is read again by
// Unmarshal, whose message names the field and what it must be ("field
// `agent` must be a string") instead of quoting the decoder ("proto:
// (line 1:11): invalid value for string field agent: 5"). What is
// accepted and what is written are protojson's, as Connect clients
// expect; a body nested past jsoncheck.MaxDepth is refused unread.
type ConnectCodec struct{}

func (ConnectCodec) Name() string { return "json" }

func (ConnectCodec) Marshal(m any) ([]byte, error) {
	msg, ok := m.(proto.Message)
	if !ok {
		return nil, errors.New("not a protobuf message")
	}
	return protojson.Marshal(msg)
}

func (ConnectCodec) Unmarshal(data []byte, m any) error {
	msg, ok := m.(proto.Message)
	if !ok {
		return errors.New("not a protobuf message")
	}
	if len(data) == 0 {
		return errors.New("the body is empty: send a JSON object, {} for no fields")
	}
	// Refused before either reader recurses into it.
	if err := jsoncheck.Depth(data, jsoncheck.MaxDepth); err != nil {
		return err
	}
	if protojson.Unmarshal(data, msg) == nil {
		return nil
	}
	// A field this server does not know is left out, as Connect clients
	// expect of a server older than they are; an enum name it does not
	// know is not, though protojson drops those with the unknown fields:
	// the field would read as unset (urgent mail sent as normal, a list
	// filter ignored).
	err := protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, msg)
	if err == nil {
		return unknownEnumName(data, msg.ProtoReflect().Descriptor())
	}
	if friendly := Unmarshal(data, msg.ProtoReflect().New().Interface()); friendly != nil {
		return friendly
	}
	// The JSON routes' reader takes forms protojson does not (lowercase
	// enum values, durations in seconds): say what Connect wants.
	return errors.New(`the body is not in protobuf's JSON form, which Connect speaks: enum values like "SESSION_STATUS_READY", durations like "600s"`)
}

// unknownEnumName finds, in a body protojson read with its unknown
// fields left out, an enum field given a name its enum does not have.
// Numbers are left to the handlers, which check them.
func unknownEnumName(data []byte, md protoreflect.MessageDescriptor) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	return enumNamesIn(v, md, "")
}

func enumNamesIn(v any, md protoreflect.MessageDescriptor, path string) error {
	obj, ok := v.(map[string]any)
	if !ok || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		// Well-known types have JSON forms of their own, with no enum
		// the API sets.
		return nil
	}
	fields := md.Fields()
	for key, fv := range obj {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil || fv == nil {
			continue
		}
		at := join(path, string(fd.Name()))
		var err error
		switch {
		case fd.IsMap():
			m, _ := fv.(map[string]any)
			for k, e := range m {
				if err = enumNameOf(e, fd.MapValue(), at+"."+k); err != nil {
					break
				}
			}
		case fd.IsList():
			l, _ := fv.([]any)
			for i, e := range l {
				if err = enumNameOf(e, fd, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					break
				}
			}
		default:
			err = enumNameOf(fv, fd, at)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// enumNameOf checks one value of fd (an element, for a list or a map).
func enumNameOf(v any, fd protoreflect.FieldDescriptor, path string) error {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return enumNamesIn(v, fd.Message(), path)
	case protoreflect.EnumKind:
		s, ok := v.(string)
		ed := fd.Enum()
		if !ok || ed.FullName() == "google.protobuf.NullValue" || ed.Values().ByName(protoreflect.Name(s)) != nil {
			return nil
		}
		var names []string
		for i := range ed.Values().Len() {
			if ev := ed.Values().Get(i); ev.Number() != 0 {
				names = append(names, string(ev.Name()))
			}
		}
		return &Error{Field: path, Problem: fmt.Sprintf("must be one of %s, not %q", strings.Join(names, ", "), s)}
	}
	return nil
}
