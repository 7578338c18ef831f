package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/tools/fakellm"
)

const (
	chiefPrompt = "chief agent of the tests"
	askerPrompt = "asker agent of the tests"
)

// chiefAgents writes the agent "chief", whose helper "asker" echoes a
// word that waits for approval when it starts with rm.
func chiefAgents(t *testing.T) string {
	t.Helper()
	echo, err := filepath.Abs("testdata/tools/echo")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, file string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("chief.json", fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "chief", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Delegates to a helper that asks for approvals.", "systemPrompt": [%q],
		"extraAgents": [{"slug": "asker", "path": "asker.json"}]}}`, "You are the "+chiefPrompt+"."))
	write("asker.json", fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "asker", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Asks before it echoes rm.", "systemPrompt": [%q],
		"bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}],
		"approvals": [{"tool": "bash_echo", "when": {"arg": "word", "matches": "^rm"}}]}}`, "You are the "+askerPrompt+".", echo))
	return dir
}

func chiefScript() fakellm.Rules {
	yes := true
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: askerPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "asker read: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: askerPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "rm-it"}`)},
		}}},
		{Match: fakellm.Match{SystemContains: chiefPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "chief got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: chiefPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_asker", Arguments: json.RawMessage(`{"prompt": "echo rm-it"}`)},
		}}},
	}}
}

// waitBriefly long-polls a session for at most a few seconds: a session
// that waits for a client answers at once, one still running at the
// timeout.
func (e *env) waitBriefly(id string) *agentsv1.Session {
	e.t.Helper()
	res, err := e.sessions.GetSession(ctxFor(e.t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id, Wait: true, Timeout: durationpb.New(3 * time.Second)}))
	if err != nil {
		e.t.Fatalf("get session %s: %v", id, err)
	}
	return res.Msg.GetSession()
}

// checkWaitsForItsHelper checks that parent waits, as its clients see
// it and as the database has it, for its helper's child, which waits for
// what: its status reason names the child and what it waits for, and it
// has no call of its own to answer.
func (e *env) checkWaitsForItsHelper(parent, child, what string) {
	e.t.Helper()
	p := e.waitBriefly(parent)
	m := p.GetMeta()
	if m.GetStatus() != waiting || !strings.Contains(m.GetStatusReason(), child) || !strings.Contains(m.GetStatusReason(), what) ||
		m.GetPendingCalls() != 0 || len(p.GetPendingCalls()) != 0 || len(p.GetTurns()) != 2 {
		e.t.Fatalf("parent while its child waits: status %v (%q), %d pending (%v), %d turns, last %v; want waiting for its helper's session %s (%s) with its call open",
			m.GetStatus(), m.GetStatusReason(), m.GetPendingCalls(), p.GetPendingCalls(), len(p.GetTurns()), lastTurn(p), child, what)
	}
	if s := e.storedStatus(parent); s != session.StatusWaiting {
		e.t.Errorf("the database has the parent %s, want waiting", s)
	}
	for _, m := range e.list(false) {
		if m.GetId() == parent && (m.GetStatus() != waiting || m.GetPendingCalls() != 0) {
			e.t.Errorf("listed parent: %v, want waiting with no pending call", m)
		}
	}
}

