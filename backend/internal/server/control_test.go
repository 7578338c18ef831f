package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// slowText streams text slowly enough that a test can act while it does.
const slowText = "this answer takes a long while to arrive because it is streamed in very small pieces with a pause between each of them"

func slowReply(calls ...fakellm.ToolCall) fakellm.Reply {
	return fakellm.Reply{Text: slowText, ChunkSize: 2, ChunkDelay: "40ms", ToolCalls: calls}
}

// until reads the stream until an event satisfies match and returns it.
func until(t testing.TB, s *sseStream, match func(*agentsv1.Event) bool) *agentsv1.Event {
	t.Helper()
	// Heartbeats keep a quiet stream going: the wait has a deadline of
	// its own.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("the awaited event did not come within 30s")
		}
		f, ok := s.next(t)
		if !ok {
			t.Fatal("stream ended before the awaited event")
		}
		if f.id == "" || f.event == "snapshot" {
			continue
		}
		if ev := f.eventOf(t); match(ev) {
			return ev
		}
	}
}

func kind(session, k string) func(*agentsv1.Event) bool {
	return func(ev *agentsv1.Event) bool { return ev.GetSessionId() == session && ev.GetKind() == k }
}

// anyKind matches the first event of a kind, whatever its session.
func anyKind(k string) func(*agentsv1.Event) bool {
	return func(ev *agentsv1.Event) bool { return ev.GetKind() == k }
}

func codeOf(err error) connect.Code {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Code()
	}
	return connect.CodeUnknown
}

func lastTurn(s *agentsv1.Session) *agentsv1.Turn {
	return s.GetTurns()[len(s.GetTurns())-1]
}

