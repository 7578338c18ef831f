package server_test

import (
	"context"
	"testing"

	"github.com/agents-os/agents/backend/internal/eventually"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store/storefault"
	"github.com/agents-os/agents/tools/fakellm"
)

// storedStatus is a session's status as the database has it.
func (e *env) storedStatus(id string) session.Status {
	e.t.Helper()
	m, err := e.store.GetMeta(context.Background(), id)
	if err != nil {
		e.t.Fatalf("read session %s from the store: %v", id, err)
	}
	return m.Status
}

func (e *env) post(id, text string) *agentsv1.PostMessageResponse {
	e.t.Helper()
	res, err := e.sessions.PostMessage(ctxFor(e.t), connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: text}}))
	if err != nil {
		e.t.Fatalf("post to %s: %v", id, err)
	}
	return res.Msg
}

func (e *env) get(id string) *agentsv1.Session {
	e.t.Helper()
	res, err := e.sessions.GetSession(ctxFor(e.t), connect.NewRequest(&agentsv1.GetSessionRequest{SessionId: id}))
	if err != nil {
		e.t.Fatalf("get session %s: %v", id, err)
	}
	return res.Msg.GetSession()
}

const (
	ready   = agentsv1.SessionStatus_SESSION_STATUS_READY
	running = agentsv1.SessionStatus_SESSION_STATUS_RUNNING
	failed  = agentsv1.SessionStatus_SESSION_STATUS_FAILED
	waiting = agentsv1.SessionStatus_SESSION_STATUS_WAITING
)

// Issue 8, item 2: when the store refuses the write that ends a run, the
// session is not left running without a run. The actor keeps the end,
// refuses other writes until the store has it, and writes it once the
// store takes writes again; from then on the session works as ever.
func TestARefusedRunEndNeverLeavesTheSessionRunningWithoutARun(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
			{Match: fakellm.Match{UserContains: "slowly"}, Reply: fakellm.Reply{Text: slowText, ChunkSize: 4, ChunkDelay: "20ms"}},
			{Reply: fakellm.Reply{Text: "first answer"}},
		}}, withFaults(), on(d))
		feed := e.openSSE("/v1/events")
		e.faults.RefuseCommits(storefault.Always, storefault.EndsRun())

		id := e.create("helper", "hello").GetMeta().GetId()
		ctx := ctxFor(t)
		if err := e.faults.WaitRefused(ctx, 1); err != nil {
			t.Fatal(err)
		}
		// The run is over, so the session does not say running, and a long
		// poll does not wait for a run that is not there.
		if s := e.wait(id); s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "first answer" {
			t.Fatalf("after the refused end: status %v, last turn %v; want ready after the answer", s.GetMeta().GetStatus(), lastTurn(s))
		}
		// A message is refused while the store still misses the run's end:
		// it never becomes mail that no run folds.
		_, err := e.sessions.PostMessage(ctx, connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: "too soon"}}))
		if codeOf(err) != connect.CodeUnavailable {
			t.Fatalf("post while the store refuses the run's end: err = %v, want unavailable", err)
		}

		e.faults.Clear()
		// A client polling the session meanwhile does not hold the write up.
		eventually.That(t, "the store has the run's end", func() bool {
			e.get(id)
			return e.storedStatus(id) == session.StatusReady
		})
		stopped := until(t, feed, kind(id, "run.stopped"))
		if stopped.GetRunStopped().GetText() != "first answer" {
			t.Errorf("run.stopped = %v, want the first run's end", stopped.GetRunStopped())
		}

		// A message now starts a run; the long poll waits for it.
		res := e.post(id, "answer slowly")
		if res.GetMailId() != "" || res.GetMeta().GetStatus() != running {
			t.Fatalf("post after the store recovered = %v, want a new run, not mail", res)
		}
		s := e.wait(id)
		if s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != slowText {
			t.Fatalf("after the second run: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
		}
		if n := len(s.GetTurns()); n != 4 {
			t.Errorf("turns = %d, want 4 (two questions, two answers)", n)
		}

		// And cancel stops a run.
		e.post(id, "again, slowly")
		until(t, feed, kind(id, "text.delta"))
		cancelled, err := e.sessions.CancelRun(ctx, connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: id}))
		if err != nil {
			t.Fatal(err)
		}
		if m := cancelled.Msg.GetMeta(); m.GetStatus() != ready || m.GetStatusReason() != "cancelled" {
			t.Errorf("cancel = status %v (%s), want ready, cancelled", m.GetStatus(), m.GetStatusReason())
		}
	})
}

// Issue 8, item 2, the other run end: a run that fails while the store
// refuses to record the failure is failed in memory, and stored failed
// once the store takes writes; a new message then runs.
func TestARefusedFailureIsStoredLaterAndTheSessionTakesInputAgain(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "fine now"}}, withFaults(), withModelFaults(), on(d))
		e.modelFaults.Fail(1, nil)
		e.faults.RefuseCommits(storefault.Always, storefault.WithEvent("session.failed"))

		id := e.create("helper", "hello").GetMeta().GetId()
		if err := e.faults.WaitRefused(ctxFor(t), 1); err != nil {
			t.Fatal(err)
		}
		if s := e.wait(id); s.GetMeta().GetStatus() != failed {
			t.Fatalf("status = %v, want failed", s.GetMeta().GetStatus())
		}
		e.faults.Clear()
		eventually.That(t, "the store has the failure", func() bool { return e.storedStatus(id) == session.StatusFailed })

		if res := e.post(id, "try again"); res.GetMailId() != "" {
			t.Fatalf("post to a failed session became mail %s, want a run", res.GetMailId())
		}
		if s := e.wait(id); s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "fine now" {
			t.Fatalf("after the retry: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
		}
	})
}

