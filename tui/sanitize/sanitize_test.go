package sanitize

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

func TestText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"plain", "hello, world", "hello, world"},
		{"newline and tab stay", "a\n\tb\n", "a\n\tb\n"},
		{"unicode stays", "héllo 世界 👩‍💻 e\u0301", "héllo 世界 👩‍💻 e\u0301"},
		{"DCS", "a\x1bPq#0;2;0;0;0#0~~@@\x1b\\b", "ab"},
		{"DCS with params", "a\x1bP1$r0m\x1b\\b", "ab"},
		{"APC kitty graphics", "a\x1b_Gf=100,a=T;iVBORw0KGgo=\x1b\\b", "ab"},
		{"OSC 52 with BEL", "a\x1b]52;c;ZXZpbA==\x07b", "ab"},
		{"OSC 52 with ST", "a\x1b]52;c;ZXZpbA==\x1b\\b", "ab"},
		{"OSC 8 hyperlink", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"OSC title", "\x1b]0;pwned\x07x", "x"},
		{"SOS and PM", "a\x1bXsos\x1b\\b\x1b^pm\x1b\\c", "abc"},
		{"CSI SGR", "\x1b[1;31mred\x1b[0m", "red"},
		{"CSI clear and move", "a\x1b[2J\x1b[H\x1b[10;10Hb", "ab"},
		{"CSI private mode", "a\x1b[?1049lb\x1b[?2004h", "ab"},
		{"CSI window ops", "a\x1b[8;5;5tb", "ab"},
		{"ESC reset", "a\x1bcb", "ab"},
		{"ESC save cursor", "a\x1b7b\x1b8", "ab"},
		{"8-bit CSI", "a\x9b2Jb", "ab"},
		{"8-bit OSC with 8-bit ST", "a\x9d52;c;ZXZpbA==\x9cb", "ab"},
		{"8-bit DCS", "a\x90q#0~\x9cb", "ab"},
		{"8-bit APC", "a\x9fGpayload\x9cb", "ab"},
		{"C1 as characters: CSI", "a\u009b2Jb", "ab"},
		{"C1 as characters: OSC and ST", "a\u009d52;c;ZXZpbA==\u009cb", "ab"},
		{"C1 as characters: NEL", "a\u0085b", "ab"},
		{"C0 controls", "a\x00b\x07c\x08d\re\x0bf\x0cg\x7fh", "abcdefgh"},
		{"CR LF", "a\r\nb", "a\nb"},
		{"cancelled sequence", "a\x1b]52;c;xx\x18b", "ab"},
		{"unterminated OSC takes the rest", "a\x1b]52;c;ZXZpbA==", "a"},
		{"unterminated DCS takes the rest", "a\x1bPq#0", "a"},
		{"lone ESC", "a\x1b", "a"},
		{"invalid UTF-8", "a\xffb\xc3", "ab"},
		{"stray continuation byte", "a\xa9b", "ab"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Text(c.in); got != c.want {
				t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
			}
			if got := Text(c.want); got != c.want {
				t.Errorf("Text is not idempotent: Text(%q) = %q", c.want, got)
			}
		})
	}
}

func TestCleanTextIsNotCopied(t *testing.T) {
	s := "A plain answer, with **markdown**, 世界 and a\ttab.\n"
	if n := testing.AllocsPerRun(100, func() { _ = Text(s) }); n != 0 {
		t.Errorf("Text of clean text allocates %v times", n)
	}
}

func TestMessageCleansEveryString(t *testing.T) {
	t.Parallel()
	const dirty, clean = "x\x1b]52;c;ZXZpbA==\x07y", "xy"
	got := &agentsv1.Session{
		Meta: &agentsv1.SessionMeta{Id: "s1", Title: dirty, Agent: dirty},
		Turns: []*agentsv1.Turn{
			{Kind: &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{Text: dirty, Thinking: dirty, ToolCalls: []*agentsv1.ToolCall{{Name: dirty, Arguments: dirty}}}}},
			{Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{
				ToolResults: []*agentsv1.ToolResult{{Text: dirty}},
				Mail:        []*agentsv1.MailEnvelope{{Body: &agentsv1.MailBody{Kind: &agentsv1.MailBody_AgentMessage{AgentMessage: &agentsv1.AgentMessage{Text: dirty}}}}},
				Attachments: []*agentsv1.Attachment{{Name: dirty, Data: []byte(dirty)}},
			}}},
		},
	}
	Message(got)

	want := &agentsv1.Session{
		Meta: &agentsv1.SessionMeta{Id: "s1", Title: clean, Agent: clean},
		Turns: []*agentsv1.Turn{
			{Kind: &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{Text: clean, Thinking: clean, ToolCalls: []*agentsv1.ToolCall{{Name: clean, Arguments: clean}}}}},
			{Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{
				ToolResults: []*agentsv1.ToolResult{{Text: clean}},
				Mail:        []*agentsv1.MailEnvelope{{Body: &agentsv1.MailBody{Kind: &agentsv1.MailBody_AgentMessage{AgentMessage: &agentsv1.AgentMessage{Text: clean}}}}},
				// Bytes are a file's content, not text to show: kept.
				Attachments: []*agentsv1.Attachment{{Name: clean, Data: []byte(dirty)}},
			}}},
		},
	}
	if !proto.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}

	// Maps, their keys included, and lists of values at any depth.
	gotStruct, err := structpb.NewStruct(map[string]any{"k" + dirty: dirty, "list": []any{dirty, map[string]any{"n": dirty}}})
	if err != nil {
		t.Fatal(err)
	}
	Message(gotStruct)
	wantStruct, _ := structpb.NewStruct(map[string]any{"k" + clean: clean, "list": []any{clean, map[string]any{"n": clean}}})
	if !proto.Equal(gotStruct, wantStruct) {
		t.Errorf("got  %v\nwant %v", gotStruct, wantStruct)
	}
	gotMap := &agentsv1.PostMessageRequest{Params: map[string]string{dirty: dirty, "a": "b"}}
	Message(gotMap)
	if wantMap := (&agentsv1.PostMessageRequest{Params: map[string]string{clean: clean, "a": "b"}}); !proto.Equal(gotMap, wantMap) {
		t.Errorf("got  %v\nwant %v", gotMap, wantMap)
	}
}

