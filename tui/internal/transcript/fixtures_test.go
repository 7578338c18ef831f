package transcript

import (
	"fmt"
	"strings"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Builders of turns and events for the tests: short to read, every field
// a rendering looks at.

func newView() *View { return New(theme.New(true).Transcript) }

func userTurn(index int, text string) *agentsv1.Turn {
	return &agentsv1.Turn{Index: int32(index), Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{Text: text}}}
}

func llmTurn(index int, text string, calls ...*agentsv1.ToolCall) *agentsv1.Turn {
	return &agentsv1.Turn{Index: int32(index), Kind: &agentsv1.Turn_Llm{Llm: &agentsv1.LlmTurn{
		Text: text, ToolCalls: calls, Model: "test-model", FinishReason: "stop",
	}}}
}

func resultsTurn(index int, results ...*agentsv1.ToolResult) *agentsv1.Turn {
	return &agentsv1.Turn{Index: int32(index), Kind: &agentsv1.Turn_User{User: &agentsv1.UserTurn{ToolResults: results}}}
}

func compactionTurn(index int, reason, instruction string) *agentsv1.Turn {
	cost := 0.0012
	return &agentsv1.Turn{Index: int32(index), Kind: &agentsv1.Turn_Compaction{Compaction: &agentsv1.Compaction{
		Reason: reason, SummaryEnd: int32(index), SummarizedTurns: int32(index), PruneEnd: int32(index), PrunedResults: 1,
		Summary:      "The user asked to **go**; the agent did it.\n\n- nothing is left to do",
		TokensBefore: 38204, TokensAfter: 2310, Model: "summary-model", Instruction: instruction,
		Usage: &agentsv1.Usage{PromptTokens: 38000, CompletionTokens: 310, CostUsd: &cost},
	}}}
}

func toolCall(id, name, args string) *agentsv1.ToolCall {
	return &agentsv1.ToolCall{Id: id, Name: name, Arguments: args, Kind: agentsv1.ToolKind_TOOL_KIND_BASH, Mode: agentsv1.CallMode_CALL_MODE_ATTACHED}
}

func helperCall(id, agent, prompt string) *agentsv1.ToolCall {
	return &agentsv1.ToolCall{Id: id, Name: "prompt_agent_" + agent, Arguments: fmt.Sprintf(`{"prompt":%q}`, prompt), Kind: agentsv1.ToolKind_TOOL_KIND_HELPER, Mode: agentsv1.CallMode_CALL_MODE_ATTACHED}
}

func result(id, name, text string, st agentsv1.ToolResultStatus, d time.Duration) *agentsv1.ToolResult {
	return &agentsv1.ToolResult{CallId: id, Name: name, Text: text, Status: st, Duration: durationpb.New(d)}
}

const (
	ok       = agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK
	failed   = agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR
	running  = agentsv1.SessionStatus_SESSION_STATUS_RUNNING
	ready    = agentsv1.SessionStatus_SESSION_STATUS_READY
	childID  = "7f3c2a9e-1b2c-4d5e-8f90-123456789abc"
	parentID = "0d1e2f3a-4b5c-6d7e-8f90-abcdefabcdef"
)

func session(status agentsv1.SessionStatus, reason string, turns ...*agentsv1.Turn) *agentsv1.Session {
	first := 0
	if len(turns) > 0 {
		first = int(turns[0].GetIndex())
	}
	return &agentsv1.Session{
		Meta: &agentsv1.SessionMeta{
			Id: parentID, Agent: "coder", Status: status, StatusReason: reason,
			TurnCount: int32(first + len(turns)),
		},
		Turns:          turns,
		FirstTurnIndex: int32(first),
	}
}

