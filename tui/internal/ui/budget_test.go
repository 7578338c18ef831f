package ui

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// The conversation's header follows the tree's spend live: each
// session.updated carries it, and a run the budget stopped says so.
func TestFlowHeaderShowsTheTreeBudgetLive(t *testing.T) {
	sess := session(7, "Fix the flaky upload test", "coder", agentsv1.SessionStatus_SESSION_STATUS_RUNNING, 6, "")
	sess.Usage = &agentsv1.Usage{PromptTokens: 15000, CompletionTokens: 5000, CostUsd: proto.Float64(0.4)}
	sess.Budget = budgetState(20000, 0.4, 50000, 1, false)
	fl := startFlow(t, nil, nil)
	fl.f.mu.Lock()
	fl.f.sessions[indexOfSession(fl.f.sessions, sess.GetId())] = sess
	fl.f.mu.Unlock()
	fl.press("ctrl+o")
	fl.typeText(sess.GetId())
	fl.press("enter")
	fl.waitFor("the budget", func(s string) bool {
		return strings.Contains(s, "reasoning 0 · $0.40") && strings.Contains(s, "budget 20.0k of 50.0k tokens (30.0k left) · $0.40 of $1.00 ($0.60 left)")
	})

	spent := proto.CloneOf(sess)
	spent.Status, spent.StatusReason = agentsv1.SessionStatus_SESSION_STATUS_PAUSED, "budget_exceeded"
	spent.Usage = &agentsv1.Usage{PromptTokens: 40000, CompletionTokens: 10000, CostUsd: proto.Float64(0.9)}
	spent.Budget = budgetState(50000, 0.9, 50000, 1, true)
	fl.f.emit(&agentsv1.Event{SessionId: sess.GetId(), Body: &agentsv1.Event_SessionUpdated{SessionUpdated: &agentsv1.SessionUpdated{Meta: spent}}})
	fl.f.emit(&agentsv1.Event{SessionId: sess.GetId(), Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{
		Status: agentsv1.SessionStatus_SESSION_STATUS_PAUSED, Reason: "budget_exceeded", Budget: "session"}}})
	frame := fl.waitFor("the budget spent", func(s string) bool {
		return strings.Contains(s, "budget 50.0k of 50.0k tokens (0 left) · $0.90 of $1.00 ($0.10 left) · exceeded")
	})
	if !strings.Contains(frame, "■ stopped: session budget spent") {
		t.Errorf("the header does not say the budget stopped the run:\n%s", frame)
	}
	fl.quit()
}

func budgetState(tokens int64, cost float64, maxTokens int64, maxCost float64, exceeded bool) *agentsv1.BudgetState {
	return &agentsv1.BudgetState{
		Budget:   &agentsv1.Budget{Tokens: proto.Int64(maxTokens), CostUsd: proto.Float64(maxCost)},
		Spent:    &agentsv1.Spend{Tokens: tokens, CostUsd: cost},
		Left:     &agentsv1.Budget{Tokens: proto.Int64(max(maxTokens-tokens, 0)), CostUsd: proto.Float64(max(maxCost-cost, 0))},
		Exceeded: exceeded,
	}
}

func indexOfSession(list []*agentsv1.SessionMeta, id string) int {
	for i, s := range list {
		if s.GetId() == id {
			return i
		}
	}
	return -1
}
