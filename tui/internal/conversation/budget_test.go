package conversation

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

func TestHeaderSpendLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		budget *agentsv1.BudgetState
		usage  *agentsv1.Usage
		want   string // the third line; "" for none
		status string // in the first line
	}{
		{name: "a server without budgets", budget: nil},
		{name: "no limits, the session spent it all", budget: &agentsv1.BudgetState{Spent: &agentsv1.Spend{Tokens: 13752}}},
		// A fork's turns, copied from its source, count in its usage but
		// were spent by the source's tree.
		{name: "no limits, a fork that has not run", budget: &agentsv1.BudgetState{Spent: &agentsv1.Spend{}}},
		{
			name:   "no limits, helpers spent too",
			budget: &agentsv1.BudgetState{Budget: &agentsv1.Budget{}, Spent: &agentsv1.Spend{Tokens: 30000, CostUsd: 0.0042}},
			want:   "tree spent 30.0k tokens · $0.0042",
		},
		{
			name: "a token limit, unpriced",
			budget: &agentsv1.BudgetState{Budget: &agentsv1.Budget{Tokens: proto.Int64(100000)}, Spent: &agentsv1.Spend{Tokens: 13752},
				Left: &agentsv1.Budget{Tokens: proto.Int64(86248)}},
			want: "budget 13.8k of 100.0k tokens (86.2k left)",
		},
		{
			name: "a cost limit",
			budget: &agentsv1.BudgetState{Budget: &agentsv1.Budget{CostUsd: proto.Float64(2)}, Spent: &agentsv1.Spend{Tokens: 13752, CostUsd: 0.5},
				Left: &agentsv1.Budget{CostUsd: proto.Float64(1.5)}},
			usage: &agentsv1.Usage{PromptTokens: 12840, CompletionTokens: 912, CostUsd: proto.Float64(0.5)},
			want:  "budget 13.8k tokens · $0.50 of $2.00 ($1.50 left)",
		},
		{
			name: "spent",
			budget: &agentsv1.BudgetState{Budget: &agentsv1.Budget{Tokens: proto.Int64(10000)}, Spent: &agentsv1.Spend{Tokens: 13752},
				Left: &agentsv1.Budget{Tokens: proto.Int64(0)}, Exceeded: true},
			want:   "budget 13.8k of 10.0k tokens (0 left) · exceeded",
			status: "■ stopped: session budget spent",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, ready, fewTurns()...)
			r.fake.meta.Budget = tc.budget
			if tc.usage != nil {
				r.fake.meta.Usage = tc.usage
			}
			if tc.status != "" {
				r.fake.meta.StatusReason = reasonBudget
			}
			r.open()
			lines := strings.Split(ansi.Strip(r.s.renderHeader(100)), "\n")
			switch {
			case tc.want == "" && len(lines) != 2:
				t.Errorf("header = %q, want two lines", lines)
			case tc.want != "" && (len(lines) != 3 || strings.TrimSpace(lines[2]) != tc.want):
				t.Errorf("header = %q, want a third line %q", lines, tc.want)
			}
			if tc.status != "" && !strings.Contains(lines[0], tc.status) {
				t.Errorf("first line %q lacks %q", lines[0], tc.status)
			}
		})
	}
}

// A run its budget stopped is resumed as a paused one is, once the
// budget is raised; an idle session has no run to resume.
func TestResumeARunTheBudgetStopped(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...).open()
	r.keys("ctrl+p")
	if r.fake.resumes != 0 {
		t.Fatalf("resumed an idle session")
	}
	r.event(ev(11, &agentsv1.RunStopped{Status: ready, Reason: reasonBudget, Budget: "owner"}))
	if h := ansi.Strip(r.s.renderHeader(100)); !strings.Contains(h, "■ stopped: owner's budget spent") {
		t.Errorf("header after the owner's budget stopped the run:\n%s", h)
	}
	r.keys("ctrl+p")
	if r.fake.resumes != 1 {
		t.Errorf("resumes = %d, want 1", r.fake.resumes)
	}
}

