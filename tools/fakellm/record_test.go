package fakellm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/tools/fakellm"
)

const recordedBody = `{
  "model": "kimi-k2",
  "messages": [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]},
    {"role": "assistant", "content": null, "reasoning_content": "hmm",
     "tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "grep", "arguments": "{\"q\":\"x\"}"}}]},
    {"role": "tool", "tool_call_id": "call_9", "content": "no match"}
  ],
  "tools": [{"type": "function", "function": {"name": "grep", "description": "search", "parameters": {"type": "object"}}}],
  "stream": true,
  "stream_options": {"include_usage": true},
  "prompt_cache_key": "session-123",
  "temperature": 0.2
}`

func TestRecording(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{{Name: "only", Reply: fakellm.Reply{Text: "ok"}}}})
	resp := postRaw(t, t.Context(), srv, []byte(recordedBody), "Authorization", "Bearer sk-test", "X-Trace", "t1")
	if s := readStream(t, resp.Body); !s.done {
		t.Fatalf("stream did not finish: %v", s.err)
	}

	requests := srv.Requests()
	if len(requests) != 1 {
		t.Fatalf("recorded %d requests, want 1", len(requests))
	}
	r := requests[0]
	if string(r.Body) != recordedBody {
		t.Errorf("raw body differs from what was sent:\n%s", r.Body)
	}
	if r.Header.Get("Authorization") != "Bearer sk-test" || r.Header.Get("X-Trace") != "t1" {
		t.Errorf("headers = %v, want Authorization and X-Trace kept", r.Header)
	}
	if r.Index != 0 || r.Rule != 0 || r.RuleName != "only" {
		t.Errorf("index/rule = %d %d %q, want 0 0 only", r.Index, r.Rule, r.RuleName)
	}
	if r.Model != "kimi-k2" || !r.Stream || !r.IncludeUsage {
		t.Errorf("model/stream/include_usage = %q %t %t", r.Model, r.Stream, r.IncludeUsage)
	}
	wantExtra := map[string]json.RawMessage{
		"prompt_cache_key": json.RawMessage(`"session-123"`),
		"temperature":      json.RawMessage(`0.2`),
	}
	if !reflect.DeepEqual(r.Extra, wantExtra) {
		t.Errorf("extra = %s, want prompt_cache_key and temperature only", r.Extra)
	}
	if len(r.Messages) != 4 {
		t.Fatalf("decoded %d messages, want 4", len(r.Messages))
	}
	if m := r.Messages[1]; m.Role != "user" || m.Content != "part one\npart two" || !strings.HasPrefix(string(m.RawContent), "[") {
		t.Errorf("user message = %+v, want text parts joined and the raw array kept", m)
	}
	wantCall := []fakellm.MessageToolCall{{ID: "call_9", Name: "grep", Arguments: `{"q":"x"}`}}
	if m := r.Messages[2]; m.Content != "" || m.ReasoningContent != "hmm" || !reflect.DeepEqual(m.ToolCalls, wantCall) {
		t.Errorf("assistant message = %+v", m)
	}
	if m := r.Messages[3]; m.ToolCallID != "call_9" || m.Content != "no match" {
		t.Errorf("tool message = %+v", m)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "grep" || r.Tools[0].Type != "function" || r.Tools[0].Description != "search" ||
		string(r.Tools[0].Parameters) != `{"type": "object"}` {
		t.Errorf("tools = %+v", r.Tools)
	}
	if got := r.SystemPrompt(); got != "Be brief." {
		t.Errorf("SystemPrompt = %q", got)
	}
	if got, ok := r.LastToolResult(); !ok || got != "no match" || !r.LastIsToolResult() || r.AssistantMessages() != 1 {
		t.Errorf("LastToolResult = %q %t, LastIsToolResult = %t, AssistantMessages = %d", got, ok, r.LastIsToolResult(), r.AssistantMessages())
	}

	// The JSON form (record file, GET /fakellm/requests) restores the view.
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back fakellm.Request
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Model != r.Model || !reflect.DeepEqual(back.Messages[2], r.Messages[2]) || !reflect.DeepEqual(back.Extra, r.Extra) ||
		back.Header.Get("Authorization") != "Bearer sk-test" || back.RuleName != "only" {
		t.Errorf("JSON round trip lost data: %+v", back)
	}

	srv.Reset()
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("after Reset: %d requests recorded, want 0", n)
	}
}

