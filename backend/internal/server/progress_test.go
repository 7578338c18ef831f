package server_test

import (
	"slices"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// Issue 8, item 13: a bash tool's stderr lines reach clients as
// tool.progressed events of its call, in order, rate-limited, the last
// line always among them, all before the call's result.
func TestABashToolsStderrLinesAreReportedAsProgress(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash_progress"}}}},
		{Reply: fakellm.Reply{Text: "{{last_tool_result}}"}},
	}})
	feed := e.openSSE("/v1/events")
	id := e.create("boss", "go").GetMeta().GetId()
	call := until(t, feed, kind(id, "tool.started")).GetToolStarted().GetCall().GetId()

	var lines []string
	for {
		ev := until(t, feed, func(ev *agentsv1.Event) bool {
			return ev.GetSessionId() == id && (ev.GetKind() == "tool.progressed" || ev.GetKind() == "tool.completed")
		})
		if ev.GetKind() == "tool.completed" {
			break
		}
		if got := ev.GetToolProgressed().GetCallId(); got != call {
			t.Errorf("tool.progressed for call %q, want %q", got, call)
		}
		lines = append(lines, ev.GetToolProgressed().GetMessage())
	}
	steps := []string{"step 1 of 3", "step 2 of 3", "step 3 of 3"}
	if len(lines) == 0 || lines[len(lines)-1] != steps[2] {
		t.Fatalf("progress = %q, want the tool's lines ending with its last", lines)
	}
	// Each line at most once, in the order the tool wrote them.
	at := -1
	for _, l := range lines {
		i := slices.Index(steps, l)
		if i <= at {
			t.Fatalf("progress = %q, want a subsequence of %q", lines, steps)
		}
		at = i
	}
	if s := e.wait(id); strings.TrimSpace(lastTurn(s).GetLlm().GetText()) != "all steps done" {
		t.Errorf("answer = %q, want the tool's stdout alone as its result", lastTurn(s).GetLlm().GetText())
	}
}