func TestMessagePostedDuringARunIsFoldedAtTheNextStep(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: slowReply(fakellm.ToolCall{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "x"}`)})},
		{Match: fakellm.Match{AssistantMessages: steps(1), UserContains: "also check the weather"}, Reply: fakellm.Reply{Text: "saw the mail"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("boss", "start").GetMeta().GetId()
	until(t, feed, kind(id, "text.delta"))

	res, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: "also check the weather"}}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg.GetMailId() == "" {
		t.Fatal("a message posted during a run was not stored as mail")
	}
	accepted := until(t, feed, kind(id, "mail.accepted"))
	if accepted.GetMailAccepted().GetEnvelope().GetId() != res.Msg.GetMailId() {
		t.Errorf("mail.accepted = %v, want mail %s", accepted, res.Msg.GetMailId())
	}

	s := e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); got != "saw the mail" {
		t.Fatalf("answer = %q: the model did not see the mail at the next step", got)
	}
	folded := s.GetTurns()[2].GetUser().GetMail()
	if len(folded) != 1 || folded[0].GetId() != res.Msg.GetMailId() {
		t.Errorf("turn 2 folded mail = %v, want the posted message", folded)
	}
	mail, err := e.sessions.ListMail(ctxFor(t), connect.NewRequest(&agentsv1.ListMailRequest{SessionId: id}))
	if err != nil {
		t.Fatal(err)
	}
	if len(mail.Msg.GetMail()) != 1 || mail.Msg.GetMail()[0].GetDeliverTime() == nil {
		t.Errorf("mail = %v, want one delivered", mail.Msg.GetMail())
	}
}

func TestInterruptCutsTheModelCallAndContinuesWithTheMessage(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{UserContains: "stop that"}, Reply: fakellm.Reply{Text: "stopped, as asked"}},
		{Reply: fakellm.Reply{Text: slowText + slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("helper", "tell me everything").GetMeta().GetId()
	until(t, feed, kind(id, "text.delta"))

	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
		SessionId: id, Message: &agentsv1.Message{Text: "stop that", Interrupt: true},
	})); err != nil {
		t.Fatal(err)
	}
	s := e.wait(id)
	turns := s.GetTurns()
	if len(turns) != 4 {
		t.Fatalf("turns = %d, want 4 (prompt, cut answer, interrupt, answer): %v", len(turns), turns)
	}
	cut := turns[1].GetLlm()
	if !cut.GetInterrupted() || cut.GetText() == "" || len(cut.GetText()) >= 3*len(slowText) {
		t.Errorf("cut answer = interrupted %v, %d chars: want the part that arrived, marked interrupted", cut.GetInterrupted(), len(cut.GetText()))
	}
	if m := turns[2].GetUser().GetMail(); len(m) != 1 || m[0].GetBody().GetUserMessage().GetText() != "stop that" || m[0].GetPriority() != agentsv1.MailPriority_MAIL_PRIORITY_URGENT {
		t.Errorf("interrupt turn mail = %v", m)
	}
	if got := turns[3].GetLlm().GetText(); got != "stopped, as asked" {
		t.Errorf("answer after interrupt = %q", got)
	}
}

func TestCancelRunStopsNowAndTheSessionIsReady(t *testing.T) {
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}})
	feed := e.openSSE("/v1/events")
	id := e.create("helper", "go on and on").GetMeta().GetId()
	until(t, feed, kind(id, "text.delta"))

	status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/cancel", "")
	if status != http.StatusOK {
		t.Fatalf("cancel = %d %s", status, body)
	}
	stopped := until(t, feed, kind(id, "run.stopped"))
	if stopped.GetRunStopped().GetReason() != "cancelled" || stopped.GetRunStopped().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("run.stopped = %v, want ready, cancelled", stopped.GetRunStopped())
	}
	s := e.wait(id)
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY || !lastTurn(s).GetLlm().GetInterrupted() {
		t.Errorf("after cancel: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
	}
}

func TestCancelAttachedCancelsTheToolsAndTheRunGoesOn(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_hang"}}}},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "went on: {{last_tool_result}}"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("boss", "hang").GetMeta().GetId()
	until(t, feed, kind(id, "tool.started"))

	res, err := e.sessions.CancelAttached(ctxFor(t), connect.NewRequest(&agentsv1.CancelAttachedRequest{SessionId: id}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg.GetCancelled() != 1 {
		t.Errorf("cancelled = %d, want 1", res.Msg.GetCancelled())
	}
	s := e.wait(id)
	result := s.GetTurns()[2].GetUser().GetToolResults()[0]
	if result.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED {
		t.Errorf("hang result = %v, want cancelled", result)
	}
	if got := lastTurn(s).GetLlm().GetText(); !strings.HasPrefix(got, "went on: Cancelled") {
		t.Errorf("answer = %q, want the run to go on and the model to see the cancellation", got)
	}
}

func TestPauseTakesEffectAtTheStepBoundaryAndResumeContinues(t *testing.T) {
	for _, how := range []string{"Resume", "control mail"} {
		t.Run(how, func(t *testing.T) {
			e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
				{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: slowReply(fakellm.ToolCall{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "x"}`)})},
				{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "resumed"}},
			}})
			feed := e.openSSE("/v1/events")
			id := e.create("boss", "go").GetMeta().GetId()
			until(t, feed, kind(id, "text.delta"))

			if _, err := e.sessions.Pause(ctxFor(t), connect.NewRequest(&agentsv1.PauseRequest{SessionId: id})); err != nil {
				t.Fatal(err)
			}
			stopped := until(t, feed, kind(id, "run.stopped"))
			if stopped.GetRunStopped().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_PAUSED {
				t.Fatalf("run.stopped = %v, want paused", stopped.GetRunStopped())
			}
			s := e.wait(id)
			if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_PAUSED || len(s.GetTurns()) != 3 {
				t.Fatalf("paused session: status %v with %d turns, want paused after the step's tool results (3 turns)", s.GetMeta().GetStatus(), len(s.GetTurns()))
			}

			if how == "Resume" {
				_, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id}))
				if err != nil {
					t.Fatal(err)
				}
			} else {
				_, err := e.sessions.SendMail(ctxFor(t), connect.NewRequest(&agentsv1.SendMailRequest{SessionId: id, Body: &agentsv1.MailBody{
					Kind: &agentsv1.MailBody_Control{Control: &agentsv1.ControlMessage{Kind: &agentsv1.ControlMessage_Resume{Resume: &agentsv1.ResumeRun{}}}},
				}}))
				if err != nil {
					t.Fatal(err)
				}
			}
			until(t, feed, kind(id, "run.started"))
			s = e.wait(id)
			if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY || lastTurn(s).GetLlm().GetText() != "resumed" {
				t.Errorf("after resume: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
			}
		})
	}
}

