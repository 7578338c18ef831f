package runner_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/eventually"
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

// A tree's budget stops its run before the model call that it has no
// room for (its measured input and the least output worth asking for);
// raising the budget and resuming goes on until the new one is spent.
// Each call asks for no more output than it reserved, and each answer
// carries its cost under the price table.
func TestASessionBudgetStopsTheRunAndResumeContinuesOnceRaised(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, toolLoop, 10)
		ctx := context.Background()
		v, err := k.run.CreateSession(ctx, "me", runner.CreateRequest{Agent: "bench", Message: &runner.Message{Text: "loop"}, Budget: &session.Budget{Tokens: tokens(1000)}})
		if err != nil {
			t.Fatal(err)
		}
		id := v.Meta.ID
		v = k.wait(t, id)
		if v.Meta.Status != session.StatusPaused || v.Meta.StatusReason != runner.StopBudget {
			t.Fatalf("status %s (%s), want paused (%s)", v.Meta.Status, v.Meta.StatusReason, runner.StopBudget)
		}
		n := llmTurns(v)
		if n < 2 {
			t.Fatalf("%d model answers, want several", n)
		}
		if stop := lastStop(t, k, id); stop.GetReason() != runner.StopBudget || stop.GetBudget() != store.ScopeSession || stop.GetStatus() != agentsv1.SessionStatus_SESSION_STATUS_PAUSED {
			t.Fatalf("run.stopped = %v, want paused by the session's budget", stop)
		}
		reqs := k.model.Requests()
		if len(reqs) != n {
			t.Fatalf("%d model calls, want %d", len(reqs), n)
		}
		for i, req := range reqs {
			if req.MaxTokens != 10 {
				t.Fatalf("call %d asks for %d output tokens, want the 10 reserved", i, req.MaxTokens)
			}
		}
		// 40 tokens a call.
		if got := v.Meta.TreeSpend.Tokens; got != int64(40*n) || got > 1000 {
			t.Fatalf("tree spent %d tokens in %d calls, want %d and no more than 1,000", got, n, 40*n)
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
		if c := v.Meta.Usage.Cost; c == nil || *c != session.Nanos(n*45000) {
			t.Fatalf("session costs %v, want %d", c, n*45000)
		}

		if _, err := k.run.UpdateSession(ctx, "me", id, runner.Update{Budget: &session.Budget{Tokens: tokens(2000)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := k.run.Resume(ctx, "me", id, nil); err != nil {
			t.Fatal(err)
		}
		v = k.wait(t, id)
		if v.Meta.Status != session.StatusPaused || v.Meta.StatusReason != runner.StopBudget {
			t.Fatalf("after resuming: %s (%s)", v.Meta.Status, v.Meta.StatusReason)
		}
		if m := llmTurns(v); m <= n || v.Meta.TreeSpend.Tokens != int64(40*m) || v.Meta.TreeSpend.Tokens > 2000 {
			t.Fatalf("after resuming: %d model answers and %d tokens spent, want more than %d answers and no more than 2,000", m, v.Meta.TreeSpend.Tokens, n)
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

// Two sessions of one owner never together hold more than its budget:
// while the first session's call holds all of it (its input and the
// output it may produce), the second one's call waits rather than start,
// and both go on until the budget is spent, never past it.
func TestTwoSessionsOfAnOwnerNeverBothStartPastItsBudget(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, toolLoop, 2000)
		ctx := context.Background()
		if _, err := k.run.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "me", Budget: session.Budget{Tokens: tokens(2000)}, Period: session.PeriodDay}); err != nil {
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
		// Time for the second call to ask for admission.
		time.Sleep(200 * time.Millisecond)
		if n := len(k.model.Requests()); n != 1 {
			t.Fatalf("%d model calls while the first held the budget, want 1", n)
		}
		if v, err := k.run.GetSession(ctx, "me", second, false, 0); err != nil || v.Meta.Status != session.StatusRunning {
			t.Fatalf("second session: %s (%s), %v; want running, its call waiting", v.Meta.Status, v.Meta.StatusReason, err)
		}
		hold.Release()
		calls := 0
		for _, id := range []string{first, second} {
			// Which session gets the budget's last calls is a race: the
			// one whose call waits may find it spent.
			v := k.wait(t, id)
			if v.Meta.Status != session.StatusPaused || v.Meta.StatusReason != runner.StopBudget {
				t.Fatalf("session %s: %s (%s), want paused (%s)", id, v.Meta.Status, v.Meta.StatusReason, runner.StopBudget)
			}
			if stop := lastStop(t, k, id); stop.GetBudget() != store.ScopeOwner {
				t.Fatalf("run.stopped = %v, want stopped by the owner's budget", stop)
			}
			calls += llmTurns(v)
		}
		u, err := k.run.OwnerUsage(ctx, "me")
		if err != nil {
			t.Fatal(err)
		}
		// 40 tokens a call.
		if u.InPeriod.Tokens != int64(40*calls) || u.Total.Tokens != u.InPeriod.Tokens || u.InPeriod.Tokens > 2000 {
			t.Fatalf("owner spent %+v in the day, %+v in total in %d calls, want %d and no more than 2,000", u.InPeriod, u.Total, calls, 40*calls)
		}
		if n := len(k.model.Requests()); n != calls || calls < 2 {
			t.Fatalf("%d model calls, %d answers; want one answer a call, and more than the first", n, calls)
		}
	})
}

// createAll creates n sessions of the bench agent at once, each with
// text as its first message.
func createAll(t *testing.T, k *kernel, n int, text string) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := k.run.CreateSession(context.Background(), "me", runner.CreateRequest{Agent: "bench", Message: &runner.Message{Text: text}})
			if err != nil {
				errs <- err
				return
			}
			ids[i] = v.Meta.ID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return ids
}

