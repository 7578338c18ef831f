package fakellm_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agents-os/agents/tools/fakellm"
)

func TestNonStreamingText(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{Text: "Hello there."}}}})
	c := complete(t, srv, userBody("hi"))
	if c.Object != "chat.completion" || c.Model != "test-model" || c.ID == "" {
		t.Errorf("envelope = %q %q %q, want chat.completion, the request's model and an id", c.Object, c.Model, c.ID)
	}
	m := c.Choices[0].Message
	if m.Role != "assistant" || m.Content == nil || *m.Content != "Hello there." || len(m.ToolCalls) != 0 {
		t.Errorf("message = %+v, want the assistant saying the rule's text", m)
	}
	if c.Choices[0].FinishReason != "stop" {
		t.Errorf("finish_reason = %q, want stop", c.Choices[0].FinishReason)
	}
	if c.Usage == nil {
		t.Fatal("usage missing from a non-streaming answer")
	}
	if c.Usage.PromptTokens < 1 || c.Usage.CompletionTokens < 1 ||
		c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
		t.Errorf("usage = %+v, want positive estimates adding up", *c.Usage)
	}
}

func TestStreamingTextIsChunked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		text      string
		chunkSize int
		wantParts []string
	}{
		{"default size", "Hello, streaming world!", 0, []string{"Hello, s", "treaming", " world!"}},
		{"size 5", "Hello, streaming world!", 5, []string{"Hello", ", str", "eamin", "g wor", "ld!"}},
		{"multibyte text is cut between characters", "héllo wörld 🌍!", 3, []string{"hél", "lo ", "wör", "ld ", "🌍!"}},
		{"empty text has no content chunk", "", 4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{Text: tt.text, ChunkSize: tt.chunkSize}}}})
			s := streamChat(t, srv, userBody("hi"))
			if !s.done || s.text != tt.text || s.finishReason != "stop" {
				t.Fatalf("done=%t text=%q finish=%q, want done, %q, stop", s.done, s.text, s.finishReason, tt.text)
			}
			var parts []string
			for _, c := range s.chunks {
				if d := c.Choices[0].Delta; d.Content != nil && *d.Content != "" {
					if !utf8.ValidString(*d.Content) {
						t.Errorf("chunk %q is not valid UTF-8", *d.Content)
					}
					parts = append(parts, *d.Content)
				}
			}
			if !reflect.DeepEqual(parts, tt.wantParts) {
				t.Errorf("content chunks = %q, want %q", parts, tt.wantParts)
			}
			first := s.chunks[0]
			if first.Object != "chat.completion.chunk" || first.Model != "test-model" || first.Choices[0].Delta.Role != "assistant" {
				t.Errorf("first chunk = %+v, want a chat.completion.chunk announcing the assistant role", first)
			}
			if s.usage != nil {
				t.Errorf("usage sent without stream_options.include_usage: %+v", *s.usage)
			}
		})
	}
}

func TestToolCalls(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{
		ChunkSize: 4,
		ToolCalls: []fakellm.ToolCall{
			{Name: "read_file", Arguments: json.RawMessage(`{ "path": "notes/today.md",
				"lines": [1, 20] }`)},
			{Name: "list_dir"},
		},
	}}}}
	wantArgs := []string{`{"path":"notes/today.md","lines":[1,20]}`, `{}`}

	t.Run("streaming", func(t *testing.T) {
		t.Parallel()
		s := streamChat(t, start(t, rules), userBody("read my notes"))
		if s.finishReason != "tool_calls" || s.text != "" {
			t.Errorf("finish=%q text=%q, want tool_calls and no text", s.finishReason, s.text)
		}
		if len(s.toolCalls) != 2 {
			t.Fatalf("reassembled %d tool calls, want 2: %+v", len(s.toolCalls), s.toolCalls)
		}
		for i, call := range s.toolCalls {
			wantID := []string{"call_1", "call_2"}[i]
			wantName := []string{"read_file", "list_dir"}[i]
			if call.ID != wantID || call.Type != "function" || call.Function.Name != wantName || call.Function.Arguments != wantArgs[i] {
				t.Errorf("tool call %d = %+v, want %s %s(%s)", i, call, wantID, wantName, wantArgs[i])
			}
		}
		// How the deltas are cut: the first delta of a call carries its id,
		// type and name with empty arguments, the later ones only argument
		// fragments.
		deltasPerCall := map[int][]clientToolCall{}
		for _, c := range s.chunks {
			for _, d := range c.Choices[0].Delta.ToolCalls {
				deltasPerCall[d.Index] = append(deltasPerCall[d.Index], d)
			}
		}
		for i, deltas := range deltasPerCall {
			head := deltas[0]
			if head.ID == "" || head.Function.Name == "" || head.Type != "function" || head.Function.Arguments != "" {
				t.Errorf("call %d: first delta = %+v, want id, type and name with empty arguments", i, head)
			}
			for _, d := range deltas[1:] {
				if d.ID != "" || d.Function.Name != "" || d.Function.Arguments == "" {
					t.Errorf("call %d: later delta = %+v, want an argument fragment only", i, d)
				}
			}
		}
		if n := len(deltasPerCall[0]) - 1; n < 2 {
			t.Errorf("the first call's arguments came in %d fragments, want several", n)
		}
	})

	t.Run("non-streaming", func(t *testing.T) {
		t.Parallel()
		c := complete(t, start(t, rules), userBody("read my notes"))
		m := c.Choices[0].Message
		if m.Content != nil {
			t.Errorf("content = %q, want null when the assistant only calls tools", *m.Content)
		}
		if c.Choices[0].FinishReason != "tool_calls" || len(m.ToolCalls) != 2 {
			t.Fatalf("finish=%q calls=%+v, want tool_calls and 2 calls", c.Choices[0].FinishReason, m.ToolCalls)
		}
		if m.ToolCalls[0].ID != "call_1" || m.ToolCalls[0].Type != "function" ||
			m.ToolCalls[0].Function.Name != "read_file" || m.ToolCalls[0].Function.Arguments != wantArgs[0] {
			t.Errorf("first call = %+v", m.ToolCalls[0])
		}
	})
}

