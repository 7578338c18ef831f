package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// Compact over the JSON route and over Connect: the compaction is a turn
// of the session with what it did, its events go out on the stream, and
// a session with nothing to fold says so with 412 nothing_to_compact.
func TestCompactOverTheRoutes(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "done"}})
	fresh := e.wait(e.create("boss", "hello").GetMeta().GetId())
	status, _, body := e.do("POST", "/v1/sessions/"+fresh.GetMeta().GetId()+"/compact", "")
	if code, reason, _ := jsonError(t, body); status != http.StatusPreconditionFailed || reason != "nothing_to_compact" {
		t.Fatalf("compact a one-exchange session: %d %s %s", status, code, reason)
	}

	id := fresh.GetMeta().GetId()
	for _, text := range []string{"first", "second", "third", "fourth"} {
		text += ": " + strings.Repeat("a long message that makes the history worth compacting ", 20)
		if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: text}})); err != nil {
			t.Fatal(err)
		}
		e.wait(id)
	}
	feed := e.openSSE("/v1/sessions/" + id + "/events")
	status, _, body = e.do("POST", "/v1/sessions/"+id+"/compact", `{"instruction": "keep the ordinals"}`)
	if status != http.StatusOK {
		t.Fatalf("compact: %d %s", status, body)
	}
	var res struct {
		Session    struct{ Status string }
		Compaction struct {
			Index      int
			Compaction struct {
				Reason          string
				SummaryEnd      int `json:"summary_end"`
				Summary         string
				SummarizedTurns int    `json:"summarized_turns"`
				TokensBefore    int64  `json:"tokens_before"`
				TokensAfter     int64  `json:"tokens_after"`
				Instruction     string `json:"instruction"`
			}
		}
		Pending bool
	}
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	c := res.Compaction.Compaction
	if res.Pending || res.Session.Status != "ready" || c.Reason != "manual" || c.Summary == "" || c.SummarizedTurns == 0 ||
		c.Instruction != "keep the ordinals" || c.TokensAfter >= c.TokensBefore {
		t.Fatalf("compact answered %s", body)
	}
	until(t, feed, kind(id, "compaction.started"))
	ev := until(t, feed, kind(id, "session.compacted"))
	if got := ev.GetSessionCompacted().GetTurn().GetCompaction().GetSummary(); got != c.Summary {
		t.Errorf("session.compacted carries summary %q, want %q", got, c.Summary)
	}
	until(t, feed, kind(id, "run.stopped"))

	// The turns it covers are all there, and the compaction with them.
	s := e.wait(id)
	var kinds []string
	for _, turn := range s.GetTurns() {
		switch turn.GetKind().(type) {
		case *agentsv1.Turn_User:
			kinds = append(kinds, "user")
		case *agentsv1.Turn_Llm:
			kinds = append(kinds, "llm")
		case *agentsv1.Turn_Compaction:
			kinds = append(kinds, "compaction")
		}
	}
	if want := "user llm user llm user llm user llm user llm compaction"; strings.Join(kinds, " ") != want {
		t.Errorf("turns %v, want %s", kinds, want)
	}
	// Connect answers the same way.
	_, err := e.sessions.Compact(ctxFor(t), connect.NewRequest(&agentsv1.CompactRequest{SessionId: "no-such-session"}))
	if codeOf(err) != connect.CodeNotFound {
		t.Errorf("compact an unknown session: %v", err)
	}
}