func deferredScript() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "ask_user", Arguments: json.RawMessage(`{"question": "favourite colour?"}`)},
			{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "meanwhile"}`)},
		}}},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "noted"}},
	}}
}

func TestDeferredCallsWaitForTheirClientAndSurviveRestarts(t *testing.T) {
	e := start(t, deferredScript())
	feed := e.openSSE("/v1/events")
	id := e.create("clienty", "ask me").GetMeta().GetId()
	deferred := until(t, feed, kind(id, "calls.deferred")).GetCallsDeferred().GetCalls()
	if len(deferred) != 1 || deferred[0].GetCall().GetName() != "ask_user" || deferred[0].GetToken() == "" {
		t.Fatalf("calls.deferred = %v, want one ask_user call with a token", deferred)
	}
	token := deferred[0].GetToken()
	s := e.wait(id)
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_WAITING {
		t.Fatalf("status = %v, want waiting", s.GetMeta().GetStatus())
	}
	if p := s.GetPendingCalls(); len(p) != 1 || p[0].GetToken() != token {
		t.Fatalf("pending calls = %v, want the deferred call", p)
	}

	e.restart()

	if _, err := e.sessions.CompleteCall(ctxFor(t), connect.NewRequest(&agentsv1.CompleteCallRequest{Token: "no-such-token", Result: &agentsv1.CompleteCallRequest_Text{Text: "x"}})); codeOf(err) != connect.CodeNotFound {
		t.Errorf("unknown token: err = %v, want not_found", err)
	}
	status, _, body := e.do(http.MethodPost, "/v1/calls/"+token+"/complete", `{"text": "blue", "resume": true}`)
	if status != http.StatusOK {
		t.Fatalf("complete = %d %s", status, body)
	}
	s = e.wait(id)
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY || lastTurn(s).GetLlm().GetText() != "noted" {
		t.Fatalf("after completion: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
	}
	results := s.GetTurns()[2].GetUser().GetToolResults()
	if len(results) != 2 || results[0].GetText() != "blue" || !strings.Contains(results[1].GetText(), "echo: meanwhile") {
		t.Errorf("round results = %v, want the client's answer then the echo, in call order", results)
	}
	if len(s.GetPendingCalls()) != 0 {
		t.Errorf("pending calls after completion = %v", s.GetPendingCalls())
	}

	_, err := e.sessions.CompleteCall(ctxFor(t), connect.NewRequest(&agentsv1.CompleteCallRequest{Token: token, Result: &agentsv1.CompleteCallRequest_Text{Text: "again"}}))
	if codeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("second completion: err = %v, want failed_precondition", err)
	}
}

func TestCompletingWithoutResumeWaitsForResume(t *testing.T) {
	e := start(t, deferredScript())
	feed := e.openSSE("/v1/events")
	id := e.create("clienty", "ask me").GetMeta().GetId()
	token := until(t, feed, kind(id, "calls.deferred")).GetCallsDeferred().GetCalls()[0].GetToken()
	e.wait(id)

	if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id})); codeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("resume with a call unanswered: err = %v, want failed_precondition", err)
	}
	res, err := e.sessions.CompleteCall(ctxFor(t), connect.NewRequest(&agentsv1.CompleteCallRequest{Token: token, Result: &agentsv1.CompleteCallRequest_Error{Error: "the user left"}}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg.GetRemaining() != 0 || res.Msg.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_WAITING {
		t.Fatalf("complete without resume = %v, want waiting with nothing remaining", res.Msg)
	}
	if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id})); err != nil {
		t.Fatal(err)
	}
	s := e.wait(id)
	if r := s.GetTurns()[2].GetUser().GetToolResults()[0]; r.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR || r.GetText() != "the user left" {
		t.Errorf("failed answer = %v, want an error result", r)
	}
	if lastTurn(s).GetLlm().GetText() != "noted" {
		t.Errorf("last turn = %v", lastTurn(s))
	}
}

func TestForkAtATurnWithAnotherAgent(t *testing.T) {
	e := start(t, bossScript())
	id := e.create("boss", "go").GetMeta().GetId()
	e.wait(id)

	at := int32(2)
	res, err := e.sessions.ForkSession(ctxFor(t), connect.NewRequest(&agentsv1.ForkSessionRequest{SessionId: id, AtTurn: &at, Agent: "helper"}))
	if err != nil {
		t.Fatal(err)
	}
	fork := res.Msg.GetSession()
	if fork.GetMeta().GetForkedFrom() != id || fork.GetMeta().GetAgent() != "helper" || fork.GetMeta().GetId() == id {
		t.Errorf("fork meta = %v", fork.GetMeta())
	}
	// Six turns, cut at newest-first index 2: turns 0..3 stay, and turn 3
	// (the helper call) keeps the result its call had.
	if n := len(fork.GetTurns()); n != 5 {
		t.Fatalf("fork has %d turns, want 5", n)
	}
	kept := fork.GetTurns()[4].GetUser().GetToolResults()
	if len(kept) != 1 || kept[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK || kept[0].GetName() != "prompt_agent_helper" ||
		kept[0].GetText() != "helper says: what is up" {
		t.Errorf("fork's last turn = %v, want the helper call's own result", fork.GetTurns()[4])
	}

	head, err := e.sessions.ForkSession(ctxFor(t), connect.NewRequest(&agentsv1.ForkSessionRequest{SessionId: id}))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(head.Msg.GetSession().GetTurns()); n != 6 {
		t.Errorf("fork at the head has %d turns, want 6", n)
	}

	status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/fork", `{"atTurn": 9}`)
	if code, reason, _ := jsonError(t, body); status != http.StatusNotFound || code != "not_found" || reason != "unknown_turn" {
		t.Errorf("fork at a missing turn = %d %s", status, body)
	}
	status, _, body = e.do(http.MethodPost, "/v1/sessions/"+id+"/fork", `{"agent": "nobody"}`)
	if _, reason, _ := jsonError(t, body); status != http.StatusNotFound || reason != "unknown_agent" {
		t.Errorf("fork with an unknown agent = %d %s", status, body)
	}
}

func TestDeleteSingleIsRefusedWhileAChildRunsAndCascadeTakesAll(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}},
		{Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(0)}, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt": "think long"}`)}},
		}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("boss", "delegate").GetMeta().GetId()
	child := until(t, feed, kind(id, "subcall.started")).GetSubcallStarted().GetChildSessionId()

	status, _, body := e.do(http.MethodDelete, "/v1/sessions/"+id, "")
	if _, reason, _ := jsonError(t, body); status != http.StatusPreconditionFailed || reason != "session_has_children" {
		t.Fatalf("single delete with a running child = %d %s", status, body)
	}
	status, _, body = e.do(http.MethodDelete, "/v1/sessions/"+id+"?mode=cascade", "")
	if status != http.StatusOK || !strings.Contains(string(body), child) || !strings.Contains(string(body), id) {
		t.Fatalf("cascade delete = %d %s", status, body)
	}
	for _, gone := range []string{id, child} {
		if status, _, _ := e.do(http.MethodGet, "/v1/sessions/"+gone, ""); status != http.StatusNotFound {
			t.Errorf("GET deleted session %s = %d, want 404", gone, status)
		}
	}
	until(t, feed, kind(id, "session.deleted"))
}

