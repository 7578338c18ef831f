package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/llm"
)

// The stand-in measure counts every message's and tool's bytes, at a
// third of a token each, and 4 tokens a message: never below what a
// tokenizer of about 4 characters a token counts.
func TestRequestTokensCountsMessagesAndTools(t *testing.T) {
	t.Parallel()
	req := llm.Request{
		Messages: []llm.Message{
			llm.SystemMessage("abc"),                   // 1 + 4
			llm.UserMessage(strings.Repeat("x", 3000)), // 1,000 + 4
			// 16 bytes with the call: 6 + 4.
			{Role: llm.RoleAssistant, Text: "ab", Thinking: "c",
				ToolCalls: []llm.ToolCall{{ID: "id1", Name: "run", Arguments: `{"a":1}`}}},
			llm.ToolResultMessage("id1", "ok"), // 5 bytes: 2 + 4
		},
		Tools: []llm.ToolSpec{{Name: "run", Description: "Runs.", Parameters: json.RawMessage(`{"type":"object"}`)}}, // 25 bytes: 9
	}
	if got, want := requestTokens(req), int64(5+1004+10+6+9); got != want {
		t.Fatalf("requestTokens = %d, want %d", got, want)
	}
	if got := requestTokens(llm.Request{}); got != 0 {
		t.Fatalf("an empty request measures %d tokens", got)
	}
}