// Issue 8, item 9: CancelRun answers once the run stopped, with the
// session as the run left it.
func TestCancelRunAnswersWithTheSessionStopped(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		for _, during := range []string{"model call", "tool call"} {
			t.Run(during, func(t *testing.T) {
				t.Parallel()
				reply := fakellm.Reply{Text: slowText + slowText, ChunkSize: 2, ChunkDelay: "50ms"}
				if during == "tool call" {
					reply = fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_hang"}}}
				}
				e := start(t, fakellm.Rules{Default: &reply}, on(d))
				feed := e.openSSE("/v1/events")
				id := e.create("boss", "go on and on").GetMeta().GetId()
				if during == "tool call" {
					until(t, feed, kind(id, "tool.started"))
				} else {
					until(t, feed, kind(id, "text.delta"))
				}

				res, err := e.sessions.CancelRun(ctxFor(t), connect.NewRequest(&agentsv1.CancelRunRequest{SessionId: id}))
				if err != nil {
					t.Fatal(err)
				}
				if m := res.Msg.GetMeta(); m.GetStatus() != ready || m.GetStatusReason() != "cancelled" {
					t.Fatalf("cancel answered status %v (%s), want ready, cancelled", m.GetStatus(), m.GetStatusReason())
				}
				// Nothing of the run is left: the stored status agrees, and
				// no later event says the run went on.
				if got := e.storedStatus(id); got != session.StatusReady {
					t.Errorf("stored status = %v, want ready", got)
				}
				if s := e.get(id); s.GetInProgress() != nil {
					t.Errorf("a turn is still in progress after cancel: %v", s.GetInProgress())
				}
			})
		}
	})
}

// Issue 8, item 2, through mail: while the store misses a run's end, mail
// is refused like any other write of the session, not stored behind a
// refusal the client retries (which would deliver it twice).
func TestMailWhileTheStoreMissesARunsEndIsRefusedWhole(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "answer to {{last_user}}"}}, withFaults(), on(d))
		e.faults.RefuseCommits(storefault.Always, storefault.EndsRun())
		id := e.create("helper", "hello").GetMeta().GetId()
		if err := e.faults.WaitRefused(ctxFor(t), 1); err != nil {
			t.Fatal(err)
		}
		send := func() error {
			_, err := e.sessions.SendMail(ctxFor(t), connect.NewRequest(&agentsv1.SendMailRequest{SessionId: id, Body: &agentsv1.MailBody{
				Kind: &agentsv1.MailBody_UserMessage{UserMessage: &agentsv1.UserMessage{Text: "a note"}},
			}}))
			return err
		}
		if err := send(); codeOf(err) != connect.CodeUnavailable {
			t.Fatalf("mail while the store refuses the run's end: err = %v, want unavailable", err)
		}
		if n := len(e.mailOf(id)); n != 0 {
			t.Fatalf("the refused mail was stored: the mailbox holds %d", n)
		}
		e.faults.Clear()
		eventually.That(t, "the store has the run's end", func() bool { return e.storedStatus(id) == session.StatusReady })
		if err := send(); err != nil {
			t.Fatal(err)
		}
		eventually.That(t, "the mail is folded", func() bool { return len(e.get(id).GetTurns()) == 4 })
		if s := e.wait(id); lastTurn(s).GetLlm().GetText() != "answer to [mail from user local]\na note" || len(e.mailOf(id)) != 1 {
			t.Errorf("after the mail: last turn %v, %d mails", lastTurn(s), len(e.mailOf(id)))
		}
	})
}

// Issue 8, item 2, through a watch: mail stored for a watcher whose own
// run end the store still misses cannot wake it then; it wakes once the
// store has that end, instead of keeping mail that nothing folds.
func TestWatchMailForAWatcherTheStoreLagsBehindWakesItLater(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, watchRules(), withFaults(), on(d))
		watcher, target := e.watchPair()
		e.faults.RefuseCommits(storefault.Always, storefault.Of(watcher, storefault.EndsRun()))
		e.post(watcher, "first")
		if err := e.faults.WaitRefused(ctxFor(t), 1); err != nil {
			t.Fatal(err)
		}

		e.post(target, "one")
		e.wait(target)
		eventually.That(t, "the watcher has the target's mail", func() bool { return len(e.mailOf(watcher)) == 1 })
		e.faults.Clear()
		eventually.That(t, "the watcher folds the mail", func() bool { return len(foldedMail(e.get(watcher))) == 1 })
		if s := e.wait(watcher); lastTurn(s).GetLlm().GetText() != "seen" || s.GetMeta().GetStatus() != ready {
			t.Errorf("watcher after the mail: status %v, last turn %v", s.GetMeta().GetStatus(), lastTurn(s))
		}
	})
}