func TestWatchDeliversTheTargetsOutcomeAsMailAndSurvivesRestart(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt, UserContains: "[mail from system watch]"}, Reply: fakellm.Reply{Text: "the watched session finished"}},
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "target done"}},
	}})
	created, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "helper"}))
	if err != nil {
		t.Fatal(err)
	}
	watcher := created.Msg.GetSession().GetMeta().GetId()
	target, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "helper"}))
	if err != nil {
		t.Fatal(err)
	}
	targetID := target.Msg.GetSession().GetMeta().GetId()
	if _, err := e.sessions.WatchSession(ctxFor(t), connect.NewRequest(&agentsv1.WatchSessionRequest{
		WatcherId: watcher, TargetId: targetID, Ttl: durationpb.New(time.Hour),
	})); err != nil {
		t.Fatal(err)
	}

	e.restart()

	feed := e.openSSE("/v1/events")
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: targetID, Message: &agentsv1.Message{Text: "work"}})); err != nil {
		t.Fatal(err)
	}
	until(t, feed, kind(watcher, "run.stopped"))
	w := e.wait(watcher)
	mail := w.GetTurns()[0].GetUser().GetMail()
	if len(mail) != 1 || !strings.Contains(mail[0].GetBody().GetAgentMessage().GetText(), targetID) || mail[0].GetSender().GetSystem() != "watch" {
		t.Fatalf("watcher's first turn mail = %v, want the target's outcome from the watch", mail)
	}
	if lastTurn(w).GetLlm().GetText() != "the watched session finished" {
		t.Errorf("watcher's answer = %v", lastTurn(w))
	}

	status, _, body := e.do(http.MethodDelete, "/v1/sessions/"+watcher+"/watch/"+targetID, "")
	if status != http.StatusOK {
		t.Fatalf("unwatch = %d %s", status, body)
	}
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: targetID, Message: &agentsv1.Message{Text: "more"}})); err != nil {
		t.Fatal(err)
	}
	e.wait(targetID)
	mailbox, err := e.sessions.ListMail(ctxFor(t), connect.NewRequest(&agentsv1.ListMailRequest{SessionId: watcher}))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(mailbox.Msg.GetMail()); n != 1 {
		t.Errorf("watcher got %d mails, want 1: the unwatched run must not mail it", n)
	}
}

