package fakellm_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

// conversation builds a request body from messages.
func conversation(messages ...map[string]any) body {
	list := make([]any, len(messages))
	for i, m := range messages {
		list[i] = m
	}
	return body{"model": "test-model", "messages": list}
}

func withTools(b body, names ...string) body {
	var tools []any
	for _, n := range names {
		tools = append(tools, tool(n))
	}
	b["tools"] = tools
	return b
}

func withModel(b body, model string) body {
	b["model"] = model
	return b
}

// matched reports whether the only rule of srv answered the request.
func matched(t *testing.T, match fakellm.Match, b body) bool {
	t.Helper()
	srv := start(t, fakellm.Rules{
		Rules:   []fakellm.Rule{{Match: match, Reply: fakellm.Reply{Text: "matched"}}},
		Default: &fakellm.Reply{Text: "default"},
	})
	return completeText(t, srv, b) == "matched"
}

func TestMatchConditions(t *testing.T) {
	t.Parallel()
	toolTurn := conversation(
		msg("system", "You are terse."),
		msg("user", "look it up"),
		assistantCalls("c1"),
		toolResult("c1", "result: 42 items"),
	)
	userAfterTool := conversation(
		msg("user", "look it up"),
		assistantCalls("c1"),
		toolResult("c1", "result: 42 items"),
		msg("assistant", "There are 42."),
		msg("user", "thanks"),
	)
	partsUser := conversation(map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "first part"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:,"}},
		map[string]any{"type": "text", "text": "second part"},
	}})

	tests := []struct {
		name  string
		match fakellm.Match
		body  body
		want  bool
	}{
		{"empty match matches anything", fakellm.Match{}, userBody("hello"), true},

		{"user_contains hit", fakellm.Match{UserContains: "ell"}, userBody("hello"), true},
		{"user_contains miss", fakellm.Match{UserContains: "bye"}, userBody("hello"), false},
		{"user_contains is case-sensitive", fakellm.Match{UserContains: "Hello"}, userBody("hello"), false},
		{"user_contains looks at the last user message only", fakellm.Match{UserContains: "look"}, userAfterTool, false},
		{"user_contains sees text parts", fakellm.Match{UserContains: "first part\nsecond part"}, partsUser, true},
		{"user_regexp hit", fakellm.Match{UserRegexp: `^h.l+o$`}, userBody("hello"), true},
		{"user_regexp miss", fakellm.Match{UserRegexp: `^ello`}, userBody("hello"), false},
		{"user_regexp case-insensitive flag", fakellm.Match{UserRegexp: `(?i)HELLO`}, userBody("hello"), true},

		{"tool_result_contains hit", fakellm.Match{ToolResultContains: "42 items"}, toolTurn, true},
		{"tool_result_contains miss", fakellm.Match{ToolResultContains: "43"}, toolTurn, false},
		{"tool_result_contains without a tool message", fakellm.Match{ToolResultContains: "42"}, userBody("42"), false},
		{"tool_result_regexp hit", fakellm.Match{ToolResultRegexp: `result: \d+`}, toolTurn, true},
		{"tool_result_regexp miss", fakellm.Match{ToolResultRegexp: `^\d+$`}, toolTurn, false},
		{"tool_result_regexp without a tool message", fakellm.Match{ToolResultRegexp: `.*`}, userBody("x"), false},
		{"tool result is found when not last", fakellm.Match{ToolResultContains: "42 items"}, userAfterTool, true},

		{"last_is_tool_result true hit", fakellm.Match{LastIsToolResult: new(true)}, toolTurn, true},
		{"last_is_tool_result true miss", fakellm.Match{LastIsToolResult: new(true)}, userAfterTool, false},
		{"last_is_tool_result false hit", fakellm.Match{LastIsToolResult: new(false)}, userAfterTool, true},
		{"last_is_tool_result false miss", fakellm.Match{LastIsToolResult: new(false)}, toolTurn, false},

		{"tools_offered hit", fakellm.Match{ToolsOffered: []string{"read_file"}}, withTools(userBody("x"), "list_dir", "read_file"), true},
		{"tools_offered needs every name", fakellm.Match{ToolsOffered: []string{"read_file", "write_file"}}, withTools(userBody("x"), "read_file"), false},
		{"tools_offered without tools", fakellm.Match{ToolsOffered: []string{"read_file"}}, userBody("x"), false},

		{"model hit", fakellm.Match{Model: "big-model"}, withModel(userBody("x"), "big-model"), true},
		{"model miss", fakellm.Match{Model: "big-model"}, withModel(userBody("x"), "big-model-2"), false},

		{"system_contains hit", fakellm.Match{SystemContains: "terse"}, toolTurn, true},
		{"system_contains miss", fakellm.Match{SystemContains: "verbose"}, toolTurn, false},
		{"system_contains sees developer messages", fakellm.Match{SystemContains: "Be kind"},
			conversation(msg("developer", "Be kind."), msg("user", "x")), true},
		{"system_contains without a system prompt", fakellm.Match{SystemContains: "terse"}, userBody("terse"), false},

		{"assistant_messages 0 hit", fakellm.Match{AssistantMessages: new(0)}, userBody("x"), true},
		{"assistant_messages 0 miss", fakellm.Match{AssistantMessages: new(0)}, toolTurn, false},
		{"assistant_messages 2 hit", fakellm.Match{AssistantMessages: new(2)}, userAfterTool, true},

		{"request_index 0 on a fresh server", fakellm.Match{RequestIndex: new(0)}, userBody("x"), true},
		{"request_index 1 not on the first request", fakellm.Match{RequestIndex: new(1)}, userBody("x"), false},

		{"all conditions hold", fakellm.Match{
			UserContains: "look", ToolResultContains: "42", LastIsToolResult: new(true),
			SystemContains: "terse", AssistantMessages: new(1), Model: "test-model",
		}, toolTurn, true},
		{"one condition fails", fakellm.Match{
			UserContains: "look", ToolResultContains: "42", LastIsToolResult: new(true),
			SystemContains: "terse", AssistantMessages: new(1), Model: "other-model",
		}, toolTurn, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := matched(t, tt.match, tt.body); got != tt.want {
				t.Errorf("matched = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestFirstMatchingRuleWins(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Name: "specific", Match: fakellm.Match{UserContains: "weather in Paris"}, Reply: fakellm.Reply{Text: "sunny in Paris"}},
		{Name: "general", Match: fakellm.Match{UserContains: "weather"}, Reply: fakellm.Reply{Text: "some weather"}},
		{Name: "shadowed", Match: fakellm.Match{UserContains: "weather in Paris"}, Reply: fakellm.Reply{Text: "never"}},
	}})
	if got := completeText(t, srv, userBody("weather in Paris?")); got != "sunny in Paris" {
		t.Errorf("text = %q, want the first matching rule's", got)
	}
	if got := completeText(t, srv, userBody("weather in Rome?")); got != "some weather" {
		t.Errorf("text = %q, want the general rule's", got)
	}
	got := srv.Requests()
	if got[0].Rule != 0 || got[0].RuleName != "specific" || got[1].Rule != 1 || got[1].RuleName != "general" {
		t.Errorf("recorded rules = (%d %q) (%d %q), want (0 specific) (1 general)", got[0].Rule, got[0].RuleName, got[1].Rule, got[1].RuleName)
	}
}

