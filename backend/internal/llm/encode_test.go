package llm

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// conversation is a history exercising every kind of message: a system
// prompt, a user turn with an image, an assistant turn with thinking and two
// tool calls (one id from OpenAI, one from Mistral), their results, and a
// tool-calling assistant turn with no recorded thinking.
func conversation() Request {
	temp := 0.2
	return Request{
		Model: "m",
		Messages: []Message{
			SystemMessage("You are terse."),
			UserMessage("What is in this picture?", ImageData("image/png", []byte{0x89, 'P', 'N', 'G'})),
			{Role: RoleAssistant, Thinking: "I should look.", ToolCalls: []ToolCall{
				{ID: "call_abc123", Name: "read_file", Arguments: `{"path":"a.txt"}`},
				{ID: "D681PevKs", Name: "list_dir"},
			}},
			ToolResultMessage("call_abc123", "contents"),
			ToolResultMessage("D681PevKs", "a.txt"),
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_zz", Name: "list_dir", Arguments: "{}"}}},
			ToolResultMessage("call_zz", "a.txt"),
		},
		Tools: []ToolSpec{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "list_dir", Description: "List the directory."},
		},
		SessionID:   "sess-1",
		Temperature: &temp,
		MaxTokens:   1000,
	}
}

func TestRequestJSONPerFlavor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		flavor Flavor
		tune   func(*Request)
		want   map[string]any // path → value
		absent []string
	}{
		{
			flavor: FlavorOpenAI,
			want: map[string]any{
				"stream_options.include_usage": true,
				"prompt_cache_key":             "sess-1",
				"max_completion_tokens":        1000.0,
			},
			absent: []string{"max_tokens", "tool_choice", "parallel_tool_calls", "thinking", "messages.2.reasoning_content"},
		},
		{
			flavor: FlavorMistral,
			want: map[string]any{
				"max_tokens":          1000.0,
				"tool_choice":         "auto",
				"parallel_tool_calls": true,
				"prompt_cache_key":    "sess-1",
				// Mistral's own id goes back untouched.
				"messages.2.tool_calls.1.id": "D681PevKs",
				"messages.4.tool_call_id":    "D681PevKs",
			},
			absent: []string{"stream_options", "max_completion_tokens", "thinking", "messages.2.reasoning_content"},
		},
		{
			flavor: FlavorKimi,
			want: map[string]any{
				"stream_options.include_usage": true,
				"prompt_cache_key":             "sess-1",
				"max_tokens":                   1000.0,
				"messages.2.reasoning_content": "I should look.",
				"messages.5.reasoning_content": kimiThinkingPlaceholder,
				"messages.2.tool_calls.0.id":   "call_abc123",
				"messages.3.tool_call_id":      "call_abc123",
				"messages.2.tool_calls.1.id":   "D681PevKs",
				"messages.2.tool_calls.1.type": "function",
				"messages.5.tool_calls.0.id":   "call_zz",
				"messages.6.tool_call_id":      "call_zz",
			},
			absent: []string{"max_completion_tokens", "tool_choice", "thinking", "messages.2.tool_calls.0.index"},
		},
		{
			flavor: FlavorClaude,
			tune:   func(r *Request) { r.MaxTokens = 0 },
			want: map[string]any{
				"thinking.type":                "enabled",
				"thinking.budget_tokens":       10000.0,
				"max_tokens":                   16000.0,
				"stream_options.include_usage": true,
			},
			absent: []string{"prompt_cache_key", "max_completion_tokens", "tool_choice", "messages.2.reasoning_content"},
		},
		{
			// A cap under the thinking budget (a spend budget's) gives
			// thinking half of it: Claude refuses thinking of max_tokens
			// or more.
			flavor: FlavorClaude,
			tune:   func(r *Request) { r.MaxTokens = 4096 },
			want:   map[string]any{"thinking.budget_tokens": 2048.0, "max_tokens": 4096.0},
		},
		{
			// Claude refuses thinking of fewer than 1,024 tokens.
			flavor: FlavorClaude,
			tune:   func(r *Request) { r.MaxTokens = 2000 },
			want:   map[string]any{"max_tokens": 2000.0},
			absent: []string{"thinking"},
		},
	}
	for _, tt := range tests {
		t.Run(string(tt.flavor), func(t *testing.T) {
			t.Parallel()
			fake := newFakeProvider(t, reply{done: true, events: []string{
				`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`,
			}})
			client, _ := testClient(t, fake.url(), tt.flavor)
			req := conversation()
			if tt.tune != nil {
				tt.tune(&req)
			}
			if _, err := client.Stream(context.Background(), req, nil); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			body := fake.request(0).body
			checkCommonShape(t, body)
			for path, want := range tt.want {
				got, ok := lookup(body, path)
				if !ok {
					t.Errorf("%s missing", path)
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
			for _, path := range tt.absent {
				if got, ok := lookup(body, path); ok {
					t.Errorf("%s = %#v, want it absent", path, got)
				}
			}
		})
	}
}

// checkCommonShape checks what every flavor writes the same way.
func checkCommonShape(t *testing.T, body map[string]any) {
	t.Helper()
	want := map[string]any{
		"model":       "m",
		"stream":      true,
		"temperature": 0.2,

		"messages.0.role":    "system",
		"messages.0.content": "You are terse.",

		"messages.1.role":                      "user",
		"messages.1.content.0.type":            "text",
		"messages.1.content.0.text":            "What is in this picture?",
		"messages.1.content.1.type":            "image_url",
		"messages.1.content.1.image_url.url":   "data:image/png;base64,iVBORw==",
		"messages.2.role":                      "assistant",
		"messages.2.content":                   nil,
		"messages.2.tool_calls.0.type":         "function",
		"messages.2.tool_calls.0.function":     map[string]any{"name": "read_file", "arguments": `{"path":"a.txt"}`},
		"messages.2.tool_calls.1.function":     map[string]any{"name": "list_dir", "arguments": "{}"},
		"messages.3.role":                      "tool",
		"messages.3.content":                   "contents",
		"messages.4.content":                   "a.txt",
		"tools.0.type":                         "function",
		"tools.0.function.name":                "read_file",
		"tools.0.function.description":         "Read a file.",
		"tools.0.function.parameters.type":     "object",
		"tools.0.function.parameters.required": []any{"path"},
		"tools.1.function.parameters":          map[string]any{"type": "object", "properties": map[string]any{}},
	}
	for path, w := range want {
		got, ok := lookup(body, path)
		if !ok {
			t.Errorf("%s missing", path)
			continue
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s = %#v, want %#v", path, got, w)
		}
	}
	if n := len(body["messages"].([]any)); n != 7 {
		t.Errorf("%d messages sent, want 7", n)
	}
	// Each tool result must name a call of the assistant turn before it.
	for _, pair := range [][2]string{
		{"messages.2.tool_calls.0.id", "messages.3.tool_call_id"},
		{"messages.2.tool_calls.1.id", "messages.4.tool_call_id"},
		{"messages.5.tool_calls.0.id", "messages.6.tool_call_id"},
	} {
		callID, _ := lookup(body, pair[0])
		resultID, _ := lookup(body, pair[1])
		if callID == nil || callID != resultID {
			t.Errorf("%s = %v but %s = %v", pair[0], callID, pair[1], resultID)
		}
	}
}

func TestMistralRewritesForeignToolCallIDs(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{done: true, events: []string{`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}})
	client, _ := testClient(t, fake.url(), FlavorMistral)
	if _, err := client.Stream(context.Background(), conversation(), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	body := fake.request(0).body
	valid := regexp.MustCompile(`^[A-Za-z0-9]{9}$`)
	for _, path := range []string{"messages.2.tool_calls.0.id", "messages.3.tool_call_id", "messages.5.tool_calls.0.id", "messages.6.tool_call_id"} {
		id, _ := lookup(body, path)
		s, _ := id.(string)
		if !valid.MatchString(s) {
			t.Errorf("%s = %q, Mistral wants 9 alphanumerics", path, s)
		}
	}
	first, _ := lookup(body, "messages.2.tool_calls.0.id")
	other, _ := lookup(body, "messages.5.tool_calls.0.id")
	if first == other {
		t.Errorf("two different calls were given the same id %v", first)
	}
}

func TestRequestHeaders(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t,
		reply{done: true, events: []string{`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}},
		reply{done: true, events: []string{`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`}},
	)
	client, _ := testClient(t, fake.url(), FlavorOpenAI)
	if _, err := client.Stream(context.Background(), basicRequest(), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	h := fake.request(0).header
	if got := h.Get("Authorization"); got != "Bearer sk-test-secret" {
		t.Errorf("Authorization = %q", got)
	}
	if got := h.Get("Accept"); got != "text/event-stream" {
		t.Errorf("Accept = %q", got)
	}
	if got := h.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}

	keyless, _ := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) { c.APIKey = "" })
	if _, err := keyless.Stream(context.Background(), basicRequest(), nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if got, ok := fake.request(1).header["Authorization"]; ok {
		t.Errorf("a client without key sent Authorization %q", got)
	}
}

func TestEncodeRejectsBadRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"no model", Request{Messages: []Message{UserMessage("hi")}}, "no model"},
		{"no messages", Request{Model: "m"}, "no messages"},
		{"tool result without call id", Request{Model: "m", Messages: []Message{{Role: RoleTool, Text: "x"}}}, "tool call id"},
		{"unknown role", Request{Model: "m", Messages: []Message{{Role: "developer", Text: "x"}}}, "unknown role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := encodeRequest(dialectFor(FlavorOpenAI), tt.req, true)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestAssistantTextIsKeptBesideToolCalls(t *testing.T) {
	t.Parallel()
	req := Request{Model: "m", Messages: []Message{
		AssistantMessage(Response{Text: "Let me check.", ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}}),
		{Role: RoleAssistant, Text: ""},
	}}
	raw, err := encodeRequest(dialectFor(FlavorOpenAI), req, false)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw.bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if got, _ := lookup(body, "messages.0.content"); got != "Let me check." {
		t.Errorf("assistant text with tool calls = %#v", got)
	}
	// A plain assistant turn always has content, even empty.
	if got, ok := lookup(body, "messages.1.content"); !ok || got != "" {
		t.Errorf("empty assistant turn content = %#v (present %v), want \"\"", got, ok)
	}
}
