package server_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// Issue 8, item 14: events name attachments but never carry their bytes,
// live or replayed from the log after a restart; the session's turns keep
// them, and the model reads them.
func TestEventsNameAttachmentsWithoutTheirBytes(t *testing.T) {
	t.Parallel()
	const payload = "attachment-payload-that-must-stay-out-of-events"
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{UserContains: payload}, Reply: fakellm.Reply{Text: "read it", ChunkSize: 2, ChunkDelay: "10ms"}},
		{Reply: fakellm.Reply{Text: "no file"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("helper", "hello").GetMeta().GetId()
	e.wait(id)
	file := func(name string) []*agentsv1.Attachment {
		return []*agentsv1.Attachment{{Name: name, MediaType: "text/plain", Data: []byte(payload)}}
	}
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id,
		Message: &agentsv1.Message{Text: "see the file", Attachments: file("first.txt")}})); err != nil {
		t.Fatal(err)
	}
	until(t, feed, kind(id, "text.delta"))
	// During the run it is mail, folded at the next step.
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id,
		Message: &agentsv1.Message{Text: "and this one", Attachments: file("second.txt")}})); err != nil {
		t.Fatal(err)
	}
	s := e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); got != "read it" {
		t.Fatalf("answer = %q: the model did not get the file", got)
	}
	stored := 0
	for _, turn := range s.GetTurns() {
		for _, a := range turn.GetUser().GetAttachments() {
			if string(a.GetData()) == payload {
				stored++
			}
		}
	}
	if stored != 2 {
		t.Fatalf("the turns hold %d of the 2 files", stored)
	}

	encoded := base64.StdEncoding.EncodeToString([]byte(payload))
	check := func(how string, s *sseStream) {
		t.Helper()
		named := map[string]bool{}
		for {
			f, ok := s.next(t)
			if !ok {
				t.Fatalf("%s: stream ended", how)
			}
			if f.id == "" {
				continue
			}
			if strings.Contains(f.data, payload) || strings.Contains(f.data, encoded) {
				t.Errorf("%s: %s event carries the file's bytes: %s", how, f.event, f.data)
			}
			ev := f.eventOf(t)
			for _, a := range ev.GetSessionUpdated().GetHeadTurn().GetUser().GetAttachments() {
				named[a.GetName()] = true
			}
			for _, n := range ev.GetMailAccepted().GetEnvelope().GetBody().GetUserMessage().GetAttachmentNames() {
				named["mail:"+n] = true
			}
			if ev.GetKind() == "run.stopped" && ev.GetSessionId() == id && ev.GetRunStopped().GetText() == "read it" {
				break
			}
		}
		for _, want := range []string{"first.txt", "second.txt", "mail:second.txt"} {
			if !named[want] {
				b, _ := json.Marshal(named)
				t.Errorf("%s: no event names %s (named: %s)", how, want, b)
			}
		}
	}
	check("replayed from the start", e.openSSE("/v1/events?after=0"))
	e.restart()
	check("replayed from the log after a restart", e.openSSE("/v1/events?after=0"))
}