func event(body any) *agentsv1.Event {
	ev := &agentsv1.Event{SessionId: parentID}
	switch b := body.(type) {
	case *agentsv1.TextDelta:
		ev.Kind, ev.Body = "text.delta", &agentsv1.Event_TextDelta{TextDelta: b}
	case *agentsv1.ThinkingDelta:
		ev.Kind, ev.Body = "thinking.delta", &agentsv1.Event_ThinkingDelta{ThinkingDelta: b}
	case *agentsv1.ToolCallDelta:
		ev.Kind, ev.Body = "tool_call.delta", &agentsv1.Event_ToolCallDelta{ToolCallDelta: b}
	case *agentsv1.SessionUpdated:
		ev.Kind, ev.Body = "session.updated", &agentsv1.Event_SessionUpdated{SessionUpdated: b}
	case *agentsv1.SessionCompacted:
		ev.Kind, ev.Body = "session.compacted", &agentsv1.Event_SessionCompacted{SessionCompacted: b}
	case *agentsv1.ToolStarted:
		ev.Kind, ev.Body = "tool.started", &agentsv1.Event_ToolStarted{ToolStarted: b}
	case *agentsv1.ToolProgressed:
		ev.Kind, ev.Body = "tool.progressed", &agentsv1.Event_ToolProgressed{ToolProgressed: b}
	case *agentsv1.ToolCompleted:
		ev.Kind, ev.Body = "tool.completed", &agentsv1.Event_ToolCompleted{ToolCompleted: b}
	case *agentsv1.SubcallStarted:
		ev.Kind, ev.Body = "subcall.started", &agentsv1.Event_SubcallStarted{SubcallStarted: b}
	case *agentsv1.SubcallFailed:
		ev.Kind, ev.Body = "subcall.failed", &agentsv1.Event_SubcallFailed{SubcallFailed: b}
	case *agentsv1.CallsDeferred:
		ev.Kind, ev.Body = "calls.deferred", &agentsv1.Event_CallsDeferred{CallsDeferred: b}
	case *agentsv1.RunStopped:
		ev.Kind, ev.Body = "run.stopped", &agentsv1.Event_RunStopped{RunStopped: b}
	case *agentsv1.SessionFailed:
		ev.Kind, ev.Body = "session.failed", &agentsv1.Event_SessionFailed{SessionFailed: b}
	default:
		panic(fmt.Sprintf("no event for %T", body))
	}
	return ev
}

func headTurn(t *agentsv1.Turn, status agentsv1.SessionStatus) *agentsv1.Event {
	return event(&agentsv1.SessionUpdated{
		Meta:     &agentsv1.SessionMeta{Id: parentID, Agent: "coder", Status: status, TurnCount: t.GetIndex() + 1},
		HeadTurn: t,
	})
}

// deltas cuts text into pieces of n bytes, as a model streams it.
func deltas(text string, n int) []string {
	var out []string
	for len(text) > n {
		out = append(out, text[:n])
		text = text[n:]
	}
	return append(out, text)
}

const answerMarkdown = "Here is the plan:\n\n" +
	"## Steps\n\n" +
	"1. Read the file.\n" +
	"2. Change the *greeting*.\n\n" +
	"The new code:\n\n" +
	"```go\n" +
	"func main() {\n" +
	"\tfmt.Println(\"hello, world\")\n" +
	"}\n" +
	"```\n\n" +
	"Run it with `go run .` and you are done.\n"

// longAnswer is an answer of many paragraphs and fences, for the
// streaming tests and benchmarks.
func longAnswer(paragraphs int) string {
	var b strings.Builder
	for i := range paragraphs {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "Paragraph %d explains a step of the work in a sentence long enough to wrap at the usual widths of a terminal.\n\n", i)
		case 1:
			fmt.Fprintf(&b, "- item %d\n- another item with **bold** text\n\n", i)
		case 2:
			fmt.Fprintf(&b, "```go\nfunc step%d() int {\n\treturn %d\n}\n```\n\n", i, i)
		case 3:
			fmt.Fprintf(&b, "### Part %d\n\nText with `code` and a [link](https://example.com/%d).\n\n", i, i)
		}
	}
	return b.String()
}