func TestParamsReachToolsAreNeverReturnedAndMustBeResuppliedAfterRestart(t *testing.T) {
	const secret = "s3cr3t-value"
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{UserContains: "slow"}, Reply: fakellm.Reply{Text: slowText, ChunkSize: 2, ChunkDelay: "40ms"}},
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_secret"}}}},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "the tool said {{last_tool_result}}"}},
		{Reply: fakellm.Reply{Text: "resumed fine"}},
	}})
	_, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "keeper", Message: &agentsv1.Message{Text: "go"}}))
	if codeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "API_TOKEN") {
		t.Fatalf("create without the required param: err = %v, want failed_precondition naming API_TOKEN", err)
	}
	res, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "keeper", Message: &agentsv1.Message{Text: "go"}, Params: map[string]string{"API_TOKEN": secret},
	}))
	if err != nil {
		t.Fatal(err)
	}
	id := res.Msg.GetSession().GetMeta().GetId()
	s := e.wait(id)
	if got := s.GetTurns()[2].GetUser().GetToolResults()[0].GetText(); !strings.Contains(got, "token="+secret) {
		t.Fatalf("tool output = %q, want the param in its environment", got)
	}
	for _, path := range []string{"/v1/sessions/" + id, "/v1/sessions", "/v1/sessions/" + id + "/export?format=json"} {
		if _, _, body := e.do(http.MethodGet, path, ""); strings.Contains(strings.ReplaceAll(string(body), "token="+secret, ""), secret) {
			t.Errorf("GET %s returns the secret outside the tool output the model saw", path)
		}
	}

	// A run in flight at a restart needs its params again.
	feed := e.openSSE("/v1/events")
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: "slow"}})); err != nil {
		t.Fatal(err)
	}
	until(t, feed, kind(id, "text.delta"))
	e.restart()
	s = e.wait(id)
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_FAILED || !strings.Contains(s.GetMeta().GetStatusReason(), "API_TOKEN") {
		t.Fatalf("after restart: status %v (%s), want failed asking for API_TOKEN", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
	}
	if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id})); codeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("resume without params: err = %v, want failed_precondition", err)
	}
	if _, err := e.sessions.Resume(ctxFor(t), connect.NewRequest(&agentsv1.ResumeRequest{SessionId: id, Params: map[string]string{"API_TOKEN": secret}})); err != nil {
		t.Fatal(err)
	}
	s = e.wait(id)
	if s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("after resupplying params: status %v (%s)", s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason())
	}
}

