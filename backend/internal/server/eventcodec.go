package server

import (
	"errors"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/events"
)

// The event stream's codecs: an event item of a SubscribeResponse is
// built around the event's encoding, which the hub computes once per
// event for every subscriber (events.Hub.Frame), instead of encoding the
// same event again for each of them. Every other message is encoded as
// connect's own codecs do.

// eventProtoCodec is the "proto" codec of the event stream.
type eventProtoCodec struct{ hub *events.Hub }

func (eventProtoCodec) Name() string { return "proto" }

func (c eventProtoCodec) Marshal(msg any) ([]byte, error) {
	if ev := eventItem(msg); ev != nil {
		b, err := c.hub.Frame(ev, events.EncodingProto, func(ev *agentsv1.Event) ([]byte, error) { return proto.Marshal(ev) })
		if err != nil {
			return nil, err
		}
		// SubscribeResponse.event is field 1, length-delimited.
		out := make([]byte, 0, len(b)+1+protowire.SizeVarint(uint64(len(b))))
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		return protowire.AppendBytes(out, b), nil
	}
	m, ok := msg.(proto.Message)
	if !ok {
		return nil, errNotProto
	}
	return proto.Marshal(m)
}

func (eventProtoCodec) Unmarshal(b []byte, msg any) error {
	m, ok := msg.(proto.Message)
	if !ok {
		return errNotProto
	}
	return proto.Unmarshal(b, m)
}

// eventJSONCodec is the "json" codec of the event stream.
type eventJSONCodec struct{ hub *events.Hub }

func (eventJSONCodec) Name() string { return "json" }

func (c eventJSONCodec) Marshal(msg any) ([]byte, error) {
	if ev := eventItem(msg); ev != nil {
		b, err := c.hub.Frame(ev, events.EncodingJSON, func(ev *agentsv1.Event) ([]byte, error) { return protojson.Marshal(ev) })
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(b)+10)
		out = append(out, `{"event":`...)
		out = append(out, b...)
		return append(out, '}'), nil
	}
	m, ok := msg.(proto.Message)
	if !ok {
		return nil, errNotProto
	}
	return protojson.Marshal(m)
}

func (eventJSONCodec) Unmarshal(b []byte, msg any) error {
	m, ok := msg.(proto.Message)
	if !ok {
		return errNotProto
	}
	if len(b) == 0 {
		return nil
	}
	return apijson.ConnectCodec{}.Unmarshal(b, m)
}

var errNotProto = errors.New("not a protobuf message")

// eventItem returns the event a SubscribeResponse carries, nil for any
// other message.
func eventItem(msg any) *agentsv1.Event {
	if r, ok := msg.(*agentsv1.SubscribeResponse); ok {
		return r.GetEvent()
	}
	return nil
}