func TestRequestIndexCountsEveryRequest(t *testing.T) {
	t.Parallel()
	var rules []fakellm.Rule
	for i := range 3 {
		rules = append(rules, fakellm.Rule{Match: fakellm.Match{RequestIndex: new(i)}, Reply: fakellm.Reply{Text: fmt.Sprint("answer ", i)}})
	}
	srv := start(t, fakellm.Rules{Rules: rules, Default: &fakellm.Reply{Text: "later"}})
	// Different conversations: only the arrival order counts.
	for i, want := range []string{"answer 0", "answer 1", "answer 2", "later"} {
		if got := completeText(t, srv, userBody(fmt.Sprint("conversation ", i))); got != want {
			t.Errorf("request %d: text = %q, want %q", i, got, want)
		}
	}
	srv.Reset()
	if got := completeText(t, srv, userBody("again")); got != "answer 0" {
		t.Errorf("after Reset: text = %q, want answer 0", got)
	}
}

// TestMultiStepConversation scripts a two-step agent run by counting the
// assistant messages, the way agent tests keep runs deterministic.
func TestMultiStepConversation(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: new(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "lookup"}}}},
		{Match: fakellm.Match{AssistantMessages: new(1), LastIsToolResult: new(true)}, Reply: fakellm.Reply{Text: "Found: {{last_tool_result}}"}},
	}})
	// A request from another conversation in between changes nothing.
	complete(t, srv, userBody("unrelated"))

	first := complete(t, srv, userBody("find it"))
	call := first.Choices[0].Message.ToolCalls
	if len(call) != 1 {
		t.Fatalf("step 1: got %d tool calls, want 1", len(call))
	}
	second := conversation(msg("user", "find it"), assistantCalls(call[0].ID), toolResult(call[0].ID, "the key"))
	if got := completeText(t, srv, second); got != "Found: the key" {
		t.Errorf("step 2: text = %q", got)
	}
}

func TestTimes(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{
		Rules: []fakellm.Rule{
			{Name: "twice", Times: 2, Match: fakellm.Match{UserContains: "x"}, Reply: fakellm.Reply{Text: "limited"}},
			{Name: "after", Match: fakellm.Match{UserContains: "x"}, Reply: fakellm.Reply{Text: "unlimited"}},
		},
	})
	// A request the limited rule does not match uses none of its times.
	completeText(t, srv, userBody("y"))
	for i, want := range []string{"limited", "limited", "unlimited", "unlimited"} {
		if got := completeText(t, srv, userBody("x")); got != want {
			t.Errorf("request %d: text = %q, want %q", i, got, want)
		}
	}
	srv.Reset()
	if got := completeText(t, srv, userBody("x")); got != "limited" {
		t.Errorf("after Reset: text = %q, want the limited rule again", got)
	}
}

func TestTimesUnderConcurrency(t *testing.T) {
	t.Parallel()
	const requests, times = 24, 5
	srv := start(t, fakellm.Rules{
		Rules:   []fakellm.Rule{{Times: times, Reply: fakellm.Reply{Text: "limited"}}},
		Default: &fakellm.Reply{Text: "default"},
	})
	texts := make([]string, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			// Not post: t.Fatal must not be called from another goroutine.
			resp, err := http.Post(srv.URL()+"/chat/completions", "application/json",
				strings.NewReader(`{"model": "m", "messages": [{"role": "user", "content": "x"}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var c clientCompletion
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || len(c.Choices) != 1 || c.Choices[0].Message.Content == nil {
				t.Errorf("request %d: status %d, decoding: %v", i, resp.StatusCode, err)
				return
			}
			texts[i] = *c.Choices[0].Message.Content
		})
	}
	wg.Wait()
	limited := 0
	for _, text := range texts {
		if text == "limited" {
			limited++
		}
	}
	if limited != times {
		t.Errorf("the limited rule answered %d times, want %d", limited, times)
	}
	seen := map[int]bool{}
	for _, r := range srv.Requests() {
		seen[r.Index] = true
	}
	for i := range requests {
		if !seen[i] {
			t.Errorf("no request recorded with index %d", i)
		}
	}
}