// Issue 20, item 6: a call inside a helper's child that waits for
// approval keeps the parent's helper call open, as a deferred call keeps
// its own round: the parent waits (its status says for which session and
// what), and does not read "did not answer: waiting" and move on. Once
// approved, the child runs the call and answers, the parent runs again
// and its answer is the parent's result: after a restart between the
// two, an eviction, or a Resume of the parent as well.
func TestAnApprovalInAHelpersChildKeepsTheParentsCallOpen(t *testing.T) {
	t.Parallel()
	for _, between := range []string{"nothing", "restart", "eviction", "resume"} {
		t.Run(between, func(t *testing.T) {
			t.Parallel()
			opts := []option{withAgentsDir(chiefAgents(t))}
			if between == "eviction" {
				opts = append(opts, withRunner(quickEviction))
			}
			e := start(t, chiefScript(), opts...)
			feed := e.openSSE("/v1/events")
			parent := e.create("chief", "delegate").GetMeta().GetId()
			child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
			calls := until(t, feed, kind(child, "calls.deferred")).GetCallsDeferred().GetCalls()
			if len(calls) != 1 || calls[0].GetReason() != "approval" {
				t.Fatalf("the child's calls.deferred = %v, want one approval", calls)
			}
			if c := e.wait(child); c.GetMeta().GetStatus() != waiting {
				t.Fatalf("child = %v, want waiting for the approval", c.GetMeta())
			}
			if stopped := until(t, feed, kind(parent, "run.stopped")).GetRunStopped(); stopped.GetStatus() != waiting {
				t.Fatalf("the parent's run.stopped = %v, want waiting", stopped)
			}
			e.checkWaitsForItsHelper(parent, child, "approval of bash_echo")
			switch between {
			case "restart":
				e.restart()
			case "eviction":
				e.evicted()
			case "resume":
				// The parent is taken up again: its helper call waits for
				// the same child, and the parent waits again.
				if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: parent})); err != nil {
					t.Fatalf("resume the parent: %v", err)
				}
			}
			e.checkWaitsForItsHelper(parent, child, "approval of bash_echo")
			if status, body := e.answer(calls[0].GetToken(), `{"approval": {"approve": true}}`); status != http.StatusOK {
				t.Fatalf("approve the child's call = %d %s", status, body)
			}
			p := e.wait(parent)
			results := p.GetTurns()[2].GetUser().GetToolResults()
			if len(results) != 1 || results[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || results[0].GetChildSessionId() != child ||
				!strings.HasPrefix(results[0].GetText(), "asker read: echo: rm-it") {
				t.Fatalf("the parent's helper result = %v, want the child's answer", results)
			}
			if p.GetMeta().GetStatus() != ready || !strings.HasPrefix(lastTurn(p).GetLlm().GetText(), "chief got: asker read: echo: rm-it") {
				t.Errorf("parent: status %v, last turn %v", p.GetMeta().GetStatus(), lastTurn(p))
			}
			if c := e.wait(child); c.GetMeta().GetStatus() != ready || len(c.GetTurns()) != 4 {
				t.Errorf("child: status %v, %d turns, want ready after one round", c.GetMeta().GetStatus(), len(c.GetTurns()))
			}
		})
	}
}

// Issue 20, item 6: cancelling a parent whose helper call waits for an
// approval in the child cancels the child, and the approval with it: no
// approval is left open for a run nobody waits for.
func TestCancellingAParentSettlesTheApprovalItsChildWaitsFor(t *testing.T) {
	t.Parallel()
	e := start(t, chiefScript(), withAgentsDir(chiefAgents(t)))
	feed := e.openSSE("/v1/events")
	parent := e.create("chief", "delegate").GetMeta().GetId()
	child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	token := until(t, feed, kind(child, "calls.deferred")).GetCallsDeferred().GetCalls()[0].GetToken()
	e.cancel(parent)
	if c := e.wait(child); c.GetMeta().GetStatus() != ready || c.GetMeta().GetPendingCalls() != 0 {
		t.Errorf("child after its parent was cancelled: %v, want ready with nothing pending", c.GetMeta())
	}
	p := e.wait(parent)
	if r := p.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED {
		t.Errorf("the parent's helper result = %v, want cancelled", r)
	}
	if status, body := e.answer(token, `{"approval": {"approve": true}}`); status < 400 {
		t.Errorf("approving after the cancel = %d %s, want it refused", status, body)
	}
}

