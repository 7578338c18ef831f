package llm

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	t.Run("silent before the first byte is retried", func(t *testing.T) {
		t.Parallel()
		fake := newFakeProvider(t, reply{end: endHangBefore}, okStream)
		client, _ := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) { c.IdleTimeout = 200 * time.Millisecond })
		resp, err := client.Stream(context.Background(), basicRequest(), nil)
		if err != nil || resp.Text != "fine" {
			t.Fatalf("got %q, %v; want the second attempt's answer", resp.Text, err)
		}
		if fake.requestCount() != 2 {
			t.Errorf("%d requests, want 2", fake.requestCount())
		}
	})
	t.Run("slow but steady provider is not cut off", func(t *testing.T) {
		t.Parallel()
		// Every gap is well under the idle timeout; header plus first event,
		// or the whole stream, is well over it.
		fake := newFakeProvider(t, reply{pause: 300 * time.Millisecond, done: true, events: []string{
			`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		}})
		client, _ := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) {
			c.IdleTimeout = 500 * time.Millisecond
			c.MaxAttempts = 1
		})
		resp, err := client.Stream(context.Background(), basicRequest(), nil)
		if err != nil || resp.Text != "ab" {
			t.Fatalf("got %q, %v; want ab", resp.Text, err)
		}
	})
	t.Run("silent after output ends the call", func(t *testing.T) {
		t.Parallel()
		fake := newFakeProvider(t, reply{end: endHang, events: []string{
			`{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
		}})
		client, _ := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) { c.IdleTimeout = 200 * time.Millisecond })
		resp, err := client.Stream(context.Background(), basicRequest(), nil)
		if !errors.Is(err, ErrInterrupted) || !errors.Is(err, ErrIdleTimeout) {
			t.Fatalf("error %v, want ErrInterrupted wrapping ErrIdleTimeout", err)
		}
		if resp.Text != "Hel" || fake.requestCount() != 1 {
			t.Errorf("partial %q after %d requests", resp.Text, fake.requestCount())
		}
	})
}

func TestMaxCallTimeIsFinal(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{end: endHangBefore})
	client, waits := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) {
		c.MaxCallTime = 200 * time.Millisecond
		c.IdleTimeout = time.Hour
	})
	_, err := client.Stream(context.Background(), basicRequest(), nil)
	if !errors.Is(err, ErrCallTooLong) {
		t.Fatalf("error %v, want ErrCallTooLong", err)
	}
	if Retryable(err) || fake.requestCount() != 1 || len(*waits) != 0 {
		t.Errorf("a timed-out call was retried or reported retryable")
	}
}

// A provider that never stops sending deltas never trips the idle timer:
// the call time cap is what ends it, and the client hangs up.
func TestMaxCallTimeCutsAStreamThatNeverEnds(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{
		pause:   10 * time.Millisecond,
		forever: "data: " + `{"choices":[{"index":0,"delta":{"content":"la"},"finish_reason":null}]}` + "\n\n",
	})
	client, waits := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) {
		c.MaxCallTime = 300 * time.Millisecond
		c.IdleTimeout = time.Hour
	})
	var got collect
	resp, err := client.Stream(context.Background(), basicRequest(), got.add)
	if !errors.Is(err, ErrCallTooLong) {
		t.Fatalf("error %v, want ErrCallTooLong", err)
	}
	if want := "llm: the model call took longer than 300ms"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if errors.Is(err, ErrInterrupted) || Retryable(err) || fake.requestCount() != 1 || len(*waits) != 0 {
		t.Errorf("a call past its time was reported as a broken stream, or retried: %v after %d requests", err, fake.requestCount())
	}
	if got.text() == "" || resp.Text != got.text() {
		t.Errorf("streamed %q, partial %q; want the text that arrived", got.text(), resp.Text)
	}
	if !fake.clientLeft() {
		t.Error("the client kept the connection open after giving up")
	}
}

func TestCancelStopsTheStream(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{end: endHang, events: []string{
		`{"choices":[{"index":0,"delta":{"content":"first"},"finish_reason":null}]}`,
	}})
	client, waits := testClient(t, fake.url(), FlavorOpenAI)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	type result struct {
		resp Response
		err  error
	}
	done := make(chan result, 1)
	var got collect
	go func() {
		resp, err := client.Stream(ctx, basicRequest(), func(d Delta) {
			got.add(d)
			cancel()
		})
		done <- result{resp, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Stream did not return after its context was cancelled")
	}
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", r.err)
	}
	if errors.Is(r.err, ErrInterrupted) || Retryable(r.err) {
		t.Errorf("a cancellation should be reported as such, not as a broken or retryable stream: %v", r.err)
	}
	if got.text() != "first" || r.resp.Text != "first" || fake.requestCount() != 1 || len(*waits) != 0 {
		t.Errorf("streamed %q, partial %q, %d requests", got.text(), r.resp.Text, fake.requestCount())
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, rateLimited(map[string]string{"Retry-After": "30"}))
	client, _ := testClient(t, fake.url(), FlavorOpenAI)
	ctx, cancel := context.WithCancel(context.Background())
	client.sleep = func(context.Context, time.Duration) error {
		cancel()
		return context.Cause(ctx)
	}
	_, err := client.Stream(ctx, basicRequest(), nil)
	if !errors.Is(err, context.Canceled) || fake.requestCount() != 1 {
		t.Errorf("error %v after %d requests, want context.Canceled after 1", err, fake.requestCount())
	}
}
