package apijson

import (
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// A shape is what the objects read for a message may hold: the keys
// that some field takes there, each with the shape of its value. The
// reader checks every key against it as the key is read, so a body of
// keys no field takes is refused at the first, before the keys after it
// are read into anything. The decoder still judges the values, and which
// keys it used (a shape takes every key the decoder might, never fewer).
type shape struct {
	md   protoreflect.MessageDescriptor
	once sync.Once
	// keys maps each key taken to the shape of its value: nil for any
	// value (a scalar, a map, a well-known type), which the decoder
	// judges alone. A list's items have the shape of the list.
	keys map[string]*shape
}

// shapes holds each message's shape, built on first use: every request
// of a route reads the same message.
var shapes sync.Map // protoreflect.FullName → *shape

// shapeOf is the shape of md's objects; its keys are worked out when
// first asked for, so messages that hold themselves are no trouble.
func shapeOf(md protoreflect.MessageDescriptor) *shape {
	if s, ok := shapes.Load(md.FullName()); ok {
		return s.(*shape)
	}
	s, _ := shapes.LoadOrStore(md.FullName(), &shape{md: md})
	return s.(*shape)
}

// takes reports whether an object of s holds key, and the shape of its
// value.
func (s *shape) takes(key string) (*shape, bool) {
	s.once.Do(func() {
		s.keys = map[string]*shape{}
		s.add(s.md)
	})
	v, ok := s.keys[key]
	return v, ok
}

// add takes the keys of md's fields as decodeFields reads them: an
// inlined message's and a flattened oneof member's fields in the same
// object, beside the field's own name holding the nested form.
func (s *shape) add(md protoreflect.MessageDescriptor) {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if hidden(fd) {
			continue
		}
		if rule, ok := flatRule(fd); ok {
			if !rule.ofField {
				s.take(rule.key, nil)
			}
			s.add(fd.Message())
		} else if inlined[fd.FullName()] {
			s.add(fd.Message())
		}
		for _, k := range keys(fd) {
			s.take(k, valueShape(fd))
		}
	}
}

// take notes key with the shape of its value; a key two fields take in
// different shapes (a flattened oneof's key beside a member's name) takes
// any value, which the decoder then judges.
func (s *shape) take(key string, value *shape) {
	if had, ok := s.keys[key]; ok && had != value {
		value = nil
	}
	s.keys[key] = value
}

// valueShape is the shape of fd's values: its message's, unless any
// object may stand there.
func valueShape(fd protoreflect.FieldDescriptor) *shape {
	m := fd.Message()
	if m == nil || fd.IsMap() || m.FullName().Parent() == "google.protobuf" {
		return nil
	}
	return shapeOf(m)
}