func TestToolCallIDs(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{UserContains: "fixed"}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{ID: "call_mine", Name: "a"}, {Name: "b"},
		}}},
		{Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "a"}, {Name: "b"}}}},
	}})
	ids := func(text string) []string {
		var out []string
		for _, call := range complete(t, srv, userBody(text)).Choices[0].Message.ToolCalls {
			out = append(out, call.ID)
		}
		return out
	}
	steps := []struct {
		text string
		want []string
	}{
		{"go", []string{"call_1", "call_2"}},
		{"go", []string{"call_3", "call_4"}},
		{"fixed", []string{"call_mine", "call_5"}},
	}
	for _, step := range steps {
		if got := ids(step.text); !reflect.DeepEqual(got, step.want) {
			t.Errorf("%q: ids = %q, want %q", step.text, got, step.want)
		}
	}
	srv.Reset()
	if got := ids("go"); !reflect.DeepEqual(got, []string{"call_1", "call_2"}) {
		t.Errorf("after Reset: ids = %q, want numbering from call_1 again", got)
	}
}

func TestReasoning(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{
		Reasoning: "The user greets me; greet back.", Text: "Hello!", ChunkSize: 6,
	}}}}

	t.Run("streaming", func(t *testing.T) {
		t.Parallel()
		s := streamChat(t, start(t, rules), userBody("hi"))
		if s.reasoning != "The user greets me; greet back." || s.text != "Hello!" {
			t.Fatalf("reasoning=%q text=%q", s.reasoning, s.text)
		}
		// Reasoning comes first, as with real reasoning models.
		sawText := false
		for _, c := range s.chunks {
			d := c.Choices[0].Delta
			if d.Content != nil && *d.Content != "" {
				sawText = true
			}
			if d.ReasoningContent != "" && sawText {
				t.Fatal("reasoning_content streamed after content")
			}
		}
	})

	t.Run("non-streaming", func(t *testing.T) {
		t.Parallel()
		c := complete(t, start(t, rules), userBody("hi"))
		if got := c.Choices[0].Message.ReasoningContent; got != "The user greets me; greet back." {
			t.Errorf("reasoning_content = %q", got)
		}
		if c.Usage.CompletionTokensDetails.ReasoningTokens != 8 {
			t.Errorf("reasoning_tokens = %d, want 8 (31 characters at 4 per token)", c.Usage.CompletionTokensDetails.ReasoningTokens)
		}
	})
}

func TestUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		override fakellm.Usage
		want     clientUsage
	}{
		{
			name: "estimated",
			// Prompt "abcdefgh" (8 characters) is 2 tokens; the 12-character
			// text is 3.
			want: usage(2, 3, 5, 0, 0),
		},
		{
			name:     "overridden field by field, total follows",
			override: fakellm.Usage{PromptTokens: 1000, CachedTokens: 800, ReasoningTokens: 7},
			want:     usage(1000, 3, 1003, 800, 7),
		},
		{
			name:     "total overridden",
			override: fakellm.Usage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 99},
			want:     usage(10, 20, 99, 0, 0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{Text: "twelve chars", Usage: tt.override}}}})

			c := complete(t, srv, userBody("abcdefgh"))
			if *c.Usage != tt.want {
				t.Errorf("non-streaming usage = %+v, want %+v", *c.Usage, tt.want)
			}

			b := userBody("abcdefgh")
			b["stream_options"] = map[string]any{"include_usage": true}
			s := streamChat(t, srv, b)
			if s.usage == nil {
				t.Fatal("no usage in the stream despite include_usage")
			}
			if *s.usage != tt.want {
				t.Errorf("streamed usage = %+v, want %+v", *s.usage, tt.want)
			}
			last := s.chunks[len(s.chunks)-1]
			if last.Usage == nil || len(last.Choices) != 0 {
				t.Errorf("last chunk = %+v, want usage with no choices", last)
			}
			for _, c := range s.chunks[:len(s.chunks)-1] {
				if c.Usage != nil {
					t.Error("usage sent before the last chunk")
				}
			}
		})
	}
}

func usage(prompt, completion, total, cached, reasoning int) clientUsage {
	var u clientUsage
	u.PromptTokens, u.CompletionTokens, u.TotalTokens = prompt, completion, total
	u.PromptTokensDetails.CachedTokens = cached
	u.CompletionTokensDetails.ReasoningTokens = reasoning
	return u
}

func TestFinishReasonOverride(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{Text: "cut sh", FinishReason: "length"}}}})
	if s := streamChat(t, srv, userBody("hi")); s.finishReason != "length" {
		t.Errorf("streamed finish_reason = %q, want length", s.finishReason)
	}
	if c := complete(t, srv, userBody("hi")); c.Choices[0].FinishReason != "length" {
		t.Errorf("finish_reason = %q, want length", c.Choices[0].FinishReason)
	}
}

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{
			Match: fakellm.Match{UserContains: "echo"},
			Reply: fakellm.Reply{Text: "[{{model}} #{{request_index}}] you said: {{last_user}}; tool said: {{last_tool_result}}; keep {{ .Name }}"},
		},
		{
			Match: fakellm.Match{UserContains: "call"},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
				{Name: "say", Arguments: json.RawMessage(`{"text": "{{last_user}}", "n": "{{request_index}}"}`)},
				{Name: "raw", RawArguments: `{"text": "{{last_user}}"`},
			}},
		},
	}})

	b := userBody("echo this")
	b["messages"] = append(b["messages"].([]any), assistantCalls("c1"), toolResult("c1", "42 degrees"))
	if got, want := completeText(t, srv, b), "[test-model #0] you said: echo this; tool said: 42 degrees; keep {{ .Name }}"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}

	tricky := `call "quoted" \ back\slash` + "\nnew line"
	calls := complete(t, srv, userBody(tricky)).Choices[0].Message.ToolCalls
	var args struct{ Text, N string }
	if err := json.Unmarshal([]byte(calls[0].Function.Arguments), &args); err != nil {
		t.Fatalf("arguments with a filled placeholder are not JSON: %v: %s", err, calls[0].Function.Arguments)
	}
	if args.Text != tricky || args.N != "1" {
		t.Errorf("arguments = %+v, want the user text verbatim and request index 1", args)
	}
	if want := `{"text": "` + tricky + `"`; calls[1].Function.Arguments != want {
		t.Errorf("raw arguments = %q, want %q (verbatim, unescaped)", calls[1].Function.Arguments, want)
	}
}

func TestDefaultReply(t *testing.T) {
	t.Parallel()

	t.Run("built in", func(t *testing.T) {
		t.Parallel()
		srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{{Match: fakellm.Match{UserContains: "never"}, Reply: fakellm.Reply{Text: "no"}}}})
		got := completeText(t, srv, userBody("what is 2+2?"))
		if !strings.Contains(got, "no rule matched") || !strings.Contains(got, `"what is 2+2?"`) {
			t.Errorf("default text = %q, want it to say no rule matched and quote the user", got)
		}
		if r := srv.Requests()[0]; r.Rule != -1 || r.RuleName != "" {
			t.Errorf("recorded rule = %d %q, want -1 for the default reply", r.Rule, r.RuleName)
		}
	})

	t.Run("configured", func(t *testing.T) {
		t.Parallel()
		srv := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "default: {{last_user}}"}})
		if got := completeText(t, srv, userBody("ping")); got != "default: ping" {
			t.Errorf("text = %q, want %q", got, "default: ping")
		}
	})
}
