package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// outputBytes counts the output a stream handed out.
func (c *collect) outputBytes() int {
	n := 0
	for _, d := range c.deltas {
		n += len(d.Text) + len(d.Thinking)
		if d.ToolCall != nil {
			n += len(d.ToolCall.ArgumentsDelta)
		}
	}
	return n
}

func responseBytes(r Response) int {
	n := len(r.Text) + len(r.Thinking)
	for _, c := range r.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}

// A provider that never stops writing its answer is cut off at the cap:
// the call fails at once, is not retried, and the client hangs up.
func TestAnswerOverTheCapFails(t *testing.T) {
	t.Parallel()
	const limit = 4 << 10
	tests := []struct {
		name  string
		event string // sent again and again
	}{
		{"text", `{"choices":[{"index":0,"delta":{"content":"0123456789abcdef"},"finish_reason":null}]}`},
		{"thinking", `{"choices":[{"index":0,"delta":{"reasoning_content":"0123456789abcdef"},"finish_reason":null}]}`},
		{"tool call arguments", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"write","arguments":"0123456789abcdef"}}]},"finish_reason":null}]}`},
		// A name repeated whole adds nothing; one that keeps changing grows.
		{"tool call names", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"01234567"}},{"index":0,"function":{"name":"89abcdef"}}]},"finish_reason":null}]}`},
		// Each call is empty, but there is no end to them.
		{"tool calls", `{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]},"finish_reason":null}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeProvider(t, reply{forever: "data: " + tt.event + "\n\n"})
			client, waits := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) { c.MaxOutputBytes = limit })
			var got collect
			resp, err := client.Stream(context.Background(), basicRequest(), got.add)
			if !errors.Is(err, ErrOutputTooLarge) {
				t.Fatalf("error %v, want ErrOutputTooLarge", err)
			}
			if want := "llm: the model's answer exceeded 4 KiB"; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			if errors.Is(err, ErrInterrupted) || Retryable(err) || fake.requestCount() != 1 || len(*waits) != 0 {
				t.Errorf("an answer over the cap was reported as a broken stream, or retried: %v after %d requests", err, fake.requestCount())
			}
			if got.outputBytes() > limit || responseBytes(resp) > limit {
				t.Errorf("%d bytes streamed, %d kept; the cap is %d", got.outputBytes(), responseBytes(resp), limit)
			}
			if !fake.clientLeft() {
				t.Error("the client kept reading after the answer passed the cap")
			}
		})
	}
}

// One event that never ends is not buffered until memory runs out.
func TestEndlessStreamEventFails(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{
		header:  map[string]string{"Content-Type": "text/event-stream"},
		body:    `data: {"choices":[{"index":0,"delta":{"content":"`,
		forever: strings.Repeat("a", 8<<10),
	})
	client, waits := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) { c.MaxOutputBytes = 4 << 10 })
	_, err := client.Stream(context.Background(), basicRequest(), nil)
	if !errors.Is(err, ErrOutputTooLarge) {
		t.Fatalf("error %v, want ErrOutputTooLarge", err)
	}
	if Retryable(err) || fake.requestCount() != 1 || len(*waits) != 0 {
		t.Errorf("an event over the cap was retried: %d requests", fake.requestCount())
	}
	if !fake.clientLeft() {
		t.Error("the client kept reading the endless event")
	}
}

func TestAnswerAtTheCapIsWhole(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{done: true, events: []string{
		`{"choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"12345"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	}})
	client, _ := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) { c.MaxOutputBytes = 10 })
	resp, err := client.Stream(context.Background(), basicRequest(), nil)
	if err != nil || resp.Text != "12345" || resp.Thinking != "think" {
		t.Fatalf("got %+v, %v; want the whole answer", resp, err)
	}
}

func TestCompletionOverTheCapFails(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
	}{
		{"content", `{"choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("x", 2000) + `"},"finish_reason":"stop"}]}`},
		{"body", `{"choices":[{"index":0,"message":{"role":"assistant","content":"short"},"finish_reason":"stop"}],"padding":"` + strings.Repeat(" ", 200<<10) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeProvider(t, reply{header: map[string]string{"Content-Type": "application/json"}, body: tt.body})
			client, waits := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) { c.MaxOutputBytes = 1000 })
			_, err := client.Complete(context.Background(), basicRequest())
			if !errors.Is(err, ErrOutputTooLarge) {
				t.Fatalf("error %v, want ErrOutputTooLarge", err)
			}
			if want := "llm: the model's answer exceeded 1000 bytes"; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			if fake.requestCount() != 1 || len(*waits) != 0 {
				t.Errorf("%d requests; an answer over the cap was retried", fake.requestCount())
			}
		})
	}
}

func TestDefaultOutputCap(t *testing.T) {
	t.Parallel()
	c, err := New(Config{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.maxOutputBytes != DefaultMaxOutputBytes || DefaultMaxOutputBytes != 4<<20 {
		t.Errorf("cap %d, default %d; want 4 MiB", c.maxOutputBytes, DefaultMaxOutputBytes)
	}
	if got := outputTooLarge(DefaultMaxOutputBytes).Error(); got != "llm: the model's answer exceeded 4 MiB" {
		t.Errorf("error %q", got)
	}
}
