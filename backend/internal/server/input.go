package server

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/store"
)

// Character limits of the short free-text fields of requests. They are
// far above anything the server hands out or accepts (ids and tokens are
// 36-character UUIDs, slugs at most 51 characters, titles the runner makes
// 80), so a request over one is a mistake or an attack, and refusing it
// early keeps it out of queries, logs and error messages.
const (
	maxQueryChars     = store.MaxQueryLength
	maxTitleChars     = 200
	maxSlugChars      = 64
	maxIDChars        = 128
	maxPageTokenChars = 512
	maxNameChars      = 255
	maxReasonChars    = 1000
	maxParamNameChars = 128
	// maxParamValueBytes keeps a param, which tools see as an environment
	// variable, well under the kernel's 128 KiB bound on one.
	maxParamValueBytes = 64 << 10
)

// shortFields maps the name of a short text field of a request message,
// wherever it occurs, to its limit in characters.
var shortFields = map[protoreflect.Name]int{
	"query":            maxQueryChars,
	"title":            maxTitleChars,
	"agent":            maxSlugChars,
	"slug":             maxSlugChars,
	"kinds":            maxSlugChars,
	"session_id":       maxIDChars,
	"parent_id":        maxIDChars,
	"watcher_id":       maxIDChars,
	"target_id":        maxIDChars,
	"from_session_id":  maxIDChars,
	"token":            maxIDChars,
	"idempotency_key":  runner.MaxIdempotencyKey,
	"page_token":       maxPageTokenChars,
	"name":             maxNameChars,
	"owner":            maxNameChars,
	"media_type":       maxNameChars,
	"attachment_names": maxNameChars,
	"reason":           maxReasonChars,
	"instruction":      maxReasonChars,
}

// sizedFields are the long fields, bounded in bytes by Limits (see
// checkSizes): message texts, call answers, attachment data and stored
// agents' definitions; and the content of files to import, bounded by the
// body's limit alone (a conversation file is as long as its history).
var sizedFields = map[protoreflect.Name]bool{"text": true, "error": true, "data": true, "definition": true, "content": true}

// maxShortBody bounds the body of a route whose message has short fields
// only (shortFieldsOnly): a few of them at their limits fit many times.
const maxShortBody = 64 << 10

// shortFieldsOnly reports whether md, through the messages it holds, has
// no text but short fields (shortFields), no list and no map: what a body
// of it can carry is bounded by their limits. A message that holds itself is
// not: it nests without bound.
func shortFieldsOnly(md protoreflect.MessageDescriptor, outer ...protoreflect.FullName) bool {
	if slices.Contains(outer, md.FullName()) {
		return false
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		_, short := shortFields[fd.Name()]
		switch {
		case fd.IsMap() || fd.IsList():
			return false
		case fd.Kind() == protoreflect.StringKind || fd.Kind() == protoreflect.BytesKind:
			if !short {
				return false
			}
		case fd.Message() != nil && fd.Message().FullName().Parent() != "google.protobuf":
			if !shortFieldsOnly(fd.Message(), append(outer, md.FullName())...) {
				return false
			}
		}
	}
	return true
}

// checkFields checks every field set in a request message: short text
// fields against their limits, params against theirs, enums against
// their declared values, numbers and durations for being valid and not
// negative. A
// refusal names the field by its path (message.attachments[0].name).
func checkFields(m protoreflect.Message) error {
	return checkMessage("", m)
}

func checkMessage(prefix string, m protoreflect.Message) error {
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		err = checkField(prefix+string(fd.Name()), fd, v)
		return err == nil
	})
	return err
}

func checkField(path string, fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch {
	case fd.IsMap():
		return checkMap(path, fd, v.Map())
	case fd.IsList():
		list := v.List()
		for i := range list.Len() {
			if err := checkValue(fmt.Sprintf("%s[%d]", path, i), fd, list.Get(i)); err != nil {
				return err
			}
		}
		return nil
	}
	return checkValue(path, fd, v)
}

func checkValue(path string, fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.StringKind:
		if max, ok := shortFields[fd.Name()]; ok {
			if err := checkChars(path, v.String(), max); err != nil {
				return err
			}
		}
		if fd.Name() == "owner" && strings.ContainsFunc(v.String(), unicode.IsControl) {
			// Every client prints owners' names: an escape sequence in
			// one would drive the terminal that lists it.
			return errs.Invalid(errs.CodeInvalidArgument, "%s must not hold control characters", path)
		}
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind, protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		// The numbers of requests are counts and indexes.
		if n := v.Int(); n < 0 {
			return errs.Invalid(errs.CodeInvalidArgument, "%s is %d: it must not be negative", path, n)
		}
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			return errs.Invalid(errs.CodeInvalidArgument, "%s %d is not a %s value", path, v.Enum(), fd.Enum().Name())
		}
	case protoreflect.MessageKind:
		if d, ok := v.Message().Interface().(*durationpb.Duration); ok {
			return checkDuration(path, d)
		}
		return checkMessage(path+".", v.Message())
	}
	return nil
}

// checkMap checks params, the only map of the requests: names and values
// are bounded, and a value, which may be secret, is never quoted.
func checkMap(path string, fd protoreflect.FieldDescriptor, m protoreflect.Map) error {
	if fd.MapKey().Kind() != protoreflect.StringKind || fd.MapValue().Kind() != protoreflect.StringKind {
		return nil
	}
	var err error
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		name := k.String()
		if n := utf8.RuneCountInString(name); n > maxParamNameChars {
			err = errs.Invalid(errs.CodeInvalidArgument, "%s: a param name is %d characters, more than the limit of %d", path, n, maxParamNameChars)
		} else if n := len(v.String()); n > maxParamValueBytes {
			err = errs.Invalid(errs.CodeInvalidArgument, "%s: the value of %q is %d bytes, more than the limit of %d", path, name, n, maxParamValueBytes)
		}
		return err == nil
	})
	return err
}

func checkDuration(path string, d *durationpb.Duration) error {
	if err := d.CheckValid(); err != nil {
		return errs.Invalid(errs.CodeInvalidArgument, "%s: %v", path, err)
	}
	if d.AsDuration() < 0 {
		return errs.Invalid(errs.CodeInvalidArgument, "%s is %v: it must not be negative", path, d.AsDuration())
	}
	return nil
}

// checkChars refuses a field over max characters.
func checkChars(field, v string, max int) error {
	if len(v) <= max {
		return nil
	}
	if n := utf8.RuneCountInString(v); n > max {
		return errs.Invalid(errs.CodeInvalidArgument, "%s is %d characters, more than the limit of %d", field, n, max)
	}
	return nil
}
