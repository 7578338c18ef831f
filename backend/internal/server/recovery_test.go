package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/eventually"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store/storefault"
	"github.com/agents-os/agents/tools/fakellm"
)

// answersEveryCall checks the rule every provider enforces on a history:
// each tool call of an assistant message is answered by a tool message
// right after it, before anything else, and no tool message answers
// anything else.
func answersEveryCall(req fakellm.Request) error {
	msgs := req.Messages
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == "tool" {
			return fmt.Errorf("message %d answers call %s, which the message before did not make", i, m.ToolCallID)
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		open := map[string]bool{}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == "tool"; j++ {
			if !open[msgs[j].ToolCallID] {
				return fmt.Errorf("message %d answers call %s, which is not open", j, msgs[j].ToolCallID)
			}
			delete(open, msgs[j].ToolCallID)
		}
		if len(open) > 0 {
			var ids []string
			for id := range open {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			return fmt.Errorf("the tool calls %v of message %d have no result before message %d (%s)", ids, i, j, roleAt(msgs, j))
		}
		i = j - 1
	}
	return nil
}

func roleAt(msgs []fakellm.Message, i int) string {
	if i >= len(msgs) {
		return "the end"
	}
	return msgs[i].Role
}

// checkRequests fails the test unless every request the model received
// has a history a provider accepts.
func (e *env) checkRequests() {
	e.t.Helper()
	for _, req := range e.model.Requests() {
		if err := answersEveryCall(req); err != nil {
			e.t.Errorf("request %d: %v", req.Index, err)
		}
	}
}

// Issue 8, item 3: a session killed during a tool call, whose agent needs
// params a restart loses, settles its round before it fails for the
// params: after Resume with them, the model gets a result for every call.
func TestARoundCutByARestartIsSettledBeforeTheRunWaitsForParams(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
			{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_secret"}, {Name: "bash_hang"}}}},
			{Reply: fakellm.Reply{Text: "carried on after the restart"}},
		}}, on(d))
		feed := e.openSSE("/v1/events")
		res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
			Agent: "vault", Message: &agentsv1.Message{Text: "go"}, Params: map[string]string{"API_TOKEN": "t0ken"},
		}))
		if err != nil {
			t.Fatal(err)
		}
		id := res.Msg.GetSession().GetMeta().GetId()
		until(t, feed, kind(id, "tool.completed")) // the secret; the hang goes on

		e.restart()

		s := e.wait(id)
		if s.GetMeta().GetStatus() != failed || !strings.Contains(s.GetMeta().GetStatusReason(), "API_TOKEN") {
			t.Fatalf("after restart: status %v (%s), want failed asking for API_TOKEN", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
		}
		// The round is settled already: both calls have a result.
		if n := len(s.GetTurns()); n != 3 {
			t.Fatalf("turns = %d, want 3 (prompt, calls, their results)", n)
		}
		results := s.GetTurns()[2].GetUser().GetToolResults()
		if len(results) != 2 || results[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED || results[1].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED {
			t.Fatalf("results after restart = %v, want both calls aborted", results)
		}

		if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id, Params: map[string]string{"API_TOKEN": "t0ken"}})); err != nil {
			t.Fatal(err)
		}
		s = e.wait(id)
		if s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "carried on after the restart" {
			t.Fatalf("after resume: status %v (%s), last turn %v", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
		}
		if n := len(e.model.Requests()); n != 2 {
			t.Errorf("model requests = %d, want 2", n)
		}
		e.checkRequests()
	})
}

// Issue 8, item 3, the other way in: the store refuses the commit of a
// round's results for good (a refusal for now is tried again, issue 20
// item 4), the run fails, and a new message follows the calls. The calls
// get a result first, so the next request is one a provider takes.
func TestAMessageAfterARefusedRoundCommitStillAnswersEveryCall(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
			{Match: fakellm.Match{UserContains: "next question"}, Reply: fakellm.Reply{Text: "fine"}},
			{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
				{Name: "bash_echo", Arguments: []byte(`{"word": "a"}`)},
				{Name: "bash_echo", Arguments: []byte(`{"word": "b"}`)},
			}}},
		}}, withFaults(), on(d))
		e.faults.FailCommits(1, storefault.WithToolResults(), errs.Conflict(errs.CodeTurnConflict, "another writer moved the session"))

		id := e.create("boss", "go").GetMeta().GetId()
		s := e.wait(id)
		if s.GetMeta().GetStatus() != failed {
			t.Fatalf("status = %v (%s), want failed: the round could not be stored", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
		}
		if res := e.post(id, "next question"); res.GetMailId() != "" {
			t.Fatalf("post to a failed session became mail, want a run")
		}
		s = e.wait(id)
		if s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "fine" {
			t.Fatalf("after the message: status %v (%s), last turn %v", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
		}
		// The stored history keeps the rule too: the turn after the calls
		// answers both, and carries the message.
		u := s.GetTurns()[2].GetUser()
		if len(u.GetToolResults()) != 2 || u.GetText() != "next question" {
			t.Errorf("turn after the calls = %v, want both calls answered and the message", u)
		}
		e.checkRequests()
	})
}

// Issue 8, item 2, at a restart: when the store refuses the write that
// resumes an interrupted run, the session does not stay running without
// a run. It fails with the reason, and Resume takes the run up.
func TestARefusedRecoveryFailsTheSessionInsteadOfLeavingItRunning(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
			{Match: fakellm.Match{RequestIndex: steps(0)}, Reply: fakellm.Reply{Text: slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}},
			{Reply: fakellm.Reply{Text: "resumed"}},
		}}, withFaults(), on(d))
		feed := e.openSSE("/v1/events")
		id := e.create("helper", "go").GetMeta().GetId()
		until(t, feed, kind(id, "text.delta"))
		e.faults.RefuseCommits(1, storefault.WithEvent("run.started"))

		e.restart()

		s := e.wait(id)
		if s.GetMeta().GetStatus() != failed || !strings.Contains(s.GetMeta().GetStatusReason(), "resume") {
			t.Fatalf("after a refused recovery: status %v (%s), want failed, asking for a resume", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
		}
		eventually.That(t, "the store has the failure", func() bool { return e.storedStatus(id) == "failed" })
		if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id})); err != nil {
			t.Fatal(err)
		}
		if s := e.wait(id); s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "resumed" {
			t.Fatalf("after resume: status %v (%s), last turn %v", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
		}
	})
}