// A helper's session spends its root's budget: the root's header follows
// the spend its helpers' session.updated events report, and only theirs.
func TestHeaderFollowsTheHelpersSpend(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...)
	r.fake.meta.RootId = sid
	r.fake.meta.Budget = &agentsv1.BudgetState{Budget: &agentsv1.Budget{Tokens: proto.Int64(20000)}, Spent: &agentsv1.Spend{Tokens: 13752},
		Left: &agentsv1.Budget{Tokens: proto.Int64(6248)}}
	r.open()
	helper := func(seq uint64, root string, tokens int64) {
		e := ev(seq, &agentsv1.SessionUpdated{Meta: &agentsv1.SessionMeta{Id: "helper", ParentId: sid, RootId: root,
			Budget: &agentsv1.BudgetState{Spent: &agentsv1.Spend{Tokens: tokens}}}})
		e.SessionId = "helper"
		r.event(e)
	}
	third := func() string {
		lines := strings.Split(ansi.Strip(r.s.renderHeader(100)), "\n")
		return strings.TrimSpace(lines[len(lines)-1])
	}
	helper(11, "another-tree", 19000)
	if got := third(); got != "budget 13.8k of 20.0k tokens (6.2k left)" {
		t.Errorf("after another tree's event: %q", got)
	}
	helper(12, sid, 21000)
	if got, want := third(), "budget 21.0k of 20.0k tokens (0 left) · exceeded"; got != want {
		t.Errorf("after the helper's event: %q, want %q", got, want)
	}
	helper(13, sid, 15000) // seen before the last: no news
	if got := third(); !strings.HasPrefix(got, "budget 21.0k") {
		t.Errorf("an older spend went back: %q", got)
	}
}

// The root's own event may report the spend as the root last saw it,
// before its helper spent more: the header keeps the higher spend, with
// the limits the event brings.
func TestHeaderSpendNeverGoesBack(t *testing.T) {
	t.Parallel()
	r := newRig(t, running, fewTurns()...)
	r.fake.meta.RootId = sid
	r.fake.meta.Budget = &agentsv1.BudgetState{Budget: &agentsv1.Budget{Tokens: proto.Int64(20000)}, Spent: &agentsv1.Spend{Tokens: 18000},
		Left: &agentsv1.Budget{Tokens: proto.Int64(2000)}}
	r.open()
	own := proto.CloneOf(r.fake.meta)
	own.Budget = &agentsv1.BudgetState{Budget: &agentsv1.Budget{Tokens: proto.Int64(50000)}, Spent: &agentsv1.Spend{Tokens: 13752},
		Left: &agentsv1.Budget{Tokens: proto.Int64(36248)}}
	r.event(ev(11, &agentsv1.SessionUpdated{Meta: own}))
	lines := strings.Split(ansi.Strip(r.s.renderHeader(100)), "\n")
	if got, want := strings.TrimSpace(lines[2]), "budget 18.0k of 50.0k tokens (32.0k left)"; got != want {
		t.Errorf("after the root's lagging event: %q, want %q", got, want)
	}
}

// A session of a stored agent names the version its latest step ran.
func TestHeaderNamesTheAgentVersion(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...)
	r.fake.meta.AgentVersion = 3
	r.open()
	if line := strings.Split(ansi.Strip(r.s.renderHeader(100)), "\n")[0]; !strings.HasPrefix(line, "coder v3  Fix the flaky test") {
		t.Errorf("first line %q", line)
	}
}

// Issue 33: a session pinned to a version of its stored agent says so.
func TestHeaderNamesThePinnedAgentVersion(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()...)
	r.fake.meta.AgentVersion, r.fake.meta.PinnedAgentVersion = 2, 2
	r.open()
	if line := strings.Split(ansi.Strip(r.s.renderHeader(100)), "\n")[0]; !strings.HasPrefix(line, "coder v2 (pinned)  Fix the flaky test") {
		t.Errorf("first line %q", line)
	}
}

// A fork cut at a question holds it unanswered, ready: the pause/resume
// key runs it.
func TestResumeRunsAForkThatEndsWithAQuestion(t *testing.T) {
	t.Parallel()
	r := newRig(t, ready, fewTurns()[:3]...).open()
	r.keys("ctrl+p")
	if r.fake.resumes != 1 {
		t.Errorf("resumes = %d, want 1", r.fake.resumes)
	}
}

// A long failure keeps the agent and the title in the first line: the
// status gives way.
func TestHeaderKeepsTheTitleBesideALongFailure(t *testing.T) {
	t.Parallel()
	r := newRig(t, failed, fewTurns()...)
	r.fake.meta.StatusReason = `llm: send request: Post "http://127.0.0.1:7499/v1/chat/completions": dial tcp 127.0.0.1:7499: connect: connection refused`
	r.open()
	first := strings.Split(ansi.Strip(r.s.renderHeader(100)), "\n")[0]
	for _, want := range []string{"coder", "Fix the flaky test", "✗ failed"} {
		if !strings.Contains(first, want) {
			t.Errorf("first line %q lacks %q", first, want)
		}
	}
}
