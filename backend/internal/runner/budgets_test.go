package runner_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/tools/fakellm"
)

// toolLoop calls the bench agent's tool at every step, each answer
// spending 30 input tokens (10 of them cached) and 10 output tokens.
var toolLoop = fakellm.Rules{Default: &fakellm.Reply{
	Text:      "working",
	ToolCalls: []fakellm.ToolCall{{Name: "noop", Arguments: json.RawMessage(`{}`)}},
	Usage:     fakellm.Usage{PromptTokens: 30, CompletionTokens: 10, CachedTokens: 10},
}}

func tokens(n int64) *int64 { return &n }

// lastStop is the newest run.stopped event of a session in the log.
func lastStop(t *testing.T, k *kernel, id string) *agentsv1.RunStopped {
	t.Helper()
	evs, err := k.db.EventsAfter(context.Background(), store.EventFilter{SessionID: id}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var stop *agentsv1.RunStopped
	for _, e := range evs {
		if e.Kind != "run.stopped" {
			continue
		}
		ev := &agentsv1.Event{}
		if err := proto.Unmarshal(e.Body, ev); err != nil {
			t.Fatal(err)
		}
		stop = ev.GetRunStopped()
	}
	if stop == nil {
		t.Fatalf("session %s has no run.stopped", id)
	}
	return stop
}

func budgetKernel(t *testing.T, d dialect, rules fakellm.Rules, reserve int64) *kernel {
	return newKernelWith(t, d, rules, kernelOptions{budgets: runner.Budgets{
		Prices: map[string]session.Price{
			"bench-model": {InputPerMTok: 1, CachedInputPerMTok: 0.5, OutputPerMTok: 2},
		},
		ReserveTokens: reserve,
	}})
}

func llmTurns(v runner.View) int {
	n := 0
	for _, t := range v.Turns {
		if t.LLM != nil {
			n++
		}
	}
	return n
}

// A tree's budget stops its run before the model call that would start
// at or over it; raising the budget and resuming goes on until the new
// one is spent. Each answer carries its cost under the price table.
func TestASessionBudgetStopsTheRunAndResumeContinuesOnceRaised(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, toolLoop, 10)
		ctx := context.Background()
		v, err := k.run.CreateSession(ctx, "me", runner.CreateRequest{Agent: "bench", Message: &runner.Message{Text: "loop"}, Budget: &session.Budget{Tokens: tokens(100)}})
		if err != nil {
			t.Fatal(err)
		}
		id := v.Meta.ID
		// 40 tokens a call: 0, 40 and 80 are under 100; 120 is not.
		v = k.wait(t, id)
		if v.Meta.Status != session.StatusPaused || v.Meta.StatusReason != runner.StopBudget {
			t.Fatalf("status %s (%s), want paused (%s)", v.Meta.Status, v.Meta.StatusReason, runner.StopBudget)
		}
		if n := llmTurns(v); n != 3 {
			t.Fatalf("%d model answers, want 3", n)
		}
		if stop := lastStop(t, k, id); stop.GetReason() != runner.StopBudget || stop.GetBudget() != store.ScopeSession || stop.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_PAUSED {
			t.Fatalf("run.stopped = %v, want paused by the session's budget", stop)
		}
		if n := len(k.model.Requests()); n != 3 {
			t.Fatalf("%d model calls, want 3", n)
		}
		if got := v.Meta.TreeSpend.Tokens; got != 120 {
			t.Fatalf("tree spent %d tokens, want 120", got)
		}
		// 20 uncached input tokens at $1, 10 cached at $0.5 and 10 output
		// at $2 per million: $0.000045.
		for _, turn := range v.Turns {
			if turn.LLM == nil {
				continue
			}
			if c := turn.LLM.Usage.Cost; c == nil || *c != 45000 {
				t.Fatalf("turn %d costs %v nanodollars, want 45000", turn.Index, c)
			}
		}
		if c := v.Meta.Usage.Cost; c == nil || *c != 3*45000 {
			t.Fatalf("session costs %v, want %d", c, 3*45000)
		}

		if _, err := k.run.UpdateSession(ctx, "me", id, runner.Update{Budget: &session.Budget{Tokens: tokens(200)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := k.run.Resume(ctx, "me", id, nil); err != nil {
			t.Fatal(err)
		}
		v = k.wait(t, id)
		if v.Meta.Status != session.StatusPaused || v.Meta.StatusReason != runner.StopBudget {
			t.Fatalf("after resuming: %s (%s)", v.Meta.Status, v.Meta.StatusReason)
		}
		// 120 and 160 are under 200; 200 is not.
		if n := llmTurns(v); n != 5 {
			t.Fatalf("after resuming: %d model answers, want 5", n)
		}
	})
}

// A helper's child spends its parent's budget: the parent stops before
// its next call once the child spent the tree's budget.
func TestAHelpersSpendCountsAgainstItsParentsBudget(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{
		Default: &fakellm.Reply{Text: "done", Usage: fakellm.Usage{PromptTokens: 5, CompletionTokens: 5}},
		Rules: []fakellm.Rule{
			{Match: fakellm.Match{UserContains: "work"}, Reply: fakellm.Reply{Text: "worked", Usage: fakellm.Usage{PromptTokens: 400, CompletionTokens: 100}}},
			{Match: fakellm.Match{UserContains: "go"}, Times: 1, Reply: fakellm.Reply{
				ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt":"work"}`)}},
				Usage:     fakellm.Usage{PromptTokens: 5, CompletionTokens: 5},
			}},
		},
	}
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, rules, 10)
		v, err := k.run.CreateSession(context.Background(), "me", runner.CreateRequest{Agent: "boss", Message: &runner.Message{Text: "go"}, Budget: &session.Budget{Tokens: tokens(300)}})
		if err != nil {
			t.Fatal(err)
		}
		v = k.wait(t, v.Meta.ID)
		if v.Meta.Status != session.StatusPaused || v.Meta.StatusReason != runner.StopBudget {
			t.Fatalf("parent: %s (%s), want paused (%s)", v.Meta.Status, v.Meta.StatusReason, runner.StopBudget)
		}
		if got := v.Meta.TreeSpend.Tokens; got != 510 {
			t.Fatalf("tree spent %d tokens, want 510", got)
		}
		if n := len(k.model.Requests()); n != 2 {
			t.Fatalf("%d model calls, want 2 (the parent's first and the child's)", n)
		}
	})
}

