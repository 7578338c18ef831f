package llm

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestStreamAssemblesProviderVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		flavor       Flavor
		reply        reply
		want         Response
		wantText     string // as streamed through the callback
		wantThinking string
	}{
		{
			name:   "openai text with usage in a trailing chunk with no choices",
			flavor: FlavorOpenAI,
			reply: reply{done: true, events: []string{
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"content":"Hel"},"logprobs":null,"finish_reason":null}],"usage":null}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"content":"lo"},"logprobs":null,"finish_reason":null}],"usage":null}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
				`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":8,"total_tokens":128,"prompt_tokens_details":{"cached_tokens":64,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":3,"audio_tokens":0}}}`,
			}},
			want: Response{
				Text: "Hello", FinishReason: "stop", Model: "gpt-4.1-mini", ID: "chatcmpl-1",
				Usage: Usage{PromptTokens: 120, CompletionTokens: 8, CachedTokens: 64, ReasoningTokens: 3},
			},
			wantText: "Hello",
		},
		{
			name:   "openai parallel tool calls split across chunks by index",
			flavor: FlavorOpenAI,
			reply: reply{done: true, events: []string{
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_def","type":"function","function":{"name":"list_dir","arguments":""}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.txt\"}"}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":30}}`,
			}},
			want: Response{
				ToolCalls: []ToolCall{
					{ID: "call_abc", Name: "read_file", Arguments: `{"path":"a.txt"}`},
					{ID: "call_def", Name: "list_dir", Arguments: `{}`},
				},
				FinishReason: "tool_calls",
				Usage:        Usage{PromptTokens: 10, CompletionTokens: 30},
			},
		},
		{
			name:   "deepseek reasoning_content and prompt_cache_hit_tokens in the finish chunk",
			flavor: FlavorOpenAI,
			reply: reply{done: true, events: []string{
				`{"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"finish_reason":null}]}`,
				`{"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"Think"},"finish_reason":null}]}`,
				`{"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":null,"reasoning_content":"ing."},"finish_reason":null}]}`,
				`{"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"Answer","reasoning_content":null},"finish_reason":null}]}`,
				`{"model":"deepseek-reasoner","choices":[{"index":0,"delta":{"content":"","reasoning_content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70,"prompt_cache_hit_tokens":32,"prompt_cache_miss_tokens":18,"completion_tokens_details":{"reasoning_tokens":12}}}`,
			}},
			want: Response{
				Text: "Answer", Thinking: "Thinking.", FinishReason: "stop", Model: "deepseek-reasoner",
				Usage: Usage{PromptTokens: 50, CompletionTokens: 20, CachedTokens: 32, ReasoningTokens: 12},
			},
			wantText:     "Answer",
			wantThinking: "Thinking.",
		},
		{
			name:   "ollama reasoning field",
			flavor: FlavorOpenAI,
			reply: reply{done: true, events: []string{
				`{"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Let me see"},"finish_reason":null}]}`,
				`{"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Yes"},"finish_reason":null}]}`,
				`{"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`,
				`{"id":"chatcmpl-9","object":"chat.completion.chunk","model":"qwen3","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`,
			}},
			want: Response{
				Text: "Yes", Thinking: "Let me see", FinishReason: "stop", Model: "qwen3", ID: "chatcmpl-9",
				Usage: Usage{PromptTokens: 11, CompletionTokens: 5},
			},
			wantText:     "Yes",
			wantThinking: "Let me see",
		},
		{
			name:   "mistral whole tool call in one delta with usage beside finish_reason",
			flavor: FlavorMistral,
			reply: reply{done: true, events: []string{
				`{"id":"cmpl-m","object":"chat.completion.chunk","created":1,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"id":"cmpl-m","object":"chat.completion.chunk","created":1,"model":"mistral-large-latest","choices":[{"index":0,"delta":{"tool_calls":[{"id":"D681PevKs","function":{"name":"read_file","arguments":"{\"path\": \"a.txt\"}"},"index":0}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":90,"total_tokens":110,"completion_tokens":20}}`,
			}},
			want: Response{
				ToolCalls:    []ToolCall{{ID: "D681PevKs", Name: "read_file", Arguments: `{"path": "a.txt"}`}},
				FinishReason: "tool_calls", Model: "mistral-large-latest", ID: "cmpl-m",
				Usage: Usage{PromptTokens: 90, CompletionTokens: 20},
			},
		},
		{
			name:   "mistral reasoning model with thinking content parts",
			flavor: FlavorMistral,
			reply: reply{done: true, events: []string{
				`{"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Hmm, "}]}]},"finish_reason":null}]}`,
				`{"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"easy."}]}]},"finish_reason":null}]}`,
				`{"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":"Done"},"finish_reason":null}]}`,
				`{"model":"magistral-medium-latest","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12,"num_cached_tokens":2}}`,
			}},
			want: Response{
				Text: "Done", Thinking: "Hmm, easy.", FinishReason: "stop", Model: "magistral-medium-latest",
				Usage: Usage{PromptTokens: 5, CompletionTokens: 7, CachedTokens: 2},
			},
			wantText:     "Done",
			wantThinking: "Hmm, easy.",
		},
		{
			name:   "kimi usage inside the finishing choice with cached_tokens at its top",
			flavor: FlavorKimi,
			reply: reply{done: true, events: []string{
				`{"id":"chatcmpl-k","object":"chat.completion.chunk","created":1,"model":"kimi-k2-thinking","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"id":"chatcmpl-k","object":"chat.completion.chunk","created":1,"model":"kimi-k2-thinking","choices":[{"index":0,"delta":{"reasoning_content":"plan"},"finish_reason":null}]}`,
				`{"id":"chatcmpl-k","object":"chat.completion.chunk","created":1,"model":"kimi-k2-thinking","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
				`{"id":"chatcmpl-k","object":"chat.completion.chunk","created":1,"model":"kimi-k2-thinking","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":19,"completion_tokens":13,"total_tokens":32,"cached_tokens":16}}]}`,
			}},
			want: Response{
				Text: "Hi", Thinking: "plan", FinishReason: "stop", Model: "kimi-k2-thinking", ID: "chatcmpl-k",
				Usage: Usage{PromptTokens: 19, CompletionTokens: 13, CachedTokens: 16},
			},
			wantText:     "Hi",
			wantThinking: "plan",
		},
		{
			name:   "whole tool calls without index, told apart by id",
			flavor: FlavorOpenAI,
			reply: reply{done: true, events: []string{
				`{"choices":[{"delta":{"role":"assistant","tool_calls":[{"function":{"arguments":"{\"city\":\"Paris\"}","name":"weather"},"id":"c1","type":"function"},{"function":{"arguments":"{\"city\":\"Rome\"}","name":"weather"},"id":"c2","type":"function"}]},"finish_reason":"tool_calls","index":0}]}`,
			}},
			want: Response{
				ToolCalls: []ToolCall{
					{ID: "c1", Name: "weather", Arguments: `{"city":"Paris"}`},
					{ID: "c2", Name: "weather", Arguments: `{"city":"Rome"}`},
				},
				FinishReason: "tool_calls",
			},
		},
		{
			name:   "provider numbering every call 0 but giving each its own id",
			flavor: FlavorOpenAI,
			reply: reply{done: true, events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a1","function":{"name":"f","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b2","function":{"name":"g","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			}},
			want: Response{
				ToolCalls:    []ToolCall{{ID: "a1", Name: "f", Arguments: `{}`}, {ID: "b2", Name: "g", Arguments: `{"x":1}`}},
				FinishReason: "tool_calls",
			},
		},
		{
			name:   "name repeated in every delta is not doubled",
			flavor: FlavorOpenAI,
			reply: reply{done: true, events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x9","function":{"name":"grep","arguments":"{\"q\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x9","function":{"name":"grep","arguments":"\"a\"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			}},
			want: Response{
				ToolCalls:    []ToolCall{{ID: "x9", Name: "grep", Arguments: `{"q":"a"}`}},
				FinishReason: "tool_calls",
			},
		},
		{
			name:   "arguments sent as an object and a call with no arguments",
			flavor: FlavorOpenAI,
			reply: reply{done: true, events: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"o1","function":{"name":"f","arguments":{"n":2}}},{"index":1,"id":"o2","function":{"name":"now"}}]},"finish_reason":"tool_calls"}]}`,
			}},
			want: Response{
				ToolCalls:    []ToolCall{{ID: "o1", Name: "f", Arguments: `{"n":2}`}, {ID: "o2", Name: "now", Arguments: `{}`}},
				FinishReason: "tool_calls",
			},
		},
		{
			name:   "finish reason without [DONE] is a whole answer",
			flavor: FlavorOpenAI,
			reply: reply{events: []string{
				`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
			}},
			want:     Response{Text: "ok", FinishReason: "length"},
			wantText: "ok",
		},
		{
			name:   "whole JSON completion answering a stream request",
			flavor: FlavorOpenAI,
			reply: reply{
				header: map[string]string{"Content-Type": "application/json"},
				body:   `{"id":"x","object":"chat.completion","model":"m1","choices":[{"index":0,"message":{"role":"assistant","content":"Sure","reasoning_content":"why not","tool_calls":[{"id":"t1","type":"function","function":{"name":"ls","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
			},
			want: Response{
				Text: "Sure", Thinking: "why not", FinishReason: "tool_calls", Model: "m1", ID: "x",
				ToolCalls: []ToolCall{{ID: "t1", Name: "ls", Arguments: "{}"}},
				Usage:     Usage{PromptTokens: 3, CompletionTokens: 4},
			},
			wantText:     "Sure",
			wantThinking: "why not",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeProvider(t, tt.reply)
			client, _ := testClient(t, fake.url(), tt.flavor)
			var got collect
			resp, err := client.Stream(context.Background(), basicRequest(), got.add)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if !reflect.DeepEqual(resp, tt.want) {
				t.Errorf("response\n got %+v\nwant %+v", resp, tt.want)
			}
			if got.text() != tt.wantText {
				t.Errorf("streamed text %q, want %q", got.text(), tt.wantText)
			}
			if got.thinking() != tt.wantThinking {
				t.Errorf("streamed thinking %q, want %q", got.thinking(), tt.wantThinking)
			}
			for _, d := range got.deltas {
				if set := countSet(d); set != 1 {
					t.Errorf("delta %+v has %d fields set, want exactly 1", d, set)
				}
			}
		})
	}
}

func countSet(d Delta) int {
	n := 0
	if d.Text != "" {
		n++
	}
	if d.Thinking != "" {
		n++
	}
	if d.ToolCall != nil {
		n++
	}
	return n
}

func TestStreamReportsToolCallProgress(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{done: true, events: []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"grep","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}})
	client, _ := testClient(t, fake.url(), FlavorOpenAI)
	var got collect
	if _, err := client.Stream(context.Background(), basicRequest(), got.add); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	want := []Delta{
		{ToolCall: &ToolCallProgress{Index: 0, ID: "call_1", Name: "grep"}},
		{ToolCall: &ToolCallProgress{Index: 0, ID: "call_1", Name: "grep", ArgumentsDelta: `{"q":1}`}},
	}
	if !reflect.DeepEqual(got.deltas, want) {
		t.Errorf("deltas\n got %s\nwant %s", describeDeltas(got.deltas), describeDeltas(want))
	}
}

func describeDeltas(ds []Delta) string {
	var parts []string
	for _, d := range ds {
		if d.ToolCall != nil {
			parts = append(parts, fmt.Sprintf("call%+v", *d.ToolCall))
			continue
		}
		parts = append(parts, fmt.Sprintf("%+v", d))
	}
	return strings.Join(parts, "; ")
}

func TestStreamGivesCallsWithoutIDAnID(t *testing.T) {
	t.Parallel()
	// Neither index nor id after the first delta: fragments continue the
	// last call until a complete call is followed by a new function name.
	fake := newFakeProvider(t, reply{done: true, events: []string{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"type":"function","function":{"name":"grep","arguments":"{\"pat"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"tern\":\"x\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"type":"function","function":{"name":"ls","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}})
	client, _ := testClient(t, fake.url(), FlavorOpenAI)
	resp, err := client.Stream(context.Background(), basicRequest(), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if len(resp.ToolCalls) != 2 {
		t.Fatalf("got %d tool calls, want 2: %+v", len(resp.ToolCalls), resp.ToolCalls)
	}
	first, second := resp.ToolCalls[0], resp.ToolCalls[1]
	if first.Name != "grep" || first.Arguments != `{"pattern":"x"}` || second.Name != "ls" || second.Arguments != "{}" {
		t.Errorf("calls assembled wrong: %+v", resp.ToolCalls)
	}
	if !strings.HasPrefix(first.ID, "call_") || !strings.HasPrefix(second.ID, "call_") || first.ID == second.ID {
		t.Errorf("generated ids %q and %q, want two distinct call_ ids", first.ID, second.ID)
	}
}

func TestStreamErrorInsideTheStream(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{done: true, events: []string{
		`{"error":{"message":"The model produced invalid content.","type":"invalid_request_error","code":"invalid_content"}}`,
	}})
	client, waits := testClient(t, fake.url(), FlavorOpenAI)
	_, err := client.Stream(context.Background(), basicRequest(), nil)
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v is not an *APIError", err)
	}
	if apiErr.Message != "The model produced invalid content." || apiErr.Code != "invalid_content" {
		t.Errorf("got %+v", apiErr)
	}
	if Retryable(err) || len(*waits) != 0 || fake.requestCount() != 1 {
		t.Errorf("a non-transient error in the stream was retried (%d requests)", fake.requestCount())
	}
}

func TestComplete(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{
		header: map[string]string{"Content-Type": "application/json"},
		body:   `{"id":"x","object":"chat.completion","model":"kimi-k2","choices":[{"index":0,"message":{"role":"assistant","content":"Bonjour","reasoning_content":"French"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"cached_tokens":8}}`,
	})
	client, _ := testClient(t, fake.url(), FlavorKimi)
	resp, err := client.Complete(context.Background(), basicRequest())
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	want := Response{Text: "Bonjour", Thinking: "French", FinishReason: "stop", Model: "kimi-k2", ID: "x",
		Usage: Usage{PromptTokens: 9, CompletionTokens: 2, CachedTokens: 8}}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("got %+v\nwant %+v", resp, want)
	}
	body := fake.request(0).body
	for _, key := range []string{"stream", "stream_options"} {
		if _, ok := body[key]; ok {
			t.Errorf("non-streaming request carries %q", key)
		}
	}
	if got := fake.request(0).header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept = %q", got)
	}
}