// Sessions of one owner calling the model at once with long prompts
// spend no more than the owner's budget: each call reserves its measured
// input and the output it may produce, and is capped at that output. The
// measure of the input over-counts what the offline model counts (about
// 4 characters a token), so here the bound holds with no error at all.
func TestConcurrentLongPromptsNeverSpendPastTheOwnersBudget(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		budget  session.Budget
		reserve int64 // the output reserved when the model's is unknown
		prompt  int   // bytes of each session's first message
	}{
		{"100,000 tokens", session.Budget{Tokens: tokens(100_000)}, 0, 40_000},
		{"30,000 tokens, 150 reserved for output", session.Budget{Tokens: tokens(30_000)}, 150, 40_000},
		{"$0.005", session.Budget{Cost: ptrNanos(session.DollarsToNanos(0.005))}, 0, 4_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, d dialect) {
				k := budgetKernel(t, d, fakellm.Rules{Default: &fakellm.Reply{Text: "done"}}, c.reserve)
				ctx := context.Background()
				if _, err := k.run.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "me", Budget: c.budget, Period: session.PeriodTotal}); err != nil {
					t.Fatal(err)
				}
				ids := createAll(t, k, 30, strings.Repeat("a", c.prompt))
				answered := 0
				for _, id := range ids {
					v := k.wait(t, id)
					switch {
					case v.Meta.Status == session.StatusReady && llmTurns(v) == 1:
						answered++
					case v.Meta.Status == session.StatusPaused && v.Meta.StatusReason == runner.StopBudget && llmTurns(v) == 0:
					default:
						t.Fatalf("session %s: %s (%s) with %d answers, want answered or paused by the budget", id, v.Meta.Status, v.Meta.StatusReason, llmTurns(v))
					}
				}
				u, err := k.run.OwnerUsage(ctx, "me")
				if err != nil {
					t.Fatal(err)
				}
				if b := c.budget.Tokens; b != nil && u.Total.Tokens > *b {
					t.Errorf("spent %d tokens of a budget of %d", u.Total.Tokens, *b)
				}
				if b := c.budget.Cost; b != nil && u.Total.Cost > *b {
					t.Errorf("spent %d nanodollars of a budget of %d", u.Total.Cost, *b)
				}
				// Not a budget that refuses everything: the test would
				// prove nothing.
				if answered < 2 {
					t.Errorf("%d sessions answered, want at least 2", answered)
				}
				// Every call was capped at the output it reserved.
				for i, req := range k.model.Requests() {
					if req.MaxTokens <= 0 || req.MaxTokens > 4096 {
						t.Errorf("request %d asks for %d output tokens, want a cap in (0, 4096]", i, req.MaxTokens)
					}
				}
			})
		})
	}
}

func ptrNanos(n session.Nanos) *session.Nanos { return &n }

