package server

import (
	"bytes"
	"context"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/wire"
)

// The JSON routes that answer with a session (GetSession, and a post or
// create that waits) write its turns from the loaded session's turn
// cache (runner.TurnCache): a stored turn never changes, so each is
// encoded once while its session is loaded, not once per response. The
// rest of the response (meta, position, pending calls, the step in
// flight) is encoded as usual and the turns are spliced in; the result
// is the same JSON value protojson gives for the whole message, with
// the turns last.

// Turn formats in the runner's turn cache.
const (
	turnJSON = iota
)

// sessionSlot carries, from a handler to the JSON route that called it,
// the session a response holds without its turns and the view they come
// from.
type sessionSlot struct {
	session *agentsv1.Session
	view    runner.View
}

type sessionSlotKey struct{}

// sessionFor is sessionOf for a handler: on a JSON route that asked for
// a slot the turns are left out of the message and recorded in the slot,
// for the route to write from the cache.
func sessionFor(ctx context.Context, view runner.View) *agentsv1.Session {
	slot, _ := ctx.Value(sessionSlotKey{}).(*sessionSlot)
	if slot == nil || len(view.Turns) == 0 {
		return sessionOf(view)
	}
	turns := view.Turns
	view.Turns = nil
	out := sessionOf(view)
	view.Turns = turns
	slot.session, slot.view = out, view
	return out
}

var (
	sessionTurnsField = (&agentsv1.Session{}).ProtoReflect().Descriptor().Fields().ByName("turns")
	sessionFullName   = (&agentsv1.Session{}).ProtoReflect().Descriptor().FullName()
)

// marshalWithTurns encodes msg, which holds slot.session as one of its
// fields, with the view's turns in that session.
func marshalWithTurns(msg proto.Message, slot *sessionSlot) ([]byte, error) {
	m := msg.ProtoReflect()
	var field protoreflect.FieldDescriptor
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() &&
			fd.Message().FullName() == sessionFullName && m.Has(fd) &&
			m.Get(fd).Message().Interface() == slot.session {
			field = fd
			break
		}
	}
	if field == nil {
		// Not the message the slot was filled for: put the turns back.
		for _, t := range slot.view.Turns {
			slot.session.Turns = append(slot.session.Turns, wire.Turn(t))
		}
		return protoJSON.Marshal(msg)
	}
	m.Clear(field)
	outer, err := protoJSON.Marshal(msg)
	m.Set(field, protoreflect.ValueOfMessage(slot.session.ProtoReflect()))
	if err != nil {
		return nil, err
	}
	inner, err := protoJSON.Marshal(slot.session)
	if err != nil {
		return nil, err
	}
	// Every turn's encoding, from the cache when it has it (and kept
	// there when it did not).
	view := slot.view
	encs := make([][]byte, len(view.Turns))
	n := len(outer) + len(inner) + len(field.JSONName()) + len(sessionTurnsField.JSONName()) + 16
	for i, t := range view.Turns {
		idx := view.FirstTurn + i
		b := view.Cache.Get(idx, turnJSON)
		if b == nil {
			if b, err = protoJSON.Marshal(wire.Turn(t)); err != nil {
				return nil, err
			}
			view.Cache.Put(idx, turnJSON, b)
		}
		encs[i] = b
		n += len(b) + 1
	}
	out := make([]byte, 0, n)
	out = openMember(out, outer, field.JSONName())
	out = openMember(out, inner, sessionTurnsField.JSONName())
	out = append(out, '[')
	for i, b := range encs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	return append(out, "]}}"...), nil
}

// openMember appends the JSON object obj to out without its closing
// brace, then the start of one more member, "name": (its value and the
// brace are for the caller to add).
func openMember(out, obj []byte, name string) []byte {
	body := bytes.TrimRight(obj, " \t\r\n")
	body = body[:len(body)-1] // the closing brace
	out = append(out, body...)
	if len(bytes.TrimSpace(body)) > 1 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	return append(out, '"', ':')
}
