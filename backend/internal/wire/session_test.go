package wire

import (
	"bytes"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/agents-os/agents/backend/internal/session"
)

// bigFile is the size of an attachment near the server's default cap.
const bigFile = 7_500_000

func userTurn() session.Turn {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return session.Turn{Index: 4, Created: created, User: &session.UserTurn{
		Text: "look at these",
		Attachments: []session.Attachment{
			{Name: "photo.png", MediaType: "image/png", Data: bytes.Repeat([]byte{0x89}, bigFile)},
			{Name: "notes.txt", MediaType: "text/plain", Data: []byte("short")},
		},
		ToolResults: []session.ToolResult{{CallID: "call_1", Name: "ls", Text: "a b", Status: session.ResultOK}},
		Mail: []session.Mail{{
			ID: "m1", SessionID: "s1", Sender: session.Sender{Kind: session.SenderUser, Name: "local"},
			Body:    session.MailBody{Kind: session.MailUserMessage, Text: "and this", AttachmentNames: []string{"late.png"}},
			Created: created,
		}},
	}}
}

func TestTurnForEventLeavesAttachmentBytesOut(t *testing.T) {
	t.Parallel()
	in := userTurn()
	got := TurnForEvent(in)

	if size := proto.Size(got); size > 1<<10 {
		t.Errorf("the event's turn takes %d bytes on the wire; want it without the attachments' bytes", size)
	}
	atts := got.GetUser().GetAttachments()
	if len(atts) != 2 {
		t.Fatalf("%d attachments, want 2 (each still listed)", len(atts))
	}
	for i, want := range in.User.Attachments {
		a := atts[i]
		if a.GetName() != want.Name || a.GetMediaType() != want.MediaType || len(a.GetData()) != 0 {
			t.Errorf("attachment %d = {%q %q %d bytes}, want {%q %q no bytes}", i, a.GetName(), a.GetMediaType(), len(a.GetData()), want.Name, want.MediaType)
		}
	}
	// Everything else is the turn as GetSession shows it, so that a
	// client finds the bytes there: attachment i of turn Index.
	full := Turn(in)
	for _, a := range full.GetUser().GetAttachments() {
		a.Data = nil
	}
	if !proto.Equal(got, full) {
		t.Errorf("the event's turn differs from the stored one beyond the bytes:\n got %v\nwant %v", got, full)
	}
	if len(in.User.Attachments[0].Data) != bigFile {
		t.Error("the conversion emptied the session's own attachment")
	}
}

func TestTurnKeepsAttachmentBytes(t *testing.T) {
	t.Parallel()
	got := Turn(userTurn()).GetUser().GetAttachments()
	if len(got) != 2 || len(got[0].GetData()) != bigFile || string(got[1].GetData()) != "short" {
		t.Errorf("Turn lost attachment bytes that GetSession must return")
	}
}

func TestTurnForEventKeepsModelTurns(t *testing.T) {
	t.Parallel()
	in := session.Turn{Index: 5, LLM: &session.LLMTurn{
		Text: "done", Thinking: "hm", Model: "m", FinishReason: "tool_calls",
		ToolCalls: []session.ToolCall{{ID: "c1", Name: "ls", Arguments: "{}", Kind: session.ToolBash, Mode: session.CallAttached}},
		Usage:     session.Usage{Prompt: 3, Completion: 4},
	}}
	if got, want := TurnForEvent(in), Turn(in); !proto.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// mail.accepted carries the envelope as Mail converts it: the names of a
// user message's files, never their bytes, even while the mail is pending
// and holds them.
func TestMailCarriesNoAttachmentBytes(t *testing.T) {
	t.Parallel()
	m := session.Mail{
		ID: "m1", SessionID: "s1", Sender: session.Sender{Kind: session.SenderUser, Name: "local"},
		Priority: session.PriorityNormal,
		Body: session.MailBody{
			Kind: session.MailUserMessage, Text: "steer", AttachmentNames: []string{"photo.png"},
			Attachments: []session.Attachment{{Name: "photo.png", MediaType: "image/png", Data: bytes.Repeat([]byte{1}, bigFile)}},
		},
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	got := Mail(m)
	if size := proto.Size(got); size > 1<<10 {
		t.Errorf("the envelope takes %d bytes on the wire; want it without the attachments' bytes", size)
	}
	msg := got.GetBody().GetUserMessage()
	if msg.GetText() != "steer" || len(msg.GetAttachmentNames()) != 1 || msg.GetAttachmentNames()[0] != "photo.png" {
		t.Errorf("user message = %v, want its text and attachment name", msg)
	}
}

// Metadata read back from its wire form is what was converted, so a
// server may take a session.updated event's metadata as the store's.
func TestMetaFromReadsBackWhatMetaConverted(t *testing.T) {
	cost, limit, tokens := session.Nanos(1_234_567_891), session.Nanos(5_000_000_000), int64(900)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	full := session.Meta{
		ID: "s1", Agent: "coder", Owner: "alice", Title: "Fix it", Status: session.StatusPaused, StatusReason: "budget_exceeded",
		ParentID: "p", ForkedFrom: "f", TurnCount: 7, Usage: session.Usage{Prompt: 1, Completion: 2, Cached: 3, Reasoning: 4, Cost: &cost},
		PendingMail: 2, PendingCalls: 1, Depth: 1, Created: at, Updated: at.Add(time.Second),
		AllowedTools: []string{"bash"}, AgentVersion: 3, RootID: "p",
		Budget: &session.Budget{Tokens: &tokens, Cost: &limit}, TreeSpend: session.Spend{Tokens: 950, Cost: cost},
	}
	bare := session.Meta{ID: "s2", Agent: "a", Owner: "o", Status: session.StatusReady, Created: at, Updated: at}
	for _, m := range []session.Meta{full, bare} {
		got := MetaFrom(Meta(m))
		if !proto.Equal(Meta(got), Meta(m)) {
			t.Errorf("read back %s: %v, want %v", m.ID, Meta(got), Meta(m))
		}
		if got.RootID != m.RootID || got.Usage.Cost != nil && *got.Usage.Cost != *m.Usage.Cost || got.TreeSpend != m.TreeSpend ||
			!got.Created.Equal(m.Created) || !got.Updated.Equal(m.Updated) || got.Status != m.Status || got.TurnCount != m.TurnCount {
			t.Errorf("read back %s: %+v, want %+v", m.ID, got, m)
		}
	}
}
