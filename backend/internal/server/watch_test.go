package server_test

import (
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/store/storefault"
	"github.com/agents-os/agents/tools/fakellm"
)

// watchRules: the watched helper answers its prompt, the watching boss
// acknowledges its mail.
func watchRules() fakellm.Rules {
	return fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "answer to {{last_user}}"}},
		{Match: fakellm.Match{SystemContains: bossPrompt}, Reply: fakellm.Reply{Text: "seen"}},
	}}
}

// watchPair makes an idle watcher (boss) and an idle target (helper) and
// the watch between them.
func (e *env) watchPair() (watcher, target string) {
	e.t.Helper()
	ids := make([]string, 2)
	for i, agent := range []string{"boss", "helper"} {
		res, err := e.sessions.CreateSession(ctxFor(e.t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: agent}))
		if err != nil {
			e.t.Fatal(err)
		}
		ids[i] = res.Msg.GetSession().GetMeta().GetId()
	}
	if _, err := e.sessions.WatchSession(ctxFor(e.t), connect.NewRequest(&agentsv1.WatchSessionRequest{
		WatcherId: ids[0], TargetId: ids[1], Ttl: durationpb.New(time.Hour),
	})); err != nil {
		e.t.Fatal(err)
	}
	return ids[0], ids[1]
}

// foldedMail lists the text of every mail a session's turns folded, in
// history order.
func foldedMail(s *agentsv1.Session) []string {
	var out []string
	for _, t := range s.GetTurns() {
		for _, m := range t.GetUser().GetMail() {
			out = append(out, m.GetBody().GetAgentMessage().GetText())
		}
	}
	return out
}

// Issue 8, item 8: each run of the target tells its watcher how it ended
// exactly once, in the order the runs ended, restarts included.
func TestWatchMailArrivesOncePerRunInOrder(t *testing.T) {
	t.Parallel()
	e := start(t, watchRules())
	watcher, target := e.watchPair()
	feed := e.openSSE("/v1/events")
	for _, word := range []string{"one", "two"} {
		e.post(target, word)
		e.wait(target)
		until(t, feed, kind(watcher, "run.stopped"))
	}

	check := func(when string) {
		t.Helper()
		mail := e.mailOf(watcher) // newest first
		if len(mail) != 2 {
			t.Fatalf("%s: the watcher has %d mails, want 2", when, len(mail))
		}
		for i, word := range []string{"two", "one"} {
			if text := mail[i].GetBody().GetAgentMessage().GetText(); !strings.Contains(text, "answer to "+word) || !strings.Contains(text, target) {
				t.Errorf("%s: mail %d (newest first) = %q, want the outcome of run %q", when, i, text, word)
			}
		}
		folded := foldedMail(e.wait(watcher))
		if len(folded) != 2 || !strings.Contains(folded[0], "answer to one") || !strings.Contains(folded[1], "answer to two") {
			t.Errorf("%s: the watcher folded %q, want both outcomes once, in order", when, folded)
		}
	}
	check("before a restart")
	e.restart()
	check("after a restart")
}

// Issue 8, item 8: the watcher's mail is written with the target's run
// end, so when the store refuses that write the mail waits with it, is
// written when the write is, and is delivered once.
func TestWatchMailSurvivesARefusedRunEnd(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, watchRules(), withFaults(), on(d))
		watcher, target := e.watchPair()
		feed := e.openSSE("/v1/events")
		e.faults.RefuseCommits(2, storefault.WithMail(watcher))

		e.post(target, "one")
		until(t, feed, kind(watcher, "run.stopped"))
		if got := e.faults.Refused(); got != 2 {
			t.Errorf("refused writes = %d, want 2", got)
		}
		if s := e.wait(target); s.GetMeta().GetStatus() != ready || e.storedStatus(target) != "ready" {
			t.Errorf("target: status %v, stored %v, want ready", s.GetMeta().GetStatus(), e.storedStatus(target))
		}
		if mail := e.mailOf(watcher); len(mail) != 1 {
			t.Fatalf("the watcher has %d mails, want 1", len(mail))
		}
		if folded := foldedMail(e.wait(watcher)); len(folded) != 1 || !strings.Contains(folded[0], "answer to one") {
			t.Errorf("the watcher folded %q, want the outcome once", folded)
		}
	})
}

// Issue 20, item 3: deleting a watcher takes its watches with it, in the
// store and in memory, so the target's next run end writes no mail for a
// session that is gone and the target takes posts again.
func TestDeletingAWatcherLeavesItsTargetWorking(t *testing.T) {
	t.Parallel()
	e := start(t, watchRules())
	watcher, target := e.watchPair()
	if _, err := e.sessions.DeleteSession(ctxFor(t), connect.NewRequest(&agentsv1.DeleteSessionRequest{SessionId: watcher})); err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"one", "two"} {
		e.post(target, word)
		if s := e.wait(target); s.GetMeta().GetStatus() != ready || lastTurn(s).GetLlm().GetText() != "answer to "+word {
			t.Fatalf("run %q: status %v (%s), last turn %v", word, s.GetMeta().GetStatus(), s.GetMeta().GetStatusReason(), lastTurn(s))
		}
		if st := e.storedStatus(target); st != "ready" {
			t.Fatalf("run %q: stored status %s, want ready", word, st)
		}
	}
}
