package server

import (
	"context"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/apijson"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/wire"
)

// The JSON routes that answer with a session (GetSession, and a post or
// create that waits) write its turns from the loaded session's turn
// cache (runner.TurnCache): a stored turn never changes, so each is
// encoded once while its session is loaded, not once per answer. A
// waiting GetSession after every prompt then costs the new turns'
// encoding, not the whole history's. The rest of the answer (meta,
// position, deferred calls, the step in flight) is encoded as usual, and
// the encoder takes the turns' array from the cache in its place.

// sessionSlot carries, from a handler to the JSON route that called it,
// the session an answer holds without its turns and the view they come
// from.
type sessionSlot struct {
	session *agentsv1.Session
	view    runner.View
	// written says the turns were written in the answer, err why they
	// could not be (see Replace).
	written bool
	err     error
	// turns is Session.turns, looked up once per answer.
	turns protoreflect.FieldDescriptor
}

// sessionFor is sessionOf for a handler: on a JSON route that asked for
// a slot the turns are left out of the message and recorded in the slot,
// for the route to write from the cache.
func sessionFor(ctx context.Context, view runner.View) *agentsv1.Session {
	st := stateOf(ctx)
	if st == nil || !st.slotted || st.slot.session != nil || len(view.Turns) == 0 {
		// A slot holds one session: a second one is answered whole.
		return sessionOf(view)
	}
	turns := view.Turns
	view.Turns = nil
	out := sessionOf(view)
	view.Turns = turns
	st.slot.session, st.slot.view = out, view
	return out
}

// sessionTurnsField is Session.turns. Looked up on first use: a
// descriptor read at package initialisation makes every command build the
// whole file's descriptors at start.
var sessionTurnsField = sync.OnceValue(func() protoreflect.FieldDescriptor {
	return (&agentsv1.Session{}).ProtoReflect().Descriptor().Fields().ByName("turns")
})

// appendSession appends msg, which holds slot.session, with the view's
// turns in that session.
func appendSession(dst []byte, msg proto.Message, slot *sessionSlot) ([]byte, error) {
	start := len(dst)
	slot.written, slot.err, slot.turns = false, nil, sessionTurnsField()
	b, err := apijson.AppendReplacing(dst, msg, slot)
	switch {
	case slot.err != nil:
		return b, slot.err
	case err != nil || slot.written:
		return b, err
	}
	// Not the message the slot was filled for: put the turns back.
	for _, t := range slot.view.Turns {
		slot.session.Turns = append(slot.session.Turns, wire.Turn(t))
	}
	return apijson.AppendReplacing(b[:start], msg, nil)
}

// Replace writes the turns of slot.session from the cache (see
// apijson.Replacer).
func (slot *sessionSlot) Replace(dst []byte, m protoreflect.Message, fd protoreflect.FieldDescriptor) ([]byte, bool) {
	if fd != slot.turns || m.Interface() != proto.Message(slot.session) {
		return dst, false
	}
	out, err := appendTurns(dst, slot.view)
	if err != nil {
		slot.err = err
		return dst, false
	}
	slot.written = true
	return out, true
}

// appendTurns appends the JSON array of the view's turns, each from the
// turn cache when it has it (and kept there when it did not).
func appendTurns(dst []byte, view runner.View) ([]byte, error) {
	dst = append(dst, '[')
	for i, t := range view.Turns {
		idx := view.FirstTurn + i
		b := view.Cache.Get(idx)
		if b == nil {
			var err error
			if b, err = apijson.Marshal(wire.Turn(t)); err != nil {
				return nil, err
			}
			view.Cache.Put(idx, b)
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, b...)
	}
	return append(dst, ']'), nil
}
