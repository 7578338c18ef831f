package fakellm_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

// tokens is text the server counts as exactly n tokens (four characters
// each).
func tokens(n int) string {
	return strings.Repeat("abcd", n)
}

func contextError(message string) string {
	return `{"error":{"message":"` + message + `","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}` + "\n"
}

func TestContextWindow(t *testing.T) {
	t.Parallel()
	small := fakellm.Rules{Rules: []fakellm.Rule{
		{Name: "small model", Match: fakellm.Match{Model: "small"}, ContextWindow: 1000, Reply: fakellm.Reply{Text: "small"}},
		{Name: "big model", Match: fakellm.Match{Model: "big"}, ContextWindow: 8000, Reply: fakellm.Reply{Text: "big"}},
		{Name: "any", Reply: fakellm.Reply{Text: "ok"}},
	}}
	global := func(window int) fakellm.Rules {
		return fakellm.Rules{ContextWindow: window, Rules: []fakellm.Rule{{Reply: fakellm.Reply{Text: "ok"}}}}
	}
	with := func(b body, field string, value int) body {
		b[field] = value
		return b
	}
	tests := []struct {
		name       string
		rules      fakellm.Rules
		body       body
		wantTokens int
		wantWindow int
		wantBody   string // the exact 400 body, or "" for an answer
	}{
		{
			name:       "unlimited by default",
			rules:      global(0),
			body:       userBody(tokens(100000)),
			wantTokens: 100000,
		},
		{
			name:       "fits exactly",
			rules:      global(4000),
			body:       userBody(tokens(4000)),
			wantTokens: 4000, wantWindow: 4000,
		},
		{
			name:       "messages over the window",
			rules:      global(4000),
			body:       userBody(tokens(4513)),
			wantTokens: 4513, wantWindow: 4000,
			wantBody: contextError("This model's maximum context length is 4000 tokens. However, your messages resulted in 4513 tokens. Please reduce the length of the messages."),
		},
		{
			name:  "every message counts",
			rules: global(4000),
			body: body{"model": "m", "messages": []any{
				msg("system", tokens(1000)), msg("user", tokens(1000)), msg("assistant", tokens(1000)),
				msg("user", tokens(1000)), toolResult("call_1", "abcd"),
			}},
			wantTokens: 4001, wantWindow: 4000,
			wantBody: contextError("This model's maximum context length is 4000 tokens. However, your messages resulted in 4001 tokens. Please reduce the length of the messages."),
		},
		{
			name:       "max_completion_tokens counts",
			rules:      global(4000),
			body:       with(userBody(tokens(4100)), "max_completion_tokens", 500),
			wantTokens: 4100, wantWindow: 4000,
			wantBody: contextError("This model's maximum context length is 4000 tokens. However, you requested 4600 tokens (4100 in the messages, 500 in the completion). Please reduce the length of the messages or completion."),
		},
		{
			name:       "messages that fit but not with the completion",
			rules:      global(4000),
			body:       with(userBody(tokens(3600)), "max_tokens", 401),
			wantTokens: 3600, wantWindow: 4000,
			wantBody: contextError("This model's maximum context length is 4000 tokens. However, you requested 4001 tokens (3600 in the messages, 401 in the completion). Please reduce the length of the messages or completion."),
		},
		{
			name:       "messages and completion that fit",
			rules:      global(4000),
			body:       with(userBody(tokens(3600)), "max_tokens", 400),
			wantTokens: 3600, wantWindow: 4000,
		},
		{
			name:       "max_completion_tokens wins over max_tokens",
			rules:      global(4000),
			body:       with(with(userBody(tokens(3600)), "max_tokens", 10000), "max_completion_tokens", 400),
			wantTokens: 3600, wantWindow: 4000,
		},
		{
			// A tool costs its name, description and parameters: "lookup"
			// 2, "the lookup tool" 4, {"type":"object"} 5.
			name:       "tool definitions count",
			rules:      global(100),
			body:       withTools(userBody(tokens(90)), "lookup"),
			wantTokens: 101, wantWindow: 100,
			wantBody: contextError("This model's maximum context length is 100 tokens. However, your messages resulted in 101 tokens. Please reduce the length of the messages."),
		},
		{
			name:       "the same without the tool fits",
			rules:      global(100),
			body:       userBody(tokens(90)),
			wantTokens: 90, wantWindow: 100,
		},
		{
			// "lookup" 2 and "{}" 1 per call, the tool results 1 each.
			name:  "tool calls count",
			rules: global(100),
			body: body{"model": "m", "messages": []any{
				msg("user", tokens(92)), assistantCalls("call_1", "call_2"),
				toolResult("call_1", "ok"), toolResult("call_2", "ok"),
			}},
			wantTokens: 100, wantWindow: 100,
		},
		{
			name:       "a rule's window for one model",
			rules:      small,
			body:       withModel(userBody(tokens(1001)), "small"),
			wantTokens: 1001, wantWindow: 1000,
			wantBody: contextError("This model's maximum context length is 1000 tokens. However, your messages resulted in 1001 tokens. Please reduce the length of the messages."),
		},
		{
			name:       "other models keep the file's window",
			rules:      small,
			body:       withModel(userBody(tokens(1001)), "other"),
			wantTokens: 1001,
		},
		{
			name:       "a rule's window replaces the file's",
			rules:      fakellm.Rules{ContextWindow: 1000, Rules: small.Rules},
			body:       withModel(userBody(tokens(5000)), "big"),
			wantTokens: 5000, wantWindow: 8000,
		},
		{
			name:       "the file's window for rules without one",
			rules:      fakellm.Rules{ContextWindow: 1000, Rules: small.Rules},
			body:       withModel(userBody(tokens(1001)), "other"),
			wantTokens: 1001, wantWindow: 1000,
			wantBody: contextError("This model's maximum context length is 1000 tokens. However, your messages resulted in 1001 tokens. Please reduce the length of the messages."),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, tt.rules)
			for _, stream := range []bool{false, true} {
				b := body{}
				for k, v := range tt.body {
					b[k] = v
				}
				b["stream"] = stream
				resp := post(t, t.Context(), srv, b)
				data, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case tt.wantBody != "":
					if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" {
						t.Errorf("stream=%t: status %d, Content-Type %q; want 400 and JSON", stream, resp.StatusCode, resp.Header.Get("Content-Type"))
					}
					if string(data) != tt.wantBody {
						t.Errorf("stream=%t: body =\n%s\nwant\n%s", stream, data, tt.wantBody)
					}
				case resp.StatusCode != http.StatusOK:
					t.Errorf("stream=%t: status %d, want 200: %s", stream, resp.StatusCode, data)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("recorded %d requests, want 2 (refused ones too)", len(reqs))
			}
			for _, r := range reqs {
				if r.PromptTokens != tt.wantTokens || r.ContextWindow != tt.wantWindow || r.ContextExceeded() != (tt.wantBody != "") {
					t.Errorf("recorded prompt tokens %d, window %d, exceeded %t; want %d, %d, %t",
						r.PromptTokens, r.ContextWindow, r.ContextExceeded(), tt.wantTokens, tt.wantWindow, tt.wantBody != "")
				}
			}
		})
	}
}