func TestRequestsEndpoints(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{})
	getRequests := func() []fakellm.Request {
		t.Helper()
		resp, err := http.Get(strings.TrimSuffix(srv.URL(), "/v1") + "/fakellm/requests")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list []fakellm.Request
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		return list
	}
	if list := getRequests(); list == nil || len(list) != 0 {
		t.Errorf("before any request: %v, want an empty list", list)
	}
	completeText(t, srv, userBody("first"))
	completeText(t, srv, userBody("second"))
	list := getRequests()
	if len(list) != 2 || list[1].Index != 1 || list[1].LastUserText() != "second" {
		t.Fatalf("requests = %+v, want both, decoded", list)
	}

	resp, err := http.Post(strings.TrimSuffix(srv.URL(), "/v1")+"/fakellm/reset", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || len(srv.Requests()) != 0 {
		t.Errorf("reset: status %d, %d requests left; want 204 and none", resp.StatusCode, len(srv.Requests()))
	}
}

func TestOnRequest(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := start(t, fakellm.Rules{}, fakellm.OnRequest(func(r fakellm.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, r.LastUserText())
	}))
	completeText(t, srv, userBody("one"))
	completeText(t, srv, userBody("two"))
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(seen, []string{"one", "two"}) {
		t.Errorf("hook saw %q, want one and two", seen)
	}
}

func TestWaitRequests(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{})
	go func() {
		for _, text := range []string{"a", "b"} {
			resp, err := http.Post(srv.URL()+"/chat/completions", "application/json",
				strings.NewReader(`{"model": "m", "messages": [{"role": "user", "content": "`+text+`"}]}`))
			if err != nil {
				return // the test fails on its own when requests go missing
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	got, err := srv.WaitRequests(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || got[0].LastUserText() != "a" || got[1].LastUserText() != "b" {
		t.Errorf("WaitRequests = %+v, want the two requests in order", got)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := srv.WaitRequests(ctx, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for a request that never comes: err = %v, want the context's", err)
	}
}

func TestMalformedRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, wantInMessage string
	}{
		{"not JSON", `{"model": `, "request body"},
		{"not an object", `[1, 2]`, "request body"},
		{"no model", `{"messages": [{"role": "user", "content": "x"}]}`, "model is required"},
		{"no messages", `{"model": "m", "messages": []}`, "messages must not be empty"},
		{"content of the wrong type", `{"model": "m", "messages": [{"role": "user", "content": 7}]}`, "messages[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, fakellm.Rules{})
			resp := postRaw(t, t.Context(), srv, []byte(tt.body))
			var e struct {
				Error struct{ Message, Type string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest || e.Error.Type != "invalid_request_error" ||
				!strings.Contains(e.Error.Message, tt.wantInMessage) {
				t.Errorf("status %d, error %+v; want 400 invalid_request_error mentioning %q", resp.StatusCode, e.Error, tt.wantInMessage)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d malformed requests recorded, want 0", n)
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		rules      fakellm.Rules
		method     string
		path       string
		wantStatus int
		wantModel  string
	}{
		{"models lists the configured model", fakellm.Rules{Model: "kimi-fake"}, "GET", "/v1/models", 200, "kimi-fake"},
		{"models defaults", fakellm.Rules{}, "GET", "/v1/models", 200, fakellm.DefaultModel},
		{"unknown route", fakellm.Rules{}, "POST", "/v1/embeddings", 404, ""},
		{"wrong method", fakellm.Rules{}, "GET", "/v1/chat/completions", 405, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, tt.rules)
			req, err := http.NewRequestWithContext(t.Context(), tt.method, strings.TrimSuffix(srv.URL(), "/v1")+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d", resp.StatusCode, tt.wantStatus)
			}
			if tt.wantModel == "" {
				return
			}
			var list struct {
				Object string
				Data   []struct{ ID, Object string }
			}
			if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
				t.Fatal(err)
			}
			if list.Object != "list" || len(list.Data) != 1 || list.Data[0].ID != tt.wantModel || list.Data[0].Object != "model" {
				t.Errorf("models = %+v, want one model %q", list, tt.wantModel)
			}
		})
	}
}