// Issue 20, item 6: a child paused between its steps keeps its parent's
// helper call open too; resumed, it goes on and answers the parent.
func TestAPausedHelpersChildKeepsTheParentsCallOpen(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: askerPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "asker read: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: askerPrompt}, Reply: slowReply(fakellm.ToolCall{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "hello"}`)})},
		{Match: fakellm.Match{SystemContains: chiefPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "chief got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: chiefPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_asker", Arguments: json.RawMessage(`{"prompt": "echo hello"}`)},
		}}},
	}}, withAgentsDir(chiefAgents(t)))
	feed := e.openSSE("/v1/events")
	parent := e.create("chief", "delegate").GetMeta().GetId()
	child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	until(t, feed, kind(child, "text.delta"))
	if _, err := e.sessions.Pause(ctxFor(t), connect.NewRequest(&agentsv1.PauseRequest{SessionId: child})); err != nil {
		t.Fatal(err)
	}
	if c := e.wait(child); c.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_PAUSED {
		t.Fatalf("child = %v, want paused", c.GetMeta())
	}
	e.checkWaitsForItsHelper(parent, child, "paused")
	if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: child})); err != nil {
		t.Fatal(err)
	}
	p := e.wait(parent)
	if r := p.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || !strings.HasPrefix(r[0].GetText(), "asker read: echo: hello") {
		t.Fatalf("the parent's helper result = %v, want the child's answer", r)
	}
}

// Issue 20, item 6: a parent the server stopped while its helper call
// waited for its child, and that no recovery took up (a command that runs
// no agents started the next server), is taken up by Resume as recovery
// would: its helper call waits for the same child, which goes on, and its
// answer is the parent's result, not an aborted call.
func TestResumeTakesUpAHelperCallTheServerStopped(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: askerPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "asker read: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: askerPrompt}, Reply: slowReply(fakellm.ToolCall{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "hello"}`)})},
		{Match: fakellm.Match{SystemContains: chiefPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "chief got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: chiefPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_asker", Arguments: json.RawMessage(`{"prompt": "echo hello"}`)},
		}}},
	}}, withAgentsDir(chiefAgents(t)))
	feed := e.openSSE("/v1/events")
	parent := e.create("chief", "delegate").GetMeta().GetId()
	child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	until(t, feed, kind(child, "text.delta"))
	e.stop()
	e.skipRecover = true
	e.boot()
	for _, id := range []string{parent, child} {
		if s := e.storedStatus(id); s != session.StatusRunning {
			t.Fatalf("session %s after the stop: %s, want running", id, s)
		}
	}
	if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: parent})); err != nil {
		t.Fatalf("resume the parent: %v", err)
	}
	p := e.wait(parent)
	if r := p.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK ||
		r[0].GetChildSessionId() != child || !strings.HasPrefix(r[0].GetText(), "asker read: echo: hello") {
		t.Fatalf("the parent's helper result = %v, want the child's answer", r)
	}
	if p.GetMeta().GetStatus() != ready || !strings.HasPrefix(lastTurn(p).GetLlm().GetText(), "chief got: asker read: echo: hello") {
		t.Errorf("parent: status %v, last turn %v", p.GetMeta().GetStatus(), lastTurn(p))
	}
}

// Issue 20, item 6: a child that went on, or came to rest, while its
// waiting parent could not be told (the server stopped in between) is
// seen at the next start: recovery takes the parent's helper call up,
// and the parent goes on.
func TestRecoveryTakesUpAParentWhoseHelpersChildWentOnUnseen(t *testing.T) {
	t.Parallel()
	e := start(t, chiefScript(), withAgentsDir(chiefAgents(t)))
	feed := e.openSSE("/v1/events")
	parent := e.create("chief", "delegate").GetMeta().GetId()
	child := until(t, feed, kind(parent, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	until(t, feed, kind(parent, "run.stopped"))
	e.checkWaitsForItsHelper(parent, child, "approval of bash_echo")
	// The child comes to rest behind the server's back, as if the server
	// stopped before it could tell the parent.
	m, err := e.store.GetMeta(context.Background(), child)
	if err != nil {
		t.Fatal(err)
	}
	m.Status, m.StatusReason = session.StatusReady, ""
	if err := e.store.UpdateMeta(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	e.restart()
	p := e.wait(parent)
	if p.GetMeta().GetStatus() != ready || len(p.GetTurns()) < 3 {
		t.Fatalf("parent after the restart: %v; want it taken up and done", p.GetMeta())
	}
	if r := p.GetTurns()[2].GetUser().GetToolResults(); len(r) != 1 || r[0].GetChildSessionId() != child {
		t.Fatalf("the parent's helper result = %v, want the child's", r)
	}
}
