package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) *timestamppb.Timestamp {
	return timestamppb.New(t0.Add(time.Duration(ms) * time.Millisecond))
}

func user(i, ms int, text string, results ...*agentsv1.ToolResult) *agentsv1.Turn {
	return &agentsv1.Turn{Index: int32(i), CreateTime: at(ms), Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{Text: text, ToolResults: results}}}
}

func answer(i, ms, took int, in, out int64, cost *float64, calls ...*agentsv1.ToolCall) *agentsv1.Turn {
	return &agentsv1.Turn{Index: int32(i), CreateTime: at(ms), Kind: &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{
		Model: "small", Duration: durationpb.New(time.Duration(took) * time.Millisecond), ToolCalls: calls,
		Usage: &agentsv1.Usage{PromptTokens: in, CompletionTokens: out, CostUsd: cost},
	}}}
}

func result(id string, took int, child string) *agentsv1.ToolResult {
	return &agentsv1.ToolResult{CallId: id, Status: agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK, Duration: durationpb.New(time.Duration(took) * time.Millisecond), ChildSessionId: child}
}

func TestTheTurnsOfARunMakeItsWaterfall(t *testing.T) {
	t.Parallel()
	turns := []*agentsv1.Turn{
		user(0, 0, "what time is it?"),
		answer(1, 1000, 1000, 100, 20, proto.Float64(0.01),
			&agentsv1.ToolCall{Id: "c1", Name: "bash_clock"},
			&agentsv1.ToolCall{Id: "h1", Name: "prompt_agent_researcher", Kind: agentsv1.ToolKind_TOOL_KIND_HELPER}),
		user(2, 3000, "", result("c1", 500, ""), result("h1", 2000, "4bcfb63d-f043-44c8-a01e-f07f1d609349")),
		answer(3, 4000, 1000, 200, 30, proto.Float64(0.02)),
		user(4, 10000, "and tomorrow?"),
	}
	runs := Of(turns, true)
	got := strings.Join(Render(runs, 80, t0.Add(12*time.Second), time.UTC), "\n")
	want := strings.Join([]string{
		"run 1 · 12:00:00 · 4.0s · 350 tok · $0.03",
		"  small              █████████                          1.0s · 120 tok · $0.01",
		"    bash_clock       ········█████                      500ms",
		"    prompt_agent_re… ········██████████████████         2.0s · ↳4bcfb63d",
		"  small              ·························█████████ 1.0s · 230 tok · $0.02",
		"run 2 · 12:00:10 · 2.0s…",
		"  model call         ██████████████████████████████████ 2.0s…",
	}, "\n")
	if got != want {
		t.Errorf("rendered\n%s\nwant\n%s", got, want)
	}
}

// A helper's call names its session; a call without its result yet runs,
// and so does its run; every line fits the width.
func TestACallWithoutItsResultRuns(t *testing.T) {
	t.Parallel()
	turns := []*agentsv1.Turn{
		user(0, 0, "count"),
		answer(1, 500, 400, 10, 2, nil, &agentsv1.ToolCall{Id: "c1", Name: "bash_slow"}),
	}
	runs := Of(turns, true)
	if len(runs) != 1 || !runs[0].Running() || !runs[0].Children[0].Children[0].Running() {
		t.Fatalf("runs %+v: want one running, its tool call running", runs)
	}
	for _, width := range []int{40, 80, 120} {
		for _, l := range Render(runs, width, t0.Add(2*time.Second), time.UTC) {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("width %d: line %q is %d wide", width, l, w)
			}
		}
	}
	done := append(turns, user(2, 900, "", result("c1", 300, "")), answer(3, 1200, 250, 5, 1, nil))
	runs = Of(done, false)
	if runs[0].Running() || !runs[0].End.Equal(t0.Add(1200*time.Millisecond)) {
		t.Fatalf("run ends %v, want at the last answer", runs[0].End)
	}
	if got := Render(nil, 80, t0, time.UTC); len(got) != 1 || !strings.HasPrefix(got[0], "no runs yet") {
		t.Errorf("no runs: %q", got)
	}
}