// A call refused only because other calls in flight hold the budget
// waits for them to settle: while the budget has room for every call's
// real spend, no session stops with budget_exceeded.
func TestNoBudgetExceededWhileTheBudgetHasRoom(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		// Each call reserves about the whole budget (its input and 4,096
		// tokens of output at most) and spends a few dozen tokens.
		k := budgetKernel(t, d, fakellm.Rules{Default: &fakellm.Reply{Text: "done"}}, 4096)
		ctx := context.Background()
		if _, err := k.run.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "me", Budget: session.Budget{Tokens: tokens(4_000)}, Period: session.PeriodTotal}); err != nil {
			t.Fatal(err)
		}
		hold := k.model.HoldAfter(1)
		first := k.create(t, "hello")
		select {
		case <-hold.Held():
		case <-time.After(20 * time.Second):
			t.Fatal("the first call never reached the model")
		}
		ids := createAll(t, k, 20, "hello")
		// Time for the others' admissions to meet the first call's
		// reservation.
		time.Sleep(300 * time.Millisecond)
		hold.Release()
		for _, id := range append(ids, first) {
			v := k.wait(t, id)
			if v.Meta.Status != session.StatusReady || llmTurns(v) != 1 {
				t.Errorf("session %s: %s (%s) with %d answers, want ready with one", id, v.Meta.Status, v.Meta.StatusReason, llmTurns(v))
			}
		}
		u, err := k.run.OwnerUsage(ctx, "me")
		if err != nil {
			t.Fatal(err)
		}
		if u.Total.Tokens > 4_000 {
			t.Errorf("spent %d tokens of 4,000", u.Total.Tokens)
		}
	})
}

// treeRules has the boss call its helper twice in one answer (150 tokens)
// and each helper answer the model once (300 tokens): under a tree budget
// of 450 tokens one helper spends the tree's last 300 tokens and the
// other, refused, pauses, while the boss waits for it.
var treeRules = fakellm.Rules{
	Default: &fakellm.Reply{Text: "done", Usage: fakellm.Usage{PromptTokens: 5, CompletionTokens: 5}},
	Rules: []fakellm.Rule{
		{Match: fakellm.Match{UserContains: "work"}, Reply: fakellm.Reply{Text: "worked", Usage: fakellm.Usage{PromptTokens: 250, CompletionTokens: 50}}},
		{Match: fakellm.Match{UserContains: "go"}, Times: 1, Reply: fakellm.Reply{
			ToolCalls: []fakellm.ToolCall{
				{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt":"work one"}`)},
				{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt":"work two"}`)},
			},
			Usage: fakellm.Usage{PromptTokens: 100, CompletionTokens: 50},
		}},
	},
}

// spentTree starts the boss under a budget of 450 tokens and waits until
// its helpers spent the tree's budget: one helper is paused by it and the
// boss waits for that helper. It returns the boss's id and the paused
// helper's. Each helper call reserves about 300 tokens, so the second
// one waits for the first to settle and then finds the budget spent.
func spentTree(t *testing.T, k *kernel) (root, paused string) {
	t.Helper()
	ctx := context.Background()
	v, err := k.run.CreateSession(ctx, "me", runner.CreateRequest{Agent: "boss", Message: &runner.Message{Text: "go"}, Budget: &session.Budget{Tokens: tokens(450)}})
	if err != nil {
		t.Fatal(err)
	}
	root = v.Meta.ID
	if v = k.wait(t, root); v.Meta.Status != session.StatusWaiting {
		t.Fatalf("boss: %s (%s), want waiting for its paused helper", v.Meta.Status, v.Meta.StatusReason)
	}
	children, err := k.db.Children(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		c := k.wait(t, c.ID)
		if c.Meta.Status == session.StatusPaused && c.Meta.StatusReason == runner.StopBudget {
			paused = c.Meta.ID
		}
	}
	if len(children) != 2 || paused == "" {
		t.Fatalf("%d helpers, none paused by the budget", len(children))
	}
	return root, paused
}

// The root of a tree whose helpers spent its budget reads what the whole
// tree spent, and so does the answer to a change of its budget (issue
// 33: it said what the root itself had seen, 300 tokens short).
func TestARootReadsWhatItsTreeSpent(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, treeRules, 280)
		ctx := context.Background()
		root, _ := spentTree(t, k)
		v, err := k.run.GetSession(ctx, "me", root, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Meta.TreeSpend.Tokens; got != 450 {
			t.Errorf("GET on the root: the tree spent %d tokens, want 450", got)
		}
		m, err := k.run.UpdateSession(ctx, "me", root, runner.Update{Budget: &session.Budget{Tokens: tokens(1000)}})
		if err != nil {
			t.Fatal(err)
		}
		left := int64(-1)
		if l := m.Budget.Left(m.TreeSpend); l != nil && l.Tokens != nil {
			left = *l.Tokens
		}
		if m.TreeSpend.Tokens != 450 || left != 550 {
			t.Errorf("PATCH on the root: %d tokens spent, %d left; want 450 spent and 550 left", m.TreeSpend.Tokens, left)
		}
	})
}

