//go:build unix

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

const (
	bossPrompt = "boss agent of the crash test"
	aidePrompt = "aide agent of the crash test"
	aideAnswer = "aide says: the sea is teal"
)

func helperRules() fakellm.Rules {
	return fakellm.Rules{
		Rules: []fakellm.Rule{
			{Name: "delegate", Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_aide", Arguments: json.RawMessage(`{"prompt": "which colour is the sea?"}`)}},
			}},
			{Name: "report", Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: new(1), LastIsToolResult: new(true)}, Reply: fakellm.Reply{
				Text: "boss heard: {{last_tool_result}}",
			}},
			// The aide's first attempt streams until the kill; the retry
			// of the restarted server answers at once.
			{Name: "aide slow first attempt", Times: 1, Match: fakellm.Match{SystemContains: aidePrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				Text: slowText, ChunkSize: 8, ChunkDelay: "500ms",
			}},
			{Name: "aide answers", Match: fakellm.Match{SystemContains: aidePrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
				Text: aideAnswer,
			}},
		},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	}
}

// TestSIGKILLDuringAHelperRunDeliversTheChildsAnswerToItsParent kills the
// server while a parent's helper call waits for its child, whose model
// step is streaming. The restarted server must resume the child (once: no
// second child session) and hand its answer to the parent's waiting call,
// which the parent's model then reads.
func TestSIGKILLDuringAHelperRunDeliversTheChildsAnswerToItsParent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	eachStore(t, func(t *testing.T, dir, db string) {
		bin := buildAgents(t)
		model := fakellmtest.Start(t, helperRules())

		first := startServe(t, bin, dir, db, model.URL())
		feed := openEvents(t, first.url)
		boss := first.create(t, "boss", "ask your aide about the sea")
		delta := feed.waitFor(t, "the aide's first text.delta", func(ev *agentsv1.Event) bool {
			return ev.GetSessionId() != boss && ev.GetKind() == "text.delta"
		})
		child := delta.GetSessionId()
		if kids := first.children(t, boss); len(kids) != 1 || kids[0].GetId() != child {
			t.Fatalf("children of the boss while the aide streams = %v, want %s", kids, child)
		}
		first.kill(t)
		feed.close()

		second := startServe(t, bin, dir, db, model.URL())
		bossHeardItsAide(t, second, boss, child)
		c := second.waitIdle(t, child)
		if got := c.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
			t.Errorf("aide status = %v (%s), want ready", got, c.GetMeta().GetStatusReason())
		}
		if got := llmTexts(c); len(got) != 1 || got[0] != aideAnswer {
			t.Errorf("aide answers = %q, want only %q", got, aideAnswer)
		}
		if got := userTexts(c); len(got) != 1 {
			t.Errorf("aide prompts = %q, want one", got)
		}

		// The boss asked for each of its steps once; the aide's step was cut
		// once and retried.
		reqs := model.Requests()
		if n, m := stepRequests(reqs, bossPrompt, 0), stepRequests(reqs, bossPrompt, 1); n != 1 || m != 1 {
			t.Errorf("boss model requests: %d for its first step, %d for its second; want one each", n, m)
		}
		if n := stepRequests(reqs, aidePrompt, 0); n != 2 {
			t.Errorf("aide model requests = %d, want 2 (the cut attempt and its retry)", n)
		}
	})
}

// children lists the sessions whose parent is id.
func (p *serveProc) children(t *testing.T, id string) []*agentsv1.SessionMeta {
	t.Helper()
	res, err := p.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{ParentId: id}))
	if err != nil {
		t.Fatalf("list children of %s: %v", id, err)
	}
	return res.Msg.GetSessions()
}

// drainRules make the aide's first step call a tool after a short delay,
// so that a graceful stop lands while it is in flight, and its second step
// answer.
func drainRules() fakellm.Rules {
	r := helperRules()
	r.Rules = append([]fakellm.Rule{
		{Name: "aide looks around first", Match: fakellm.Match{SystemContains: aidePrompt, AssistantMessages: new(0)}, Reply: fakellm.Reply{
			InitialDelay: "400ms",
			ToolCalls:    []fakellm.ToolCall{{Name: "os_list_sub_sessions", Arguments: json.RawMessage(`{}`)}},
		}},
		{Name: "aide answers after looking", Match: fakellm.Match{SystemContains: aidePrompt, AssistantMessages: new(1)}, Reply: fakellm.Reply{
			Text: aideAnswer,
		}},
	}, r.Rules...)
	return r
}

// TestGracefulStopDuringAHelperRunKeepsTheParentWaitingForItsChild stops
// the server (SIGTERM, a drain) while a helper's child is in the middle of
// its run. The child stops at its step boundary and will go on at the
// next start; the parent's call must not be answered "aborted" meanwhile:
// after the restart it waits for the same child and gets its answer.
func TestGracefulStopDuringAHelperRunKeepsTheParentWaitingForItsChild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	eachStore(t, func(t *testing.T, dir, db string) {
		bin := buildAgents(t)
		model := fakellmtest.Start(t, drainRules())

		first := startServe(t, bin, dir, db, model.URL())
		feed := openEvents(t, first.url)
		boss := first.create(t, "boss", "ask your aide about the sea")
		started := feed.waitFor(t, "the aide's run", func(ev *agentsv1.Event) bool {
			return ev.GetSessionId() != boss && ev.GetKind() == "run.started"
		})
		child := started.GetSessionId()
		first.stop()
		feed.close()

		second := startServe(t, bin, dir, db, model.URL())
		bossHeardItsAide(t, second, boss, child)
		if n := stepRequests(model.Requests(), bossPrompt, 0); n != 1 {
			t.Errorf("boss asked for its first step %d times, want once", n)
		}
	})
}

// bossHeardItsAide checks, after a restart, that the boss ended ready with
// its aide's answer as its call's result and quoted it, and that child was
// its only aide.
func bossHeardItsAide(t *testing.T, p *serveProc, boss, child string) {
	t.Helper()
	s := p.waitIdle(t, boss)
	if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Fatalf("boss status after restart = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
	}
	checkAnswered(t, s)
	turns := s.GetTurns()
	if len(turns) != 4 {
		t.Fatalf("boss turns = %d, want 4 (message, call, result, answer):\n%s", len(turns), dumpTurns(s))
	}
	results := turns[2].GetUser().GetToolResults()
	if len(results) != 1 || results[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || !strings.Contains(results[0].GetText(), aideAnswer) {
		t.Fatalf("boss tool results = %v, want the aide's answer %q", results, aideAnswer)
	}
	if got := turns[3].GetLlm().GetText(); got != "boss heard: "+results[0].GetText() {
		t.Errorf("boss answer = %q, want it to quote the aide's answer", got)
	}
	if kids := p.children(t, boss); len(kids) != 1 || kids[0].GetId() != child {
		t.Fatalf("children of the boss after restart = %v, want only %s", kids, child)
	}
}
