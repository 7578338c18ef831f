package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

var okStream = reply{done: true, events: []string{
	`{"choices":[{"index":0,"delta":{"content":"fine"},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
}}

func rateLimited(header map[string]string) reply {
	return reply{
		status: http.StatusTooManyRequests,
		header: header,
		body:   `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
	}
}

func TestRetriesBeforeAnyOutput(t *testing.T) {
	t.Parallel()
	httpDate := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name     string
		first    reply
		checkGap func(t *testing.T, wait time.Duration)
	}{
		{
			name:  "429 with Retry-After in seconds",
			first: rateLimited(map[string]string{"Retry-After": "7"}),
			checkGap: func(t *testing.T, wait time.Duration) {
				if wait != 7*time.Second {
					t.Errorf("waited %v, want the 7s the provider asked for", wait)
				}
			},
		},
		{
			name:  "429 with Retry-After as an HTTP date",
			first: rateLimited(map[string]string{"Retry-After": httpDate}),
			checkGap: func(t *testing.T, wait time.Duration) {
				// The date has whole seconds and was written a moment ago.
				if wait < 20*time.Second || wait > 30*time.Second {
					t.Errorf("waited %v, want about 30s", wait)
				}
			},
		},
		{
			name:  "429 with retry-after-ms",
			first: rateLimited(map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}),
			checkGap: func(t *testing.T, wait time.Duration) {
				if wait != 250*time.Millisecond {
					t.Errorf("waited %v, want 250ms", wait)
				}
			},
		},
		{
			name:  "503 without Retry-After backs off",
			first: reply{status: http.StatusServiceUnavailable, body: "upstream unavailable"},
			checkGap: func(t *testing.T, wait time.Duration) {
				if wait < 500*time.Microsecond || wait > time.Millisecond {
					t.Errorf("waited %v, want within the first backoff step [0.5ms, 1ms]", wait)
				}
			},
		},
		{
			name:  "kimi engine overloaded",
			first: reply{status: http.StatusTooManyRequests, body: `{"error":{"message":"The engine is currently overloaded, please try again later","type":"engine_overloaded_error"}}`},
		},
		{
			name:  "connection closed before the first byte",
			first: reply{end: endHijack},
		},
		{
			name: "transient error object as the first event",
			first: reply{done: true, events: []string{
				`{"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}`,
			}},
		},
		{
			name:  "stream cut before any output",
			first: reply{events: []string{`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeProvider(t, tt.first, okStream)
			client, waits := testClient(t, fake.url(), FlavorOpenAI)
			var got collect
			resp, err := client.Stream(context.Background(), basicRequest(), got.add)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if resp.Text != "fine" || got.text() != "fine" {
				t.Errorf("response %q, streamed %q; want fine twice", resp.Text, got.text())
			}
			if fake.requestCount() != 2 {
				t.Errorf("%d requests, want 2", fake.requestCount())
			}
			if len(*waits) != 1 {
				t.Fatalf("waited %d times, want once", len(*waits))
			}
			if tt.checkGap != nil {
				tt.checkGap(t, (*waits)[0])
			}
		})
	}
}

func TestServerErrorsExhaustAttempts(t *testing.T) {
	t.Parallel()
	fail := reply{status: http.StatusInternalServerError, body: `{"error":{"message":"internal failure","type":"server_error"}}`}
	fake := newFakeProvider(t, fail, fail, fail)
	client, waits := testClient(t, fake.url(), FlavorOpenAI, func(c *Config) { c.MaxAttempts = 3 })
	_, err := client.Stream(context.Background(), basicRequest(), nil)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusInternalServerError {
		t.Fatalf("error %v, want an *APIError with status 500", err)
	}
	if !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "internal failure") {
		t.Errorf("error %q should name the status and the provider's message", err)
	}
	if !Retryable(err) {
		t.Errorf("a 500 should be reported retryable")
	}
	if fake.requestCount() != 3 || len(*waits) != 2 {
		t.Errorf("%d requests and %d waits, want 3 and 2", fake.requestCount(), len(*waits))
	}
	// Backoff doubles: the second wait is drawn from [1ms, 2ms].
	if w := (*waits)[1]; w < time.Millisecond || w > 2*time.Millisecond {
		t.Errorf("second wait %v, want within [1ms, 2ms]", w)
	}
}

func TestClientErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{
		status: http.StatusBadRequest,
		header: map[string]string{"Content-Type": "application/json"},
		body:   `{"error":{"message":"Invalid schema for function 'read_file': 'string' is not of type 'object'.","type":"invalid_request_error","param":"tools[0].function.parameters","code":"invalid_function_parameters"}}`,
	})
	client, waits := testClient(t, fake.url(), FlavorOpenAI)
	_, err := client.Stream(context.Background(), basicRequest(), nil)
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v is not an *APIError", err)
	}
	want := &APIError{
		Status:  http.StatusBadRequest,
		Code:    "invalid_function_parameters",
		Message: "Invalid schema for function 'read_file': 'string' is not of type 'object'.",
	}
	if !reflect.DeepEqual(apiErr, want) {
		t.Errorf("got %+v\nwant %+v", apiErr, want)
	}
	if Retryable(err) || fake.requestCount() != 1 || len(*waits) != 0 {
		t.Errorf("a 400 was retried: %d requests, %d waits", fake.requestCount(), len(*waits))
	}
}

func TestRetryAfterBeyondMaxDelayGoesBackToCaller(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, rateLimited(map[string]string{"Retry-After": "3600"}))
	client, waits := testClient(t, fake.url(), FlavorOpenAI)
	_, err := client.Stream(context.Background(), basicRequest(), nil)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.RetryAfter != time.Hour {
		t.Fatalf("error %v, want an *APIError with RetryAfter 1h", err)
	}
	if fake.requestCount() != 1 || len(*waits) != 0 {
		t.Errorf("%d requests and %d waits, want the error back at once", fake.requestCount(), len(*waits))
	}
}

func TestDroppedStreamAfterOutputIsNotRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		reply     reply
		wantCause error
	}{
		{
			name: "connection dropped",
			reply: reply{end: endAbort, events: []string{
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
			}},
		},
		{
			name: "stream closed without finishing",
			reply: reply{events: []string{
				`{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
			}},
			wantCause: ErrTruncated,
		},
		{
			name: "transient error object after output",
			reply: reply{done: true, events: []string{
				`{"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`,
				`{"error":{"message":"overloaded","type":"overloaded_error"}}`,
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := newFakeProvider(t, tt.reply, okStream)
			client, waits := testClient(t, fake.url(), FlavorOpenAI)
			var got collect
			resp, err := client.Stream(context.Background(), basicRequest(), got.add)
			if !errors.Is(err, ErrInterrupted) {
				t.Fatalf("error %v, want ErrInterrupted", err)
			}
			if tt.wantCause != nil && !errors.Is(err, tt.wantCause) {
				t.Errorf("error %v, want it to wrap %v", err, tt.wantCause)
			}
			if !Retryable(err) {
				t.Errorf("the cause of %v is transient and should be reported retryable", err)
			}
			if fake.requestCount() != 1 || len(*waits) != 0 {
				t.Errorf("%d requests, %d waits: output was delivered, so no retry", fake.requestCount(), len(*waits))
			}
			if resp.Text != "Hel" || got.text() != "Hel" {
				t.Errorf("partial response %q, streamed %q; want Hel", resp.Text, got.text())
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	client, waits := testClient(t, "http://"+addr+"/v1", FlavorOpenAI, func(c *Config) { c.MaxAttempts = 2 })
	_, err = client.Stream(context.Background(), basicRequest(), nil)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("error %v, want connection refused", err)
	}
	if !Retryable(err) || len(*waits) != 1 {
		t.Errorf("retryable=%v after %d waits; want a retried, retryable failure", Retryable(err), len(*waits))
	}
}

func TestAPIKeyStaysSecret(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t, reply{
		status: http.StatusUnauthorized,
		body:   `{"error":{"message":"Incorrect API key provided: sk-test-secret. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`,
	})
	client, _ := testClient(t, fake.url(), FlavorOpenAI)
	_, err := client.Stream(context.Background(), basicRequest(), nil)
	if err == nil {
		t.Fatal("want an error")
	}
	cfg := Config{BaseURL: fake.url(), APIKey: "sk-test-secret"}
	for _, s := range []string{
		err.Error(),
		fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg),
		fmt.Sprint(client), fmt.Sprintf("%+v", client),
	} {
		if strings.Contains(s, "sk-test-secret") {
			t.Errorf("API key leaked into %q", s)
		}
	}
	if !strings.Contains(err.Error(), "Incorrect API key provided: [redacted]") {
		t.Errorf("error %q lost the provider's message", err)
	}
}

func TestBackoffStaysInItsBand(t *testing.T) {
	t.Parallel()
	p := retryPolicy{maxAttempts: 10, base: 100 * time.Millisecond, maxDelay: time.Second}
	tests := []struct {
		retry  int
		lo, hi time.Duration
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{4, 400 * time.Millisecond, 800 * time.Millisecond},
		{5, 500 * time.Millisecond, time.Second},
		{64, 500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := p.backoff(tt.retry)
			if d < tt.lo || d > tt.hi {
				t.Fatalf("retry %d waited %v, want within [%v, %v]", tt.retry, d, tt.lo, tt.hi)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("retry %d always waits %v: no jitter", tt.retry, p.backoff(tt.retry))
		}
	}
}

func TestRetryDecision(t *testing.T) {
	t.Parallel()
	p := retryPolicy{maxAttempts: 3, base: time.Millisecond, maxDelay: time.Minute}
	limited := &APIError{Status: 429, RetryAfter: 5 * time.Second}
	shortCtx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cancelled, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	tests := []struct {
		name    string
		ctx     context.Context
		attempt int
		err     error
		want    bool
	}{
		{"rate limited", context.Background(), 1, limited, true},
		{"last attempt", context.Background(), 3, limited, false},
		{"bad request", context.Background(), 1, &APIError{Status: 400}, false},
		{"wait outlasts the deadline", shortCtx, 1, limited, false},
		{"cancelled", cancelled, 1, limited, false},
		{"reset connection", context.Background(), 1, fmt.Errorf("read: %w", syscall.ECONNRESET), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, got := p.wait(tt.ctx, tt.attempt, tt.err); got != tt.want {
				t.Errorf("retry = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After-Ms": "20", "Retry-After": "9"}, 20 * time.Millisecond, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "-3"}, 0, false},
		{map[string]string{}, 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		got, ok := parseRetryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%v: got %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}