func TestAgentsSendMailToEachOtherWithTheirSystemTools(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt, UserContains: "[mail from agent boss (session "}, Reply: fakellm.Reply{Text: "got your note"}},
		{Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "os_send_mail", Arguments: json.RawMessage(`{"session_id": "{{last_user}}", "text": "hello from the boss"}`)},
		}}},
		{Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "sent: {{last_tool_result}}"}},
	}})
	peer, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "helper"}))
	if err != nil {
		t.Fatal(err)
	}
	peerID := peer.Msg.GetSession().GetMeta().GetId()
	feed := e.openSSE("/v1/events")
	boss := e.create("boss", peerID).GetMeta().GetId()
	until(t, feed, kind(peerID, "run.stopped"))
	if got := lastTurn(e.wait(boss)).GetLlm().GetText(); !strings.HasPrefix(got, "sent: mail ") {
		t.Errorf("boss's answer = %q", got)
	}
	p := e.wait(peerID)
	mail := p.GetTurns()[0].GetUser().GetMail()
	if len(mail) != 1 || mail[0].GetSender().GetSessionId() != boss || mail[0].GetBody().GetAgentMessage().GetAgent() != "boss" {
		t.Errorf("peer's mail = %v, want the boss's note", mail)
	}
	if lastTurn(p).GetLlm().GetText() != "got your note" {
		t.Errorf("peer's answer = %v", lastTurn(p))
	}
}

func TestMailInToolResultFoldsMailIntoTheLastToolResult(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: slowReply(fakellm.ToolCall{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "x"}`)})},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "done"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("toolmail", "start").GetMeta().GetId()
	until(t, feed, kind(id, "text.delta"))
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: "by the way"}})); err != nil {
		t.Fatal(err)
	}
	e.wait(id)

	reqs := e.model.Requests()
	msgs := reqs[len(reqs)-1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, "echo: x") || !strings.Contains(last.Content, "[mail from user local]\nby the way") {
		t.Errorf("last message the model saw = %s %q, want the tool result with the mail appended", last.Role, last.Content)
	}
}

func TestCancellingTheParentsCallCancelsTheChild(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}},
		{Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(0)}, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt": "think long"}`)}},
		}},
		{Match: fakellm.Match{SystemContains: bossPrompt, AssistantMessages: steps(1)}, Reply: fakellm.Reply{Text: "went on without it"}},
	}})
	feed := e.openSSE("/v1/events")

	// The child cancelled on its own: the parent's call fails, the parent
	// goes on.
	id := e.create("boss", "delegate").GetMeta().GetId()
	child := until(t, feed, kind(id, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	until(t, feed, kind(child, "text.delta"))
	if _, err := e.sessions.CancelRun(ctxFor(t), connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: child})); err != nil {
		t.Fatal(err)
	}
	failed := until(t, feed, kind(id, "subcall.failed")).GetSubcallFailed()
	if failed.GetChildSessionId() != child || failed.GetReason() != "cancelled" {
		t.Errorf("subcall.failed = %v", failed)
	}
	s := e.wait(id)
	if lastTurn(s).GetLlm().GetText() != "went on without it" || s.GetTurns()[2].GetUser().GetToolResults()[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR {
		t.Errorf("parent after its child was cancelled: %v", s.GetTurns())
	}

	// The parent cancelled: its call is cancelled and the child with it.
	id = e.create("boss", "delegate again").GetMeta().GetId()
	child = until(t, feed, kind(id, "subcall.started")).GetSubcallStarted().GetChildSessionId()
	until(t, feed, kind(child, "text.delta"))
	if _, err := e.sessions.CancelRun(ctxFor(t), connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: id})); err != nil {
		t.Fatal(err)
	}
	c := e.wait(child)
	if c.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_READY || c.GetMeta().GetStatusReason() != "cancelled" {
		t.Errorf("child after its parent was cancelled: %v (%s), want ready, cancelled", c.GetMeta().GetStatus(), c.GetMeta().GetStatusReason())
	}
	p := e.wait(id)
	if r := p.GetTurns()[2].GetUser().GetToolResults()[0]; r.GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED || r.GetChildSessionId() != child {
		t.Errorf("parent's helper result = %v, want cancelled with the child's id", r)
	}
}

