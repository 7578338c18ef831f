package disclosure

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

func llm(calls ...session.ToolCall) session.Turn {
	return session.Turn{LLM: &session.LLMTurn{ToolCalls: calls}}
}

func results(rs ...session.ToolResult) session.Turn {
	return session.Turn{User: &session.UserTurn{ToolResults: rs}}
}

func meta(id, name, group string) session.ToolCall {
	return session.ToolCall{ID: id, Name: name, Arguments: `{"toolgroup": "` + group + `"}`}
}

func ok(id string) session.ToolResult {
	return session.ToolResult{CallID: id, Status: session.ResultOK}
}

func keys(m map[string]bool) string { return strings.Join(slices.Sorted(maps.Keys(m)), ",") }

// The active groups are the history's successful meta calls, in order,
// over the groups active from the start; a failed call, one without a
// result yet, and a call of another tool change nothing. agents-exe's
// older skill_enable_/skill_disable_ calls count as the meta calls they
// stand for.
func TestActiveFoldsTheHistory(t *testing.T) {
	t.Parallel()
	failed := session.ToolResult{CallID: "c3", Status: session.ResultError}
	for _, tc := range []struct {
		name    string
		turns   []session.Turn
		initial []string
		want    string
	}{
		{"none", nil, nil, ""},
		{"initial", nil, []string{"skill:a"}, "skill:a"},
		{"activated", []session.Turn{llm(meta("c1", ActivateName, "w")), results(ok("c1"))}, nil, "w"},
		{"no result yet", []session.Turn{llm(meta("c1", ActivateName, "w"))}, nil, ""},
		{"failed", []session.Turn{llm(meta("c3", ActivateName, "w")), results(failed)}, nil, ""},
		{"deactivated", []session.Turn{
			llm(meta("c1", ActivateName, "w"), meta("c2", ActivateName, "x")), results(ok("c1"), ok("c2")),
			{Compaction: &session.Compaction{Reason: session.CompactThreshold}},
			llm(meta("c1", DeactivateName, "w")), results(ok("c1")),
		}, nil, "x"},
		{"initial deactivated", []session.Turn{llm(meta("c1", DeactivateName, "skill:a")), results(ok("c1"))}, []string{"skill:a"}, ""},
		{"legacy", []session.Turn{llm(session.ToolCall{ID: "c1", Name: "skill_enable_pdf"}), results(ok("c1"))}, nil, "skill:pdf"},
		{"unanswered then new turn", []session.Turn{llm(meta("c1", ActivateName, "w")), llm(), results(ok("c1"))}, nil, ""},
		{"other tool", []session.Turn{llm(session.ToolCall{ID: "c1", Name: "bash_x", Arguments: `{"toolgroup":"w"}`}), results(ok("c1"))}, nil, ""},
	} {
		if got := keys(Active(tc.turns, tc.initial)); got != tc.want {
			t.Errorf("%s: active %q, want %q", tc.name, got, tc.want)
		}
	}
}

// The meta tools offered follow the state: activate while a group is
// inactive, deactivate while one is active, discover always; an unknown
// group is an error the model reads.
func TestMetaToolsFollowTheState(t *testing.T) {
	t.Parallel()
	groups := []Group{{Name: "w"}, {Name: "skill:r", Skill: "r", Description: "Reviews code."}}
	names := func(active map[string]bool) string {
		var out []string
		for _, tl := range MetaTools(groups, active) {
			out = append(out, tl.Spec().Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(nil); got != ActivateName+","+DiscoverName {
		t.Errorf("none active: %s", got)
	}
	if got := names(map[string]bool{"w": true, "skill:r": true}); got != DeactivateName+","+DiscoverName {
		t.Errorf("all active: %s", got)
	}
	activate := MetaTools(groups, nil)[0]
	if d := activate.Spec().Description; !strings.Contains(d, "skill:r (Reviews code.)") {
		t.Errorf("activate's description %q lacks the skill's", d)
	}
	args, err := tool.DecodeArgs(activate.Spec(), `{"toolgroup": "nope"}`)
	if err != nil {
		t.Fatal(err)
	}
	if res := activate.Execute(context.Background(), tool.Call{Args: args}); res.Status != session.ResultError || !strings.Contains(res.Text, "unknown toolgroup") {
		t.Errorf("activating an unknown group: %+v", res)
	}
}
