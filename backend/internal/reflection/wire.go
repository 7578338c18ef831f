package reflection

import (
	"errors"
	"fmt"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protowire"
)

// The reflection messages are read and written field by field: the API
// has two messages and a handful of fields, which is less than what the
// generated types of grpc.reflection.v1 would link and register.

// kind is the request a ServerReflectionRequest makes: the number of the
// field of its message_request oneof.
type kind protowire.Number

const (
	fileByFilename            kind = 3
	fileContainingSymbol      kind = 4
	fileContainingExtension   kind = 5
	allExtensionNumbersOfType kind = 6
	listServices              kind = 7
)

// request is a ServerReflectionRequest.
type request struct {
	raw    []byte // the message as received, sent back as original_request
	host   string // host = 1
	kind   kind
	name   string // the file, the symbol, or the message extended
	number int32  // the extension's number (ExtensionRequest.extension_number)
}

func (r *request) unmarshal(b []byte) error {
	r.raw = append([]byte(nil), b...)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType || (num != 1 && (num < 3 || num > 7)) {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch num {
		case 1:
			r.host = string(v)
		case protowire.Number(fileContainingExtension):
			r.kind, r.name, r.number = fileContainingExtension, "", 0
			if err := r.unmarshalExtension(v); err != nil {
				return err
			}
		default: // the oneof's string fields; the last one given wins
			r.kind, r.name = kind(num), string(v)
		}
	}
	return nil
}

// unmarshalExtension reads an ExtensionRequest: containing_type = 1,
// extension_number = 2.
func (r *request) unmarshalExtension(b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			r.name, n = string(v), m
		case num == 2 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			r.number, n = int32(v), m
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
		}
		b = b[n:]
	}
	return nil
}

// response is a ServerReflectionResponse: the answer to one request of
// kind, or err (a not found error_response).
type response struct {
	host     string
	original []byte
	kind     kind
	err      error

	services []string // list_services_response
	files    [][]byte // file_descriptor_response
	base     string   // all_extension_numbers_response: the message
	numbers  []int32  // and its extensions
}

func (r *response) marshal() []byte {
	var b []byte
	if r.host != "" {
		b = protowire.AppendTag(b, 1, protowire.BytesType) // valid_host
		b = protowire.AppendString(b, r.host)
	}
	b = protowire.AppendTag(b, 2, protowire.BytesType) // original_request
	b = protowire.AppendBytes(b, r.original)
	var field protowire.Number
	var body []byte
	switch {
	case r.err != nil: // error_response = 7 {error_code = 1, error_message = 2}
		field = 7
		body = protowire.AppendTag(body, 1, protowire.VarintType)
		body = protowire.AppendVarint(body, uint64(connect.CodeNotFound))
		body = protowire.AppendTag(body, 2, protowire.BytesType)
		body = protowire.AppendString(body, r.err.Error())
	case r.kind == listServices: // list_services_response = 6 {repeated ServiceResponse service = 1 {name = 1}}
		field = 6
		for _, s := range r.services {
			body = protowire.AppendTag(body, 1, protowire.BytesType)
			body = protowire.AppendVarint(body, uint64(protowire.SizeTag(1)+protowire.SizeBytes(len(s))))
			body = protowire.AppendTag(body, 1, protowire.BytesType)
			body = protowire.AppendString(body, s)
		}
	case r.kind == allExtensionNumbersOfType: // all_extension_numbers_response = 5 {base_type_name = 1, repeated int32 extension_number = 2}
		field = 5
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendString(body, r.base)
		if len(r.numbers) > 0 {
			var packed []byte
			for _, n := range r.numbers {
				packed = protowire.AppendVarint(packed, uint64(n))
			}
			body = protowire.AppendTag(body, 2, protowire.BytesType)
			body = protowire.AppendBytes(body, packed)
		}
	default: // file_descriptor_response = 4 {repeated bytes file_descriptor_proto = 1}
		field = 4
		for _, f := range r.files {
			body = protowire.AppendTag(body, 1, protowire.BytesType)
			body = protowire.AppendBytes(body, f)
		}
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

// codec reads requests and writes responses in protobuf's binary
// encoding, the one the reflection clients speak.
type codec struct{}

func (codec) Name() string { return "proto" }

func (codec) Marshal(v any) ([]byte, error) {
	r, ok := v.(*response)
	if !ok {
		return nil, fmt.Errorf("reflection: cannot marshal %T", v)
	}
	return r.marshal(), nil
}

func (codec) Unmarshal(b []byte, v any) error {
	r, ok := v.(*request)
	if !ok {
		return fmt.Errorf("reflection: cannot unmarshal into %T", v)
	}
	return r.unmarshal(b)
}

// noJSON takes the place of Connect's JSON codec, which needs generated
// messages: reflection is asked and answered in binary.
type noJSON struct{}

var errBinaryOnly = errors.New("gRPC reflection is served in protobuf's binary encoding only")

func (noJSON) Name() string                { return "json" }
func (noJSON) Marshal(any) ([]byte, error) { return nil, errBinaryOnly }
func (noJSON) Unmarshal([]byte, any) error { return errBinaryOnly }
