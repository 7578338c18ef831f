package llm

import (
	"context"
	"testing"

	"github.com/agents-os/agents/tools/loadgen"
)

// The load tool (tools/loadgen) answers the server's model calls with a
// model of its own, bytes made once: this client must read them as it
// reads a provider's, streamed or whole, or the benchmark measures
// failures.
func TestLoadToolModelAnswers(t *testing.T) {
	t.Parallel()
	m, err := loadgen.StartModel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	c, err := New(Config{BaseURL: m.URL, Flavor: FlavorOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Model: "load-model", Messages: []Message{UserMessage("hello")}}
	var streamed string
	resp, err := c.Stream(context.Background(), req, func(d Delta) { streamed += d.Text })
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Text != "Done." || streamed != "Done." || resp.FinishReason != "stop" || resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens == 0 {
		t.Errorf("Stream = %+v (deltas %q), want Done., stop and usage", resp, streamed)
	}
	whole, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if whole.Text != "Done." || whole.FinishReason != "stop" || whole.Usage.PromptTokens == 0 {
		t.Errorf("Complete = %+v, want Done., stop and usage", whole)
	}
}
