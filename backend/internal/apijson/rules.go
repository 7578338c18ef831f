package apijson

import (
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The shapes that differ from one object per message, one field per
// field. The encoder, the decoder and the schemas (Schemas) all read
// them, so what is written, what is read and what is described agree.

// renamed gives fields a JSON name other than their proto name.
var renamed = map[protoreflect.FullName]string{
	// Beside the summary's pending_calls (a count) in the session object.
	"agents.v1.Session.pending_calls": "deferred_calls",
	// "from" reads better than "sender" in front of a user or session.
	"agents.v1.MailEnvelope.sender": "from",
}

// aliases are other names a field is read under (never written): the
// short names the design's route table gives.
var aliases = map[protoreflect.FullName][]string{
	// POST /v1/sessions {"parent": ID}, as the query's ?parent=.
	"agents.v1.CreateSessionRequest.parent_id": {"parent"},
}

// inlined fields have their message's fields written into the object
// of the message holding them, instead of an object of their own. On
// input the nested form (the field's own name with an object) is read
// too.
var inlined = map[protoreflect.FullName]bool{
	// One session object: the summary's fields at the top, then the
	// turns and the rest where the answer carries them.
	"agents.v1.Session.meta": true,
	// The body of a mail beside its sender and priority.
	"agents.v1.MailEnvelope.body":    true,
	"agents.v1.SendMailRequest.body": true,
	// POST /v1/sessions/{id}/messages takes the message's fields at the
	// top, beside params and run.
	"agents.v1.PostMessageRequest.message": true,
}

// flattened oneofs of messages have their member's fields written into
// the object holding them, with a key naming the member.
var flattened = map[protoreflect.FullName]oneofRule{
	// {"kind": "user_message", "text": "hi"}
	"agents.v1.MailBody.kind": {key: "kind"},
	// {"kind": "control", "control": "stop_run", "reason": "…"}
	"agents.v1.ControlMessage.kind": {key: "control"},
	// An event's own kind ("session.created") names its member.
	"agents.v1.Event.body": {key: "kind", ofField: true},
}

type oneofRule struct {
	// key names the member: its proto name ("user_message").
	key string
	// ofField says the key is a string field of the message itself whose
	// value is the member's name with dots for underscores (Event.kind).
	ofField bool
}

// fallback fields are written from another field when they are unset,
// and that other field is not written: PostMessageResponse's session is
// the session after the run with wait, its summary without.
var fallback = map[protoreflect.FullName]protoreflect.Name{
	"agents.v1.PostMessageResponse.session": "meta",
}

// emptyIsNull fields are written as null when empty: the token of the
// page after the last is no token at all.
var emptyIsNull = map[protoreflect.FullName]bool{
	"agents.v1.ListSessionsResponse.next_page_token": true,
	// A message that did not become mail has no mail id.
	"agents.v1.PostMessageResponse.mail_id": true,
}

const sessionMeta protoreflect.FullName = "agents.v1.SessionMeta"

// name is the JSON name of a field: its proto name unless renamed; a
// session summary held as meta is the session.
func name(fd protoreflect.FieldDescriptor) string {
	if n, ok := renamed[fd.FullName()]; ok {
		return n
	}
	if fd.Name() == "meta" && fd.Message() != nil && fd.Message().FullName() == sessionMeta && !inlined[fd.FullName()] {
		return "session"
	}
	return string(fd.Name())
}

// hidden reports a field that is written through another (fallback).
func hidden(fd protoreflect.FieldDescriptor) bool {
	return hiddenFields[fd.FullName()]
}

// hiddenFields are the fields fallback writes others from, by full name:
// every field of every message read is asked about, so the answer is a
// lookup rather than a walk over fallback.
var hiddenFields = func() map[protoreflect.FullName]bool {
	out := map[protoreflect.FullName]bool{}
	for to, from := range fallback {
		out[to.Parent().Append(from)] = true
	}
	return out
}()

// flatRule is the rule of the oneof fd belongs to, if it is flattened.
func flatRule(fd protoreflect.FieldDescriptor) (oneofRule, bool) {
	o := fd.ContainingOneof()
	if o == nil || o.IsSynthetic() {
		return oneofRule{}, false
	}
	r, ok := flattened[o.FullName()]
	return r, ok
}

// enumName is the written form of an enum value: SESSION_STATUS_READY of
// SessionStatus is "ready".
func enumName(v protoreflect.EnumValueDescriptor) string {
	return strings.ToLower(strings.TrimPrefix(string(v.Name()), enumPrefix(v.Parent().(protoreflect.EnumDescriptor))))
}

// enumPrefix is the prefix buf's lint rules give every value of an enum:
// its name in upper snake case and an underscore.
func enumPrefix(ed protoreflect.EnumDescriptor) string {
	var b strings.Builder
	for i, r := range string(ed.Name()) {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String()) + "_"
}