// TestUsageCountsWhatTheWindowCounts: the prompt_tokens a client sees are
// the count the window is checked against, tools included.
func TestUsageCountsWhatTheWindowCounts(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{Text: "ok"}}}})
	c := complete(t, srv, withTools(userBody(tokens(90)), "lookup"))
	if got := c.Usage.PromptTokens; got != 101 || srv.Requests()[0].PromptTokens != 101 {
		t.Errorf("usage prompt_tokens = %d, recorded %d; want 101 both", got, srv.Requests()[0].PromptTokens)
	}
}

// TestRefusedRequestUsesNothing: the retry after compacting must find the
// scripted step a refused request matched, with the same call ids.
func TestRefusedRequestUsesNothing(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{ContextWindow: 100, Rules: []fakellm.Rule{
		{Name: "once", Times: 1, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "lookup"}}}},
		{Name: "then", Reply: fakellm.Reply{Text: "done"}},
	}})
	if resp := post(t, t.Context(), srv, userBody(tokens(101))); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("long request: status %d, want 400", resp.StatusCode)
	}
	calls := complete(t, srv, userBody("short")).Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].ID != "call_1" {
		t.Errorf("retry: calls %+v, want the once rule's call_1", calls)
	}
	if got := completeText(t, srv, userBody("short")); got != "done" {
		t.Errorf("third request: %q, want the once rule used up", got)
	}
	if r := srv.Requests()[0]; r.Rule != 0 || r.RuleName != "once" {
		t.Errorf("refused request recorded with rule %d %q, want the rule whose window refused it", r.Rule, r.RuleName)
	}
}
