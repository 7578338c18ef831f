//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// TestSIGKILLDuringACompactionLosesNothingAndSummarisesOnce kills the
// server while the model writes a session's summary. The first server's
// model never answers a compaction request; the restarted server's
// answers at once. After the restart the session has every note it was
// given, and each summary the model was asked for is stored once: no
// two cover the same turns (a window this small may take a second one
// to fold what the first could not hold).
func TestSIGKILLDuringACompactionLosesNothingAndSummarisesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		bin := buildAgents(t)
		noted := &fakellm.Reply{Text: "noted"}
		before := fakellmtest.Start(t, fakellm.Rules{
			Rules:   []fakellm.Rule{{Name: "never summarises", Match: fakellm.Match{Compaction: true}, Reply: fakellm.Reply{InitialDelay: "10m", Text: "too late"}}},
			Default: noted,
		})
		after := fakellmtest.Start(t, fakellm.Rules{Default: noted})
		dir := t.TempDir()
		db := database(t, d, dir)
		extra := serveFlags(d)
		files := []string{"testdata/agents/small.json"}
		first := startServeAgents(t, bin, dir, db, before.URL(), files, "", extra...)

		note := func(i int) string {
			return fmt.Sprintf("note %d: %s", i, strings.Repeat("remember the quick brown fox ", 8))
		}
		id := first.create(t, "small", note(0))
		notes := 1
		for !summarising(before) {
			if notes == 80 {
				t.Fatal("80 notes and no compaction")
			}
			s := waitUntil(t, first, id, func() bool { return summarising(before) })
			if s == nil {
				break // the compaction call hangs: its run is running
			}
			if _, err := first.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
				SessionId: id, Message: &agentsv1.Message{Text: note(notes)},
			})); err != nil {
				t.Fatalf("post note %d: %v", notes, err)
			}
			notes++
		}
		first.kill(t)

		second := startServeAgents(t, bin, dir, db, after.URL(), files, "", extra...)
		s := second.waitIdle(t, id)
		if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
			t.Fatalf("status after the restart = %v (%s), want ready", got, s.GetMeta().GetStatusReason())
		}
		var users, summaries int
		end := int32(0)
		for _, turn := range s.GetTurns() {
			if u := turn.GetUser(); u != nil && strings.HasPrefix(u.GetText(), "note ") {
				users++
			}
			if c := turn.GetCompaction(); c != nil && c.GetSummary() != "" {
				summaries++
				if c.GetSummaryEnd() <= end {
					t.Errorf("turn %d summarises the turns before %d again (the one before ended at %d)", turn.GetIndex(), c.GetSummaryEnd(), end)
				}
				end = c.GetSummaryEnd()
			}
		}
		if users != notes {
			t.Errorf("%d notes kept, want %d:\n%s", users, notes, dumpTurns(s))
		}
		if summaries == 0 {
			t.Errorf("no summary stored:\n%s", dumpTurns(s))
		}
		asked := 0
		for _, r := range after.Requests() {
			if r.IsCompaction() {
				asked++
			}
		}
		if asked != summaries {
			t.Errorf("the restarted server asked for %d summaries and stored %d", asked, summaries)
		}
	})
}

// summarising reports whether the model was asked for a summary.
func summarising(model *fakellmtest.Server) bool {
	for _, r := range model.Requests() {
		if r.IsCompaction() {
			return true
		}
	}
	return false
}

// waitUntil waits until the session is idle, and returns it, or until
// stop holds, and returns nil.
func waitUntil(t *testing.T, p *serveProc, id string, stop func() bool) *agentsv1.Session {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if stop() {
			return nil
		}
		if s := p.get(t, id); s.GetMeta().GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_RUNNING {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("session %s neither idle nor summarising within 60s", id)
	return nil
}
