package fakellm_test

// A minimal OpenAI client for the tests: it decodes answers into its own
// types and reassembles streams the way real clients do, so the tests
// check the wire format rather than the server's internal types.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

type clientUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type clientToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type clientCompletion struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role             string           `json:"role"`
			Content          *string          `json:"content"`
			ReasoningContent string           `json:"reasoning_content"`
			ToolCalls        []clientToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *clientUsage `json:"usage"`
}

type clientChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Role             string           `json:"role"`
			Content          *string          `json:"content"`
			ReasoningContent string           `json:"reasoning_content"`
			ToolCalls        []clientToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *clientUsage `json:"usage"`
}

// streamed is a stream as a client sees it once reassembled.
type streamed struct {
	chunks       []clientChunk
	text         string
	reasoning    string
	toolCalls    []clientToolCall
	finishReason string
	usage        *clientUsage
	done         bool  // saw "data: [DONE]"
	err          error // the read error that ended the stream early, if any
}

func (s *streamed) add(c clientChunk) {
	s.chunks = append(s.chunks, c)
	if c.Usage != nil {
		s.usage = c.Usage
	}
	for _, choice := range c.Choices {
		d := choice.Delta
		if d.Content != nil {
			s.text += *d.Content
		}
		s.reasoning += d.ReasoningContent
		for _, tc := range d.ToolCalls {
			for len(s.toolCalls) <= tc.Index {
				s.toolCalls = append(s.toolCalls, clientToolCall{Index: len(s.toolCalls)})
			}
			call := &s.toolCalls[tc.Index]
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Type != "" {
				call.Type = tc.Type
			}
			if tc.Function.Name != "" {
				call.Function.Name = tc.Function.Name
			}
			call.Function.Arguments += tc.Function.Arguments
		}
		if choice.FinishReason != nil {
			s.finishReason = *choice.FinishReason
		}
	}
}

// readStream reads server-sent events until [DONE] or a read error.
func readStream(t *testing.T, body io.Reader) *streamed {
	t.Helper()
	s := &streamed{}
	scanner := bufio.NewScanner(body)
	scanner.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("stream line without data prefix: %q", line)
		}
		if data == "[DONE]" {
			s.done = true
			if scanner.Scan() && strings.TrimSpace(scanner.Text()) != "" {
				t.Fatalf("data after [DONE]: %q", scanner.Text())
			}
			return s
		}
		var c clientChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk is not JSON: %v: %s", err, data)
		}
		s.add(c)
	}
	s.err = scanner.Err()
	if s.err == nil {
		s.err = io.ErrUnexpectedEOF
	}
	return s
}

// body is a request body: a map so tests can add any field.
type body map[string]any

func userBody(text string) body {
	return body{"model": "test-model", "messages": []any{msg("user", text)}}
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func toolResult(id, content string) map[string]any {
	return map[string]any{"role": "tool", "tool_call_id": id, "content": content}
}

func assistantCalls(ids ...string) map[string]any {
	var calls []any
	for _, id := range ids {
		calls = append(calls, map[string]any{
			"id": id, "type": "function",
			"function": map[string]any{"name": "lookup", "arguments": "{}"},
		})
	}
	return map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
}

func tool(name string) map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{
		"name": name, "description": "the " + name + " tool",
		"parameters": map[string]any{"type": "object"},
	}}
}

func start(t *testing.T, rules fakellm.Rules, opts ...fakellm.Option) *fakellmtest.Server {
	t.Helper()
	return fakellmtest.Start(t, rules, opts...)
}

// post sends b to the chat endpoint of srv.
func post(t *testing.T, ctx context.Context, srv *fakellmtest.Server, b body, header ...string) *http.Response {
	t.Helper()
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return postRaw(t, ctx, srv, data, header...)
}

func postRaw(t *testing.T, ctx context.Context, srv *fakellmtest.Server, data []byte, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// complete makes a non-streaming request that must succeed.
func complete(t *testing.T, srv *fakellmtest.Server, b body) clientCompletion {
	t.Helper()
	resp := post(t, t.Context(), srv, b)
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var c clientCompletion
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if len(c.Choices) != 1 {
		t.Fatalf("got %d choices, want 1", len(c.Choices))
	}
	return c
}

// completeText is the text of a non-streaming answer.
func completeText(t *testing.T, srv *fakellmtest.Server, b body) string {
	t.Helper()
	c := complete(t, srv, b)
	if c.Choices[0].Message.Content == nil {
		t.Fatal("content is null")
	}
	return *c.Choices[0].Message.Content
}

// streamChat makes a streaming request that must succeed and reads it all.
func streamChat(t *testing.T, srv *fakellmtest.Server, b body) *streamed {
	t.Helper()
	b["stream"] = true
	resp := post(t, t.Context(), srv, b)
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	return readStream(t, resp.Body)
}