// A helper call holds the steps of its helper's runs, and its tokens and
// cost; a helper that calls a helper nests again; a loop in the tree is
// nested once; a helper still running is named by childOf; an unknown
// helper nests nothing.
func TestHelpersRunsNestUnderTheirCalls(t *testing.T) {
	t.Parallel()
	helperCall := func(id string) *agentsv1.ToolCall {
		return &agentsv1.ToolCall{Id: id, Name: "prompt_agent_" + id, Kind: agentsv1.ToolKind_TOOL_KIND_HELPER}
	}
	parent := Of([]*agentsv1.Turn{
		user(0, 0, "go"),
		answer(1, 1000, 1000, 100, 10, proto.Float64(0.01), helperCall("a"), helperCall("b")),
		user(2, 5000, "", result("a", 3000, "child-a")),
	}, true)
	sessions := map[string][]*Bar{
		"child-a": Of([]*agentsv1.Turn{
			user(0, 1000, "question"),
			answer(1, 2000, 1000, 300, 30, proto.Float64(0.03), helperCall("c")),
			user(2, 3000, "", result("c", 800, "child-c")),
		}, false),
		"child-c": Of([]*agentsv1.Turn{
			user(0, 2100, "deeper"),
			answer(1, 2900, 700, 50, 5, nil, helperCall("loop")),
			user(2, 2950, "", result("loop", 10, "child-a")),
		}, false),
		"child-b": Of([]*agentsv1.Turn{user(0, 1100, "other"), answer(1, 1500, 300, 7, 3, nil)}, true),
	}
	Nest(parent, func(callID string) string {
		if callID == "b" {
			return "child-b"
		}
		return ""
	}, func(id string) []*Bar { return sessions[id] })

	step := parent[0].Children[0]
	a, b := step.Children[0], step.Children[1]
	if a.Child != "child-a" || len(a.Children) != 1 || a.In != 350 || a.Out != 35 || a.Cost == nil || *a.Cost != 0.03 {
		t.Fatalf("helper a: child %q, %d steps, %d+%d tokens, cost %v; want child-a's step with its tokens (and child-c's) and cost", a.Child, len(a.Children), a.In, a.Out, a.Cost)
	}
	c := a.Children[0].Children[0]
	if c.Child != "child-c" || len(c.Children) != 1 {
		t.Fatalf("helper c: child %q, %d steps; want child-c's step", c.Child, len(c.Children))
	}
	if loop := c.Children[0].Children[0]; loop.Child != "child-a" || len(loop.Children) != 0 {
		t.Errorf("the loop back to child-a nested %d steps; want none", len(loop.Children))
	}
	// child-b runs: its answer, then the model answering again.
	if b.Child != "child-b" || len(b.Children) != 2 || b.Children[0].Label != "small" || !b.Children[1].Running() {
		t.Errorf("running helper b: child %q, %d steps; want child-b's step and its live model call", b.Child, len(b.Children))
	}
	if r := parent[0]; r.In != 100+350+7 || r.Out != 10+35+3 {
		t.Errorf("the run counts %d+%d tokens; want its own and its helpers'", r.In, r.Out)
	}

	lone := Of([]*agentsv1.Turn{user(0, 0, "go"), answer(1, 500, 500, 1, 1, nil, helperCall("x")), user(2, 900, "", result("x", 300, "gone"))}, false)
	Nest(lone, nil, func(string) []*Bar { return nil })
	if h := lone[0].Children[0].Children[0]; len(h.Children) != 0 || h.In != 0 {
		t.Errorf("an unknown helper nested %d steps, %d tokens", len(h.Children), h.In)
	}
}

func compaction(i, ms int, reason string, in, out int64) *agentsv1.Turn {
	return &agentsv1.Turn{Index: int32(i), CreateTime: at(ms), Kind: &agentsv1.Turn_Compaction{Compaction: &agentsv1.Compaction{
		Reason: reason, Usage: &agentsv1.Usage{PromptTokens: in, CompletionTokens: out},
	}}}
}

// A compaction asked for while the session is idle is a run of its own,
// as the server runs it: it does not stretch the run before it to the
// time it was asked. One made before a model call belongs to that call's
// run.
func TestACompactionAfterTheAnswerIsARunOfItsOwn(t *testing.T) {
	t.Parallel()
	runs := Of([]*agentsv1.Turn{
		user(0, 0, "a note"),
		answer(1, 1000, 1000, 100, 10, nil),
		compaction(2, 30000, "manual", 80, 20),
		user(3, 40000, "another note"),
		compaction(4, 40100, "threshold", 70, 10),
		answer(5, 41000, 800, 60, 5, nil),
	}, false)
	if len(runs) != 3 {
		t.Fatalf("%d runs, want 3: the message's, the compaction's, the next message's", len(runs))
	}
	if got := runs[0].End.Sub(runs[0].Start); got != time.Second {
		t.Errorf("the first run took %v, want 1s: the compaction after it is not its own", got)
	}
	if k := runs[1].Children; len(k) != 1 || k[0].Kind != Summary || runs[1].In != 80 {
		t.Errorf("the second run holds %+v, want the summary alone", k)
	}
	if k := runs[2].Children; len(k) != 2 || k[0].Kind != Summary || k[1].Kind != Model {
		t.Errorf("the third run holds %+v, want its summary, then its model call", k)
	}
}

// A line's facts show whole when the width has room for them: the bars
// give way, not the helper's tokens and cost.
func TestLongFactsShowWholeOnAWideScreen(t *testing.T) {
	t.Parallel()
	runs := Of([]*agentsv1.Turn{
		user(0, 0, "go"),
		answer(1, 1000, 1000, 100, 10, proto.Float64(0.01), &agentsv1.ToolCall{Id: "h1", Name: "prompt_agent_researcher", Kind: agentsv1.ToolKind_TOOL_KIND_HELPER}),
		user(2, 3000, "", result("h1", 2000, "4bcfb63d-f043-44c8-a01e-f07f1d609349")),
	}, false)
	child := Of([]*agentsv1.Turn{user(0, 1100, "question"), answer(1, 2900, 1700, 1200, 300, proto.Float64(0.0123))}, false)
	Nest(runs, nil, func(string) []*Bar { return child })
	lines := Render(runs, 120, t0.Add(4*time.Second), time.UTC)
	want := "2.0s · ↳4bcfb63d · 1.5k tok · $0.01"
	found := false
	for _, l := range lines {
		found = found || strings.HasSuffix(l, want)
		if w := ansi.StringWidth(l); w > 120 {
			t.Errorf("line %q is %d wide", l, w)
		}
	}
	if !found {
		t.Errorf("no line ends in %q:\n%s", want, strings.Join(lines, "\n"))
	}
}
