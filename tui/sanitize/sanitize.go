// Package sanitize keeps the server's text from driving the terminal.
// Whatever a model, a tool, an MCP server or another client wrote reaches
// the TUI as strings inside the protocol's messages and errors; printed as
// they are, an escape sequence among them could set the clipboard (OSC
// 52), draw images or talk to the terminal's own protocols (DCS, APC),
// move the cursor over the frame (CSI) or ring the bell. Interceptor
// cleans every answer, stream and error a client receives before anything
// draws it; the TUI's own styles are added afterwards.
package sanitize

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"connectrpc.com/connect"
	"github.com/charmbracelet/x/ansi"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Text is s without escape sequences (CSI, OSC, DCS, APC, SOS, PM and
// plain ESC ones, in their 7-bit and 8-bit forms, the payloads of string
// sequences included), without C0 and C1 controls other than newline and
// tab, and without bytes that are not UTF-8. Text with none of these is
// returned as it is, without allocating.
func Text(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		seq, size, c1, _ := item(s)
		if !c1 && printable(seq) {
			b.WriteString(seq)
		}
		s = s[size:]
	}
	return b.String()
}

// Stream cleans a text that arrives in pieces, as a streamed answer's
// deltas do: a sequence whose end has not come yet is held back, so
// neither its start nor the rest of it, when it comes, shows as text.
type Stream struct {
	held string
}

// Next returns the clean text of piece, holding back a sequence left
// unfinished at its end until the next piece.
func (s *Stream) Next(piece string) string {
	raw := s.held + piece
	cut := finished(raw)
	s.held = raw[cut:]
	return Text(raw[:cut])
}

// finished is how much of s a sequence does not run past: all of it,
// unless s ends inside a sequence, which then starts where it returns.
func finished(s string) int {
	if clean(s) {
		return len(s)
	}
	for i := 0; i < len(s); {
		_, size, _, open := item(s[i:])
		if open && i+size >= len(s) {
			return i
		}
		i += size
	}
	return len(s)
}

// item reads the first item of s, a character, a control or a whole
// sequence, as the parser does, and says how many bytes it takes. A C1
// control written as a character (U+0080–U+009F, the bytes C2 80–C2 9F)
// is read as its 8-bit byte, the second of the two (c1): terminals that
// obey it take what follows as the sequence it opens, and so does the
// parser. The parser knows where every sequence ends, string sequences
// and their terminators included; open says s ended before the item
// did, which then runs to the end of s.
func item(s string) (seq string, size int, c1, open bool) {
	lead := 0
	if len(s) > 1 && s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f {
		lead = 1
	}
	seq, _, n, state := ansi.DecodeSequence(s[lead:], ansi.NormalState, nil)
	if n == 0 {
		n = 1 // never stall on a byte the parser declines
	}
	return seq, lead + n, lead == 1, state != ansi.NormalState
}

// clean says s holds nothing Text would remove.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
		if c < utf8.RuneSelf {
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isC1(r) {
			return false
		}
		i += size - 1
	}
	return true
}

// printable says one item of the parser's output is text to keep: not a
// sequence, not a control, not a stray byte.
func printable(seq string) bool {
	if seq == "" {
		return false
	}
	c := seq[0]
	if c < utf8.RuneSelf {
		return c >= 0x20 && c != 0x7f || c == '\n' || c == '\t'
	}
	r, size := utf8.DecodeRuneInString(seq)
	return !(r == utf8.RuneError && size == 1) && !isC1(r)
}

// isC1 says r is a C1 control as a character (U+0080–U+009F), which a
// terminal may obey as it does its 8-bit byte.
func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// Message replaces every string of m, at any depth (lists, maps and their
// keys, oneofs, nested messages), by its Text.
func Message(m proto.Message) {
	if m != nil {
		message(m.ProtoReflect())
	}
}

func message(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			list(fd, v.List())
		case fd.IsMap():
			mapField(fd, v.Map())
		case fd.Kind() == protoreflect.StringKind:
			if s := v.String(); !clean(s) {
				m.Set(fd, protoreflect.ValueOfString(Text(s)))
			}
		case isMessage(fd):
			message(v.Message())
		}
		return true
	})
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind
}

func list(fd protoreflect.FieldDescriptor, l protoreflect.List) {
	for i := range l.Len() {
		switch {
		case fd.Kind() == protoreflect.StringKind:
			if s := l.Get(i).String(); !clean(s) {
				l.Set(i, protoreflect.ValueOfString(Text(s)))
			}
		case isMessage(fd):
			message(l.Get(i).Message())
		}
	}
}

