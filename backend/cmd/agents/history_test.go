//go:build unix

package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// checkAnswered fails the test unless every tool call in s's history has
// a result in the turn right after it, one per call, in call order: the
// history a provider accepts.
func checkAnswered(t *testing.T, s *agentsv1.Session) {
	t.Helper()
	turns := s.GetTurns()
	for i, turn := range turns {
		calls := turn.GetLlm().GetToolCalls()
		if len(calls) == 0 {
			continue
		}
		if i+1 >= len(turns) || turns[i+1].GetUser() == nil {
			t.Errorf("turn %d of %s has tool calls and no user turn with their results after it:\n%s", i, s.GetMeta().GetId(), dumpTurns(s))
			continue
		}
		results := turns[i+1].GetUser().GetToolResults()
		if len(results) != len(calls) {
			t.Errorf("turn %d of %s has %d tool calls, turn %d has %d results:\n%s", i, s.GetMeta().GetId(), len(calls), i+1, len(results), dumpTurns(s))
			continue
		}
		for j, call := range calls {
			if results[j].GetCallId() != call.GetId() {
				t.Errorf("turn %d of %s: result %d answers call %q, want %q", i+1, s.GetMeta().GetId(), j, results[j].GetCallId(), call.GetId())
			}
		}
	}
}

// userTexts returns the texts of s's user turns that carry a message.
func userTexts(s *agentsv1.Session) []string {
	var texts []string
	for _, turn := range s.GetTurns() {
		if u := turn.GetUser(); u != nil && u.GetText() != "" {
			texts = append(texts, u.GetText())
		}
	}
	return texts
}

// llmTexts returns the texts of s's model turns.
func llmTexts(s *agentsv1.Session) []string {
	var texts []string
	for _, turn := range s.GetTurns() {
		if l := turn.GetLlm(); l != nil {
			texts = append(texts, l.GetText())
		}
	}
	return texts
}

func dumpTurns(s *agentsv1.Session) string {
	var b strings.Builder
	for _, turn := range s.GetTurns() {
		b.WriteString(prototext.Format(turn))
		b.WriteString("\n")
	}
	return b.String()
}

// stepRequests counts the requests one agent (by its system prompt) made
// to the model for the step after `assistant` model answers.
func stepRequests(reqs []fakellm.Request, prompt string, assistant int) int {
	n := 0
	for _, r := range reqs {
		if strings.Contains(r.SystemPrompt(), prompt) && r.AssistantMessages() == assistant {
			n++
		}
	}
	return n
}