func TestMailToAnUnknownSessionIsRejectedToItsSender(t *testing.T) {
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	sender, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "helper"}))
	if err != nil {
		t.Fatal(err)
	}
	from := sender.Msg.GetSession().GetMeta().GetId()
	feed := e.openSSE("/v1/sessions/" + from + "/events")
	_, err = e.sessions.SendMail(ctxFor(t), connect.NewRequest(&agentsv1.SendMailRequest{
		SessionId:     "00000000-0000-0000-0000-000000000000",
		FromSessionId: from,
		Body:          &agentsv1.MailBody{Kind: &agentsv1.MailBody_AgentMessage{AgentMessage: &agentsv1.AgentMessage{Text: "anyone there?"}}},
	}))
	if codeOf(err) != connect.CodeNotFound {
		t.Fatalf("err = %v, want not_found", err)
	}
	rejected := until(t, feed, kind(from, "mail.rejected")).GetMailRejected()
	if rejected.GetCode() != "unknown_session" {
		t.Errorf("mail.rejected = %v", rejected)
	}
	status, _, body := e.do(http.MethodPost, "/v1/sessions/"+from+"/mail", `{"body": {}}`)
	if _, reason, _ := jsonError(t, body); status != http.StatusBadRequest || reason != "invalid_argument" {
		t.Errorf("empty mail body = %d %s", status, body)
	}
}

func TestAttachmentsPostedDuringARunReachTheNextTurn(t *testing.T) {
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: slowReply(fakellm.ToolCall{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "x"}`)})},
		{Match: fakellm.Match{AssistantMessages: steps(1), UserContains: "notes.txt"}, Reply: fakellm.Reply{Text: "read the notes"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("boss", "start").GetMeta().GetId()
	until(t, feed, kind(id, "text.delta"))
	if _, err := e.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{
		Text:        "see the file",
		Attachments: []*agentsv1.Attachment{{Name: "notes.txt", MediaType: "text/plain", Data: []byte("remember the milk")}},
	}})); err != nil {
		t.Fatal(err)
	}
	s := e.wait(id)
	turn := s.GetTurns()[2].GetUser()
	if a := turn.GetAttachments(); len(a) != 1 || a[0].GetName() != "notes.txt" || string(a[0].GetData()) != "remember the milk" {
		t.Errorf("turn attachments = %v, want the posted file", a)
	}
	if m := turn.GetMail(); len(m) != 1 || len(m[0].GetBody().GetUserMessage().GetAttachmentNames()) != 1 {
		t.Errorf("folded mail = %v, want the file named", m)
	}
	if got := lastTurn(s).GetLlm().GetText(); got != "read the notes" {
		t.Errorf("answer = %q: the model did not get the file", got)
	}
}

func TestForkWhileACallWaitsCutsTheCallOff(t *testing.T) {
	e := start(t, deferredScript())
	id := e.create("clienty", "ask me").GetMeta().GetId()
	if s := e.wait(id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_WAITING {
		t.Fatalf("status = %v, want waiting", s.GetMeta().GetStatus())
	}
	res, err := e.sessions.ForkSession(ctxFor(t), connect.NewRequest(&agentsv1.ForkSessionRequest{SessionId: id}))
	if err != nil {
		t.Fatal(err)
	}
	turns := res.Msg.GetSession().GetTurns()
	if len(turns) != 3 {
		t.Fatalf("fork has %d turns, want 3 (the call's answer cut off)", len(turns))
	}
	cut := turns[2].GetUser().GetToolResults()
	if len(cut) != 2 || cut[0].GetName() != "ask_user" || cut[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED ||
		!strings.Contains(cut[0].GetText(), "forked before this call completed") {
		t.Errorf("fork's last turn = %v, want the waiting call cut off", turns[2])
	}
}