func mapField(fd protoreflect.FieldDescriptor, m protoreflect.Map) {
	type entry struct {
		old protoreflect.MapKey
		key protoreflect.MapKey
		val protoreflect.Value
	}
	var moved []entry // entries whose key changes: set after the range
	strKeys := fd.MapKey().Kind() == protoreflect.StringKind
	val := fd.MapValue()
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		switch {
		case val.Kind() == protoreflect.StringKind:
			if s := v.String(); !clean(s) {
				v = protoreflect.ValueOfString(Text(s))
				m.Set(k, v)
			}
		case isMessage(val):
			message(v.Message())
		}
		if s := k.String(); strKeys && !clean(s) {
			moved = append(moved, entry{k, protoreflect.ValueOfString(Text(s)).MapKey(), v})
		}
		return true
	})
	for _, e := range moved {
		m.Clear(e.old)
		m.Set(e.key, e.val)
	}
}

// Error is err with its message cleaned. A Connect error stays one, with
// its code, details and metadata, so whoever reads the code still can; an
// error whose message is clean is returned as it is (io.EOF stays io.EOF).
func Error(err error) error {
	if err == nil || clean(err.Error()) {
		return err
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		out := connect.NewError(ce.Code(), errors.New(Text(ce.Message())))
		for _, d := range ce.Details() {
			out.AddDetail(d)
		}
		for k, vs := range ce.Meta() {
			out.Meta()[k] = vs
		}
		return out
	}
	return cleanError{err}
}

// cleanError shows a cleaned message and still unwraps to the original.
type cleanError struct{ err error }

func (e cleanError) Error() string { return Text(e.err.Error()) }
func (e cleanError) Unwrap() error { return e.err }

// Interceptor cleans what a client receives: every unary answer, every
// message of a stream, every error.
func Interceptor() connect.Interceptor { return interceptor{} }

type interceptor struct{}

func (interceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		resp, err := next(ctx, req)
		if err != nil {
			return resp, Error(err)
		}
		if m, ok := resp.Any().(proto.Message); ok {
			Message(m)
		}
		return resp, nil
	}
}

func (interceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		return &stream{StreamingClientConn: next(ctx, spec)}
	}
}

func (interceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// stream cleans each message it receives and the errors it ends with. A
// streamed answer's deltas are cleaned as one text per turn (see Stream),
// and those of a tool call being written as one text per call: a
// sequence the model split between two deltas would otherwise leave its
// second half on the screen as text.
type stream struct {
	connect.StreamingClientConn
	deltas map[deltaKey]*Stream
}

// deltaKey names a text one turn streams: its answer, its thinking, or
// the arguments of one of its tool calls.
type deltaKey struct {
	session string
	turn    int32
	// part is partText, partThinking, or partCalls plus the call's index.
	part int32
}

const (
	partText int32 = iota
	partThinking
	partCalls
)

func (s *stream) Receive(msg any) error {
	if err := s.StreamingClientConn.Receive(msg); err != nil {
		return Error(err)
	}
	if m, ok := msg.(proto.Message); ok {
		s.delta(m)
		Message(m)
	}
	return nil
}

// delta cleans a text, thinking or tool-call delta with the rest of its
// text, leaving what it holds back for the next one.
func (s *stream) delta(m proto.Message) {
	resp, ok := m.(*agentsv1.SubscribeResponse)
	if !ok || resp.GetEvent() == nil {
		return
	}
	ev := resp.GetEvent()
	var text *string
	var key deltaKey
	switch body := ev.GetBody().(type) {
	case *agentsv1.Event_TextDelta:
		text, key = &body.TextDelta.Text, deltaKey{ev.GetSessionId(), body.TextDelta.GetTurnIndex(), partText}
	case *agentsv1.Event_ThinkingDelta:
		text, key = &body.ThinkingDelta.Text, deltaKey{ev.GetSessionId(), body.ThinkingDelta.GetTurnIndex(), partThinking}
	case *agentsv1.Event_ToolCallDelta:
		d := body.ToolCallDelta
		if d.GetCallIndex() < 0 {
			return // Message cleans it alone
		}
		text, key = &d.Arguments, deltaKey{ev.GetSessionId(), d.GetTurnIndex(), partCalls + d.GetCallIndex()}
	default:
		return
	}
	st := s.deltas[key]
	if st == nil && clean(*text) {
		return
	}
	if st == nil {
		st = &Stream{}
		if s.deltas == nil {
			s.deltas = map[deltaKey]*Stream{}
		}
		s.deltas[key] = st
	}
	*text = st.Next(*text)
	if st.held == "" {
		// Nothing is held back: the next delta starts afresh.
		delete(s.deltas, key)
	}
}

func (s *stream) Send(msg any) error   { return Error(s.StreamingClientConn.Send(msg)) }
func (s *stream) CloseResponse() error { return Error(s.StreamingClientConn.CloseResponse()) }
func (s *stream) CloseRequest() error  { return Error(s.StreamingClientConn.CloseRequest()) }