// Resume on the root of a tree its budget stopped resumes the helpers
// the budget paused: the tree goes on to its end (issue 33: each helper
// had to be resumed by hand).
func TestResumeOnTheRootResumesTheHelpersItsBudgetPaused(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, treeRules, 280)
		ctx := context.Background()
		root, paused := spentTree(t, k)
		if _, err := k.run.UpdateSession(ctx, "me", root, runner.Update{Budget: &session.Budget{Tokens: tokens(2000)}}); err != nil {
			t.Fatal(err)
		}
		// Another owner's Resume finds no such session, and resumes none
		// of the tree.
		if _, err := k.run.Resume(ctx, "stranger", root, nil); errs.KindOf(err) != errs.KindNotFound {
			t.Fatalf("another owner's Resume: %v, want not found", err)
		}
		if v := k.wait(t, paused); v.Meta.Status != session.StatusPaused {
			t.Fatalf("after another owner's Resume the helper is %s, want paused", v.Meta.Status)
		}
		if _, err := k.run.Resume(ctx, "me", root, nil); err != nil {
			t.Fatal(err)
		}
		awaitStatus(t, k, paused, session.StatusReady)
		v := awaitStatus(t, k, root, session.StatusReady)
		if got := v.Meta.TreeSpend.Tokens; got != 760 {
			t.Errorf("the tree spent %d tokens, want 760 (150 + 2 × 300 + 10)", got)
		}
	})
}

// awaitStatus waits, for a bounded time, until the session has the
// status and no run, and returns it.
func awaitStatus(t *testing.T, k *kernel, id string, want session.Status) runner.View {
	t.Helper()
	var v runner.View
	if !eventually.Holds(eventually.Patience, func() bool { v = k.wait(t, id); return v.Meta.Status == want }) {
		t.Fatalf("session %s: %s (%s), want %s", id, v.Meta.Status, v.Meta.StatusReason, want)
	}
	return v
}

// A tree budget raised with auto_resume resumes the sessions of the tree
// the budget paused, with no Resume (issue 33).
func TestATreeBudgetRaisedWithAutoResumeResumesTheTree(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, treeRules, 280)
		ctx := context.Background()
		root, paused := spentTree(t, k)
		m, err := k.run.UpdateSession(ctx, "me", root, runner.Update{Budget: &session.Budget{Tokens: tokens(2000), AutoResume: true}})
		if err != nil {
			t.Fatal(err)
		}
		if m.Budget == nil || !m.Budget.AutoResume {
			t.Errorf("the budget is %+v, want it to resume by itself", m.Budget)
		}
		awaitStatus(t, k, paused, session.StatusReady)
		v := awaitStatus(t, k, root, session.StatusReady)
		if got := v.Meta.TreeSpend.Tokens; got != 760 {
			t.Errorf("the tree spent %d tokens, want 760", got)
		}
	})
}

