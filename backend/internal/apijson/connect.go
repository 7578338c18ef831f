package apijson

import (
	"errors"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

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
	err := protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(data, msg)
	if err == nil {
		return nil
	}
	if friendly := Unmarshal(data, msg.ProtoReflect().New().Interface()); friendly != nil {
		return friendly
	}
	// The JSON routes' reader takes forms protojson does not (lowercase
	// enum values, durations in seconds): say what Connect wants.
	return errors.New(`the body is not in protobuf's JSON form, which Connect speaks: enum values like "SESSION_STATUS_READY", durations like "600s"`)
}
