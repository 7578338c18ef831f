//go:build unix

package main

import (
	"slices"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// TestSIGKILLBetweenAUserTurnAndItsAnswerAnswersItOnce kills the server
// right after CreateSession and PostMessage returned, before the model
// answered either message. The first server's model never answers a
// question after the first; the restarted server's model answers at
// once. Each last user turn must get exactly one answer after the restart.
func TestSIGKILLBetweenAUserTurnAndItsAnswerAnswersItOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	eachStore(t, func(t *testing.T, dir, db string) {
		bin := buildAgents(t)
		read := fakellm.Reply{Text: "read: {{last_user}}"}
		unexpected := &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}}
		before := fakellmtest.Start(t, fakellm.Rules{
			Rules: []fakellm.Rule{
				{Name: "first question", Match: fakellm.Match{SystemContains: slowPrompt, UserContains: "first question"}, Reply: read},
				{Name: "never answers", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: fakellm.Reply{InitialDelay: "10m", Text: "too late"}},
			},
			Default: unexpected,
		})
		after := fakellmtest.Start(t, fakellm.Rules{
			Rules:   []fakellm.Rule{{Name: "read", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: read}},
			Default: unexpected,
		})

		first := startServe(t, bin, dir, db, before.URL())
		posted := first.create(t, "slow", "first question")
		if s := first.waitIdle(t, posted); len(s.GetTurns()) != 2 {
			t.Fatalf("turns after the first answer = %d, want 2:\n%s", len(s.GetTurns()), dumpTurns(s))
		}
		res, err := first.sessions.PostMessage(ctxFor(t), connect.NewRequest(&agentsv1.PostMessageRequest{
			SessionId: posted,
			Message:   &agentsv1.Message{Text: "second question"},
		}))
		if err != nil {
			t.Fatalf("post the second question: %v", err)
		}
		if res.Msg.GetMailId() != "" {
			t.Fatalf("the second question became mail %s; want a turn of a new run", res.Msg.GetMailId())
		}
		created := first.create(t, "slow", "only question")
		first.kill(t)

		second := startServe(t, bin, dir, db, after.URL())
		for _, tc := range []struct {
			id   string
			user []string
		}{
			{posted, []string{"first question", "second question"}},
			{created, []string{"only question"}},
		} {
			s := second.waitIdle(t, tc.id)
			if got := s.GetMeta().GetStatus(); got != agentsv1.SessionStatus_SESSION_STATUS_READY {
				t.Errorf("session %s status after restart = %v (%s), want ready", tc.id, got, s.GetMeta().GetStatusReason())
			}
			var want []string
			for _, u := range tc.user {
				want = append(want, "read: "+u)
			}
			if got := userTexts(s); !slices.Equal(got, tc.user) {
				t.Errorf("session %s user messages = %q, want %q", tc.id, got, tc.user)
			}
			if got := llmTexts(s); !slices.Equal(got, want) {
				t.Errorf("session %s answers = %q, want %q", tc.id, got, want)
			}
			if n := len(s.GetTurns()); n != 2*len(tc.user) {
				t.Errorf("session %s has %d turns, want %d:\n%s", tc.id, n, 2*len(tc.user), dumpTurns(s))
			}
		}
		// The restarted server asked for each answer once.
		var asked []string
		for _, r := range after.Requests() {
			asked = append(asked, r.LastUserText())
		}
		slices.Sort(asked)
		if want := []string{"only question", "second question"}; !slices.Equal(asked, want) {
			t.Errorf("the restarted server asked the model about %q, want %q once each", asked, want)
		}
	})
}