// Two sessions of one owner racing for the last of the owner's budget
// cannot both start a call: the first call's reservation holds what is
// left, and the second session stops before it calls the model.
func TestTwoSessionsOfAnOwnerNeverBothStartPastItsBudget(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, toolLoop, 100)
		ctx := context.Background()
		if _, err := k.run.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "me", Budget: session.Budget{Tokens: tokens(100)}, Period: session.PeriodDay}); err != nil {
			t.Fatal(err)
		}
		hold := k.model.HoldAfter(1)
		first := k.create(t, "loop")
		select {
		case <-hold.Held():
		case <-time.After(20 * time.Second):
			t.Fatal("the first call never reached the model")
		}
		second := k.create(t, "loop")
		v := k.wait(t, second)
		if v.Meta.Status != session.StatusPaused || v.Meta.StatusReason != runner.StopBudget || llmTurns(v) != 0 {
			t.Fatalf("second session: %s (%s) with %d answers, want paused (%s) before any call", v.Meta.Status, v.Meta.StatusReason, llmTurns(v), runner.StopBudget)
		}
		if stop := lastStop(t, k, second); stop.GetBudget() != store.ScopeOwner {
			t.Fatalf("run.stopped = %v, want stopped by the owner's budget", stop)
		}
		hold.Release()
		v = k.wait(t, first)
		if v.Meta.StatusReason != runner.StopBudget {
			t.Fatalf("first session: %s (%s)", v.Meta.Status, v.Meta.StatusReason)
		}
		u, err := k.run.OwnerUsage(ctx, "me")
		if err != nil {
			t.Fatal(err)
		}
		// Calls start at 0, 40 and 80: at most one call (40 tokens) past.
		if u.InPeriod.Tokens != 120 || u.Total.Tokens != 120 || !u.Exceeded {
			t.Fatalf("owner spent %+v in the day, %+v in total (exceeded %v), want 120", u.InPeriod, u.Total, u.Exceeded)
		}
		if n := len(k.model.Requests()); n != 3 {
			t.Fatalf("%d model calls, want 3", n)
		}
	})
}
