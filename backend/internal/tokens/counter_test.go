package tokens

import (
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/agents-os/agents/backend/internal/llm"
)

// load waits until c counts exactly.
func load(t testing.TB, c *Counter) *Counter {
	t.Helper()
	<-c.Ready()
	if c.enc != nil && !c.Exact() {
		t.Fatal("Ready closed before the tokenizer was loaded")
	}
	return c
}

func TestModelFamilies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model  string
		enc    *encoding
		method string
	}{
		{"gpt-4o", o200k, MethodTokenizer},
		{"gpt-4o-mini-2024-07-18", o200k, MethodTokenizer},
		{"chatgpt-4o-latest", o200k, MethodTokenizer},
		{"gpt-4.1-nano", o200k, MethodTokenizer},
		{"gpt-4.5-preview", o200k, MethodTokenizer},
		{"gpt-5", o200k, MethodTokenizer},
		{"gpt-5.1-codex", o200k, MethodTokenizer},
		{"o1", o200k, MethodTokenizer},
		{"o1-mini", o200k, MethodTokenizer},
		{"o3-pro", o200k, MethodTokenizer},
		{"o4-mini", o200k, MethodTokenizer},
		{"gpt-oss:20b", o200k, MethodTokenizer},
		{"openai/gpt-4o", o200k, MethodTokenizer},
		{"OpenAI/GPT-5-mini", o200k, MethodTokenizer},
		{"ft:gpt-4.1-mini:acme::abc123", o200k, MethodTokenizer},
		{"gpt-4", cl100k, MethodTokenizer},
		{"gpt-4-turbo", cl100k, MethodTokenizer},
		{"gpt-4-0613", cl100k, MethodTokenizer},
		{"gpt-3.5-turbo", cl100k, MethodTokenizer},
		{"gpt-35-turbo", cl100k, MethodTokenizer},
		{"mistral-large-latest", nil, MethodEstimate},
		{"kimi-k2.5", nil, MethodEstimate},
		{"claude-sonnet-4-5", nil, MethodEstimate},
		{"llama3.1:8b", nil, MethodEstimate},
		{"fake", nil, MethodEstimate},
		{"o10-like", nil, MethodEstimate},
		{"gpt-40", nil, MethodEstimate},
		{"", nil, MethodEstimate},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			t.Parallel()
			c := ForModel(tt.model)
			if c.enc != tt.enc {
				t.Errorf("encoding %v, want %v", name(c.enc), name(tt.enc))
			}
			if got := c.Method(); got != tt.method {
				t.Errorf("Method() = %q, want %q", got, tt.method)
			}
		})
	}
}

func name(e *encoding) string {
	if e == nil {
		return "none"
	}
	return e.name
}

// Counts under each encoding (the cl100k_base IDs of "tiktoken is
// great!" are the ones OpenAI's cookbook shows).
func TestKnownCounts(t *testing.T) {
	t.Parallel()
	o, cl := load(t, ForModel("gpt-4o")), load(t, ForModel("gpt-4"))
	tests := []struct {
		text      string
		o200k, cl int
	}{
		{"hello world", 2, 2},
		{"tiktoken is great!", 6, 6},
		{"", 0, 0},
		{"1f7c2d9a-3b4e-4c5d-8e6f-7a8b9c0d1e2f", 36, 36},
	}
	for _, tt := range tests {
		if got := o.Text(tt.text); got != tt.o200k {
			t.Errorf("o200k_base: Text(%q) = %d, want %d", tt.text, got, tt.o200k)
		}
		if got := cl.Text(tt.text); got != tt.cl {
			t.Errorf("cl100k_base: Text(%q) = %d, want %d", tt.text, got, tt.cl)
		}
	}
	ids, _, err := cl.enc.codec.Load().Encode("tiktoken is great!")
	if err != nil {
		t.Fatal(err)
	}
	want := []uint{83, 1609, 5963, 374, 2294, 0}
	if len(ids) != len(want) {
		t.Fatalf("cl100k_base ids %v, want %v", ids, want)
	}
	for i := range ids {
		if ids[i] != want[i] {
			t.Fatalf("cl100k_base ids %v, want %v", ids, want)
		}
	}
}

// Message's framing of a role is one token, as every role's name is.
func TestRolesAreOneToken(t *testing.T) {
	t.Parallel()
	for _, c := range []*Counter{load(t, ForModel("gpt-4o")), load(t, ForModel("gpt-4"))} {
		for _, r := range []llm.Role{llm.RoleSystem, llm.RoleUser, llm.RoleAssistant, llm.RoleTool} {
			if n := c.Text(string(r)); n != 1 {
				t.Errorf("%s: role %q is %d tokens", c.enc.name, r, n)
			}
		}
	}
}