func TestErrorKeepsTheCode(t *testing.T) {
	t.Parallel()
	in := connect.NewError(connect.CodeNotFound, errors.New("session \x1b]52;c;ZXZpbA==\x07gone"))
	in.Meta().Set("X-Trace", "t1")
	got := Error(in)
	var ce *connect.Error
	if !errors.As(got, &ce) {
		t.Fatalf("Error(%v) = %T, want a *connect.Error", in, got)
	}
	if ce.Code() != connect.CodeNotFound || ce.Message() != "session gone" || ce.Meta().Get("X-Trace") != "t1" {
		t.Errorf("got code %v, message %q, meta %v", ce.Code(), ce.Message(), ce.Meta())
	}

	other := Error(errors.New("dial \x9b2Jfailed"))
	if other.Error() != "dial failed" {
		t.Errorf("Error(plain) = %q", other.Error())
	}
	if Error(io.EOF) != io.EOF {
		t.Error("a clean error is not returned as it is")
	}
}

// A sequence split between pieces is held back until it ends: neither
// half shows as text, whatever the split.
func TestStreamHoldsBackASplitSequence(t *testing.T) {
	t.Parallel()
	const text = "a\x1b]52;c;c2VjcmV0\x07b\x1bP+q544e\x1b\\c\x1b_apc\x1b\\d\u009b2Je\x1b[1;31mf"
	for size := 1; size <= len(text); size++ {
		var st Stream
		var got strings.Builder
		rest := text
		for rest != "" {
			n := min(size, len(rest))
			for n < len(rest) && !utf8.RuneStart(rest[n]) {
				n++ // deltas are whole characters
			}
			got.WriteString(st.Next(rest[:n]))
			rest = rest[n:]
		}
		if got.String() != "abcdef" {
			t.Errorf("pieces of %d bytes: %q, want %q", size, got.String(), "abcdef")
		}
	}
	var st Stream
	if got := st.Next("open \x1b]0;title"); got != "open " {
		t.Errorf("an unfinished sequence: %q shown, want it held back", got)
	}
	if got := st.Next(" still\x07 closed"); got != " closed" {
		t.Errorf("after its end: %q, want %q", got, " closed")
	}
}

// The arguments of a tool call being written are cleaned as one text per
// call, as an answer's text is: a sequence split between two pieces
// shows in neither, and the pieces of another call or of the answer
// between them do not end it.
func TestStreamCleansACallsArgumentsAsOneText(t *testing.T) {
	t.Parallel()
	var s stream
	event := func(ev *agentsv1.Event) *agentsv1.SubscribeResponse {
		ev.SessionId = "s"
		return &agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Event{Event: ev}}
	}
	piece := func(call int32, args string) *agentsv1.SubscribeResponse {
		return event(&agentsv1.Event{Body: &agentsv1.Event_ToolCallDelta{ToolCallDelta: &agentsv1.ToolCallDelta{TurnIndex: 1, CallIndex: call, Arguments: args}}})
	}
	var first, second, text strings.Builder
	for _, resp := range []*agentsv1.SubscribeResponse{
		piece(0, `{"a":"x`),
		piece(0, "\x1b]52;c;"),
		piece(1, `{"b":`),
		event(&agentsv1.Event{Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{TurnIndex: 1, Text: "plain"}}}),
		piece(0, "c2Vj\x07y"),
		piece(1, `2}`),
		piece(0, `"}`),
	} {
		s.delta(resp)
		ev := resp.GetEvent()
		if d := ev.GetToolCallDelta(); d != nil && d.GetCallIndex() == 0 {
			first.WriteString(d.GetArguments())
		} else if d != nil {
			second.WriteString(d.GetArguments())
		}
		text.WriteString(ev.GetTextDelta().GetText())
	}
	if first.String() != `{"a":"xy"}` || second.String() != `{"b":2}` || text.String() != "plain" {
		t.Errorf("cleaned: %q, %q and %q", first.String(), second.String(), text.String())
	}
}
