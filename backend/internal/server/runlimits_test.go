package server_test

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agents-os/agents/backend/internal/eventually"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/tools/fakellm"
)

// limitRules: the boss hangs in a tool unless asked to delegate, then
// reports what its helper call gave; the helper answers.
func limitRules() fakellm.Rules {
	yes := true
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: bossPrompt, LastIsToolResult: &yes, UserContains: "delegate"}, Reply: fakellm.Reply{Text: "saw: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: bossPrompt, UserContains: "delegate"}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_helper", Arguments: []byte(`{"prompt": "help"}`)},
		}}},
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "helped"}},
		{Match: fakellm.Match{SystemContains: bossPrompt}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_hang"}}}},
	}}
}

// running counts the sessions the store says are running.
func (e *env) running() int {
	e.t.Helper()
	n := 0
	for _, m := range e.list(false) {
		if m.GetStatus() == running {
			n++
		}
	}
	return n
}

func (e *env) cancel(id string) {
	e.t.Helper()
	if _, err := e.sessions.CancelRun(ctxFor(e.t), connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: id})); err != nil {
		e.t.Fatalf("cancel %s: %v", id, err)
	}
}

// Issue 8, item 11: the run limit is taken where a run opens, so a burst
// cannot overshoot it.
func TestABurstOfRunsNeverOvershootsTheLimit(t *testing.T) {
	t.Parallel()
	e := start(t, limitRules(), withLimits(server.Limits{MaxRuns: 1}))
	var started, refused atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss", Message: &agentsv1.Message{Text: "hang"}}))
			switch {
			case err == nil:
				started.Add(1)
			case codeOf(err) == connect.CodeResourceExhausted && machineCode(err) == "too_many_runs":
				refused.Add(1)
			default:
				t.Errorf("create in a burst: %v", err)
			}
		})
	}
	wg.Wait()
	if started.Load() != 1 || refused.Load() != 9 {
		t.Fatalf("a burst of 10 on a server limited to 1 run: %d started, %d refused", started.Load(), refused.Load())
	}
	if n := e.runner.ActiveRuns(); n != 1 {
		t.Errorf("active runs = %d, want 1", n)
	}
	if n := e.running(); n != 1 {
		t.Errorf("sessions stored running = %d, want 1", n)
	}
	status, _, body := e.do(http.MethodPost, "/v1/sessions", `{"agent": "boss", "message": {"text": "hang"}}`)
	if status != http.StatusTooManyRequests {
		t.Errorf("one more over JSON = %d %s, want 429", status, body)
	}
	if n := len(e.list(false)); n != 1 {
		t.Errorf("sessions = %d, want only the one that runs: a refused create leaves nothing", n)
	}
}

// Issue 8, item 11: runs the kernel starts itself count too. A helper's
// child needs a run of its own: with the one run the server allows taken
// by its parent, the helper call fails with the reason instead.
func TestAHelpersChildCountsAgainstTheRunLimit(t *testing.T) {
	t.Parallel()
	e := start(t, limitRules(), withLimits(server.Limits{MaxRuns: 1}))
	id := e.create("boss", "delegate").GetMeta().GetId()
	s := e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); !strings.Contains(got, "could not start the helper") || !strings.Contains(got, "limit") {
		t.Fatalf("answer = %q, want the helper call refused for the run limit", got)
	}
	if n := len(e.list(false)); n != 1 {
		t.Errorf("sessions = %d, want the parent alone: no child ran", n)
	}

	// Without the limit the same request runs the child.
	free := start(t, limitRules())
	s = free.wait(free.create("boss", "delegate").GetMeta().GetId())
	if got := lastTurn(s).GetLlm().GetText(); got != "saw: helped" {
		t.Errorf("answer without a limit = %q, want the helper's answer", got)
	}
}

// Issue 8, item 11: a session woken by mail needs a run too. While the
// limit is reached its mail waits, and it wakes when a run ends.
func TestMailWakesASessionOnlyWhenARunIsFree(t *testing.T) {
	t.Parallel()
	e := start(t, limitRules(), withLimits(server.Limits{MaxRuns: 1}))
	sleeper := e.mustCreateIdle("")
	busy := e.create("boss", "hang").GetMeta().GetId()

	if _, err := e.sessions.SendMail(ctxFor(t), connect.NewRequest(&agentsv1.SendMailRequest{SessionId: sleeper, Body: &agentsv1.MailBody{
		Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: "wake up"}},
	}})); err != nil {
		t.Fatalf("mail to a session while the limit is reached: %v", err)
	}
	if s := e.get(sleeper); s.GetMeta().GetStatus() != ready || s.GetMeta().GetPendingMail() != 1 {
		t.Fatalf("sleeper: status %v with %d pending mails, want ready with the mail waiting", s.GetMeta().GetStatus(), s.GetMeta().GetPendingMail())
	}
	if n := e.runner.ActiveRuns(); n != 1 {
		t.Fatalf("active runs = %d, want 1", n)
	}

	e.cancel(busy)
	eventually.That(t, "the sleeper wakes for its mail", func() bool { return len(e.get(sleeper).GetTurns()) == 2 })
	s := e.wait(sleeper)
	if s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "helped" || e.storedStatus(sleeper) != session.StatusReady {
		t.Errorf("sleeper after waking: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
	}
}

// Issue 20, the shadows of stored state: the queue of sessions whose mail
// waits for a run is the runner's memory of the store's pending mail. A
// queued session that is gone when its turn comes (deleted) passes the
// free run on to the next in the queue instead of leaving it idle with
// mail nobody folds.
func TestAQueuedSessionThatIsGonePassesTheFreeRunOn(t *testing.T) {
	t.Parallel()
	e := start(t, limitRules(), withLimits(server.Limits{MaxRuns: 1}))
	gone, next := e.mustCreateIdle(""), e.mustCreateIdle("")
	busy := e.create("boss", "hang").GetMeta().GetId()
	for _, id := range []string{gone, next} {
		if _, err := e.sessions.SendMail(ctxFor(t), connect.NewRequest(&agentsv1.SendMailRequest{SessionId: id, Body: &agentsv1.MailBody{
			Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: "wake up"}},
		}})); err != nil {
			t.Fatalf("mail while the limit is reached: %v", err)
		}
	}
	if status, _, body := e.do(http.MethodDelete, "/v1/sessions/"+gone, ""); status != http.StatusOK && status != http.StatusNoContent {
		t.Fatalf("delete = %d %s", status, body)
	}
	e.cancel(busy)
	eventually.That(t, "the next queued session wakes for its mail", func() bool { return len(e.get(next).GetTurns()) == 2 })
	if s := e.wait(next); s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "helped" {
		t.Errorf("next after waking: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
	}
}