// A session its owner's budget paused resumes by itself when the owner's
// period rolls over, and when the owner's budget is raised, if the
// owner's budget or the session's own sets auto_resume (issue 33).
func TestSessionsAnOwnersBudgetPausedResumeWhenItAsks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name               string
		byOwner, bySession bool
	}{
		{"the owner's budget asks", true, false},
		{"the session's budget asks", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, d dialect) {
				// The clock stands a few seconds before a UTC midnight until
				// the second session is paused, however long that takes on
				// a loaded machine, then runs from just past midnight.
				midnight := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
				var clock sync.Mutex
				var rolled time.Time // when the day ended, on the real clock
				now := func() time.Time {
					clock.Lock()
					defer clock.Unlock()
					if rolled.IsZero() {
						return midnight.Add(-3 * time.Second)
					}
					return midnight.Add(time.Since(rolled))
				}
				endTheDay := func() {
					clock.Lock()
					defer clock.Unlock()
					rolled = time.Now()
				}
				answer := fakellm.Rules{Default: &fakellm.Reply{Text: "done", Usage: fakellm.Usage{PromptTokens: 450, CompletionTokens: 50}}}
				k := newKernelWith(t, d, answer, kernelOptions{budgets: runner.Budgets{ReserveTokens: 10}, now: now})
				ctx := context.Background()
				owner := session.OwnerBudget{Owner: "me", Budget: session.Budget{Tokens: tokens(500), AutoResume: c.byOwner}, Period: session.PeriodDay}
				if _, err := k.run.SetOwnerBudget(ctx, owner); err != nil {
					t.Fatal(err)
				}
				create := func() string {
					v, err := k.run.CreateSession(ctx, "me", runner.CreateRequest{Agent: "bench", Message: &runner.Message{Text: "hello"},
						Budget: &session.Budget{Tokens: tokens(1_000_000), AutoResume: c.bySession}})
					if err != nil {
						t.Fatal(err)
					}
					return v.Meta.ID
				}
				// The first session spends the day's budget; the second finds
				// it spent.
				awaitStatus(t, k, create(), session.StatusReady)
				second := create()
				if v := awaitStatus(t, k, second, session.StatusPaused); v.Meta.StatusReason != runner.StopBudget {
					t.Fatalf("second session paused for %q, want %s", v.Meta.StatusReason, runner.StopBudget)
				}
				// The day ends: the second session answers on the new day's
				// budget.
				endTheDay()
				if v := awaitStatus(t, k, second, session.StatusReady); llmTurns(v) != 1 {
					t.Fatalf("second session has %d answers, want 1", llmTurns(v))
				}
				// A third session finds the new day's budget spent, and
				// answers once it is raised.
				third := create()
				awaitStatus(t, k, third, session.StatusPaused)
				owner.Budget.Tokens = tokens(2000)
				if _, err := k.run.SetOwnerBudget(ctx, owner); err != nil {
					t.Fatal(err)
				}
				if v := awaitStatus(t, k, third, session.StatusReady); llmTurns(v) != 1 {
					t.Fatalf("third session has %d answers, want 1", llmTurns(v))
				}
			})
		})
	}
}

// An agent's own budget is the budget of a root session started with it
// when the client sets none: the run stops at it. A budget the client
// sets wins, an empty one meaning no limit.
func TestAnAgentsBudgetIsARootSessionsWhenTheClientSetsNone(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := budgetKernel(t, d, toolLoop, 10)
		ctx := context.Background()
		v, err := k.run.CreateSession(ctx, "me", runner.CreateRequest{Agent: "capped", Message: &runner.Message{Text: "loop"}})
		if err != nil {
			t.Fatal(err)
		}
		if b := v.Meta.Budget; b == nil || b.Tokens == nil || *b.Tokens != 200 {
			t.Fatalf("budget %+v, want the agent's 200 tokens", b)
		}
		v = k.wait(t, v.Meta.ID)
		if v.Meta.Status != session.StatusPaused || v.Meta.StatusReason != runner.StopBudget || v.Meta.TreeSpend.Tokens > 200 {
			t.Fatalf("status %s (%s) after %d tokens, want paused (%s) within 200", v.Meta.Status, v.Meta.StatusReason, v.Meta.TreeSpend.Tokens, runner.StopBudget)
		}

		for _, c := range []struct {
			name string
			set  *session.Budget
			want *int64
		}{
			{"its own", &session.Budget{Tokens: tokens(5000)}, tokens(5000)},
			{"none", &session.Budget{}, nil},
		} {
			v, err := k.run.CreateSession(ctx, "me", runner.CreateRequest{Agent: "capped", Budget: c.set})
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Meta.Budget; (c.want == nil) != !got.Limited() || (c.want != nil && *got.Tokens != *c.want) {
				t.Fatalf("a client that sets %s: budget %+v", c.name, got)
			}
		}
	})
}