// perTool is at least the JSON a tool definition wraps its texts in, and
// the estimate's framing at least as much.
func TestToolFraming(t *testing.T) {
	t.Parallel()
	const wrapper = `{"type":"function","function":{"name":"","description":"","parameters":}}`
	for _, c := range []*Counter{load(t, ForModel("gpt-4o")), load(t, ForModel("gpt-4"))} {
		if n := c.Text(wrapper); n > perTool {
			t.Errorf("%s: a tool's JSON framing is %d tokens, perTool is %d", c.enc.name, n, perTool)
		}
		if estimatedPerTool < perTool {
			t.Errorf("estimatedPerTool %d is below perTool %d", estimatedPerTool, perTool)
		}
	}
}

func TestMessageShapes(t *testing.T) {
	t.Parallel()
	c := load(t, ForModel("gpt-4o"))
	hello := c.Text("hello world")
	call := llm.ToolCall{ID: "call_1", Name: "bash_run", Arguments: `{"command":"ls"}`}
	tests := []struct {
		name string
		c    *Counter
		m    llm.Message
		want int
	}{
		{"user", c, llm.UserMessage("hello world"), 4 + hello},
		{"image", c, llm.UserMessage("hello world", llm.Image{URL: "data:image/png;base64,AAAA"}), 4 + hello + ImageTokens},
		{"tool call", c, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
			4 + perToolCall + c.Text("bash_run") + c.Text(`{"command":"ls"}`)},
		{"call without arguments", c, llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "bash_run"}}},
			4 + perToolCall + c.Text("bash_run") + c.Text("{}")},
		{"tool result", c, llm.ToolResultMessage("call_1", "hello world"), 4 + perToolResult + hello},
		{"thinking left out", c, llm.Message{Role: llm.RoleAssistant, Text: "hello world", Thinking: "hmm, let me think"}, 4 + hello},
		{"thinking sent back", c.WithFlavor(llm.FlavorKimi), llm.Message{Role: llm.RoleAssistant, Text: "hello world", Thinking: "hmm, let me think"},
			4 + hello + perThinking + c.Text("hmm, let me think")},
		{"placeholder thinking", c.WithFlavor(llm.FlavorKimi), llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
			4 + perToolCall + c.Text("bash_run") + c.Text(`{"command":"ls"}`) + perThinking + 1},
		{"estimate", ForModel("mistral-small"), llm.UserMessage("hello world"), estimatedPerMessage + Estimate("hello world")},
		{"estimate with a call", ForModel("mistral-small"), llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
			estimatedPerMessage + perToolCall + Estimate("bash_run") + Estimate(`{"command":"ls"}`) + Estimate("call_1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.c.Message(tt.m); got != tt.want {
				t.Errorf("Message() = %d, want %d", got, tt.want)
			}
		})
	}
	req := llm.Request{Messages: []llm.Message{llm.SystemMessage("hello world"), llm.UserMessage("hello world")}, Tools: corpusTools}
	if got, want := c.Request(req), 2*(4+hello)+c.Tools(corpusTools)+replyPriming; got != want {
		t.Errorf("Request() = %d, want %d", got, want)
	}
	if c.Tools(nil) != 0 {
		t.Errorf("Tools(nil) = %d, want 0", c.Tools(nil))
	}
}

// Until its vocabulary is built, a Counter answers with the estimate and
// starts the build in the background; once Ready is closed it is exact.
func TestBackgroundLoad(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	enc := &encoding{name: "held", ready: make(chan struct{}), build: func() *codec.Codec {
		<-release
		return codec.NewCl100kBase()
	}}
	c := &Counter{enc: enc}
	const s = "The quick brown fox jumps over the lazy dog."
	if c.Exact() {
		t.Fatal("Exact before the load")
	}
	if got := c.Text(s); got != Estimate(s) {
		t.Errorf("Text before the load = %d, want the estimate %d", got, Estimate(s))
	}
	select {
	case <-c.Ready():
		t.Fatal("Ready before the build returned")
	default:
	}
	close(release)
	<-c.Ready()
	if !c.Exact() {
		t.Fatal("not Exact after Ready")
	}
	if got, want := c.Text(s), 10; got != want {
		t.Errorf("Text after the load = %d, want %d", got, want)
	}
}

// A model without a tokenizer is ready at once and never exact.
func TestEstimateOnlyIsReady(t *testing.T) {
	t.Parallel()
	c := ForModel("mistral-large-latest")
	<-c.Ready()
	if c.Exact() {
		t.Error("a model without a tokenizer is Exact")
	}
}

// Counters of one family share the encoding and may count from many
// goroutines while it loads (go test -race).
func TestConcurrentCounts(t *testing.T) {
	t.Parallel()
	msgs := history(t, 12)
	want := load(t, ForModel("gpt-4o")).Messages(msgs)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			model := []string{"gpt-4o", "gpt-4.1", "gpt-3.5-turbo", "kimi-k2"}[i%4]
			c := ForModel(model)
			n := c.Messages(msgs)
			if model == "gpt-4o" && n != want {
				t.Errorf("%s counted %d, want %d", model, n, want)
			}
		})
	}
	wg.Wait()
}
