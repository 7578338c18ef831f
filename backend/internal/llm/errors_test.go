package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseErrorBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		body        string
		wantCode    string
		wantMessage string
	}{
		{
			name:        "openai",
			body:        `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`,
			wantCode:    "insufficient_quota",
			wantMessage: "You exceeded your current quota.",
		},
		{
			name:        "type without code",
			body:        `{"error":{"message":"The engine is currently overloaded, please try again later","type":"engine_overloaded_error"}}`,
			wantCode:    "engine_overloaded_error",
			wantMessage: "The engine is currently overloaded, please try again later",
		},
		{
			name:        "mistral string message and numeric code",
			body:        `{"object":"error","message":"Tool call id was call_98660886 but must be a-z, A-Z, 0-9, with a length of 9.","type":"invalid_function_call","param":null,"code":"3280"}`,
			wantCode:    "3280",
			wantMessage: "Tool call id was call_98660886 but must be a-z, A-Z, 0-9, with a length of 9.",
		},
		{
			name:        "mistral validation details",
			body:        `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]},"type":"invalid_request_error","param":null,"code":null}`,
			wantCode:    "invalid_request_error",
			wantMessage: `{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]}`,
		},
		{
			name:        "router wrapping the upstream answer",
			body:        `{"error":{"message":"Provider returned error","code":400,"metadata":{"raw":"thinking is enabled but reasoning_content is missing"}}}`,
			wantCode:    "400",
			wantMessage: "Provider returned error: thinking is enabled but reasoning_content is missing",
		},
		{
			name:        "ollama",
			body:        `{"error":"model \"llama9\" not found, try pulling it first"}`,
			wantMessage: `model "llama9" not found, try pulling it first`,
		},
		{
			name:        "fastapi detail",
			body:        `{"detail":"Not Found"}`,
			wantMessage: "Not Found",
		},
		{
			name:        "plain text",
			body:        "upstream connect error\n",
			wantMessage: "upstream connect error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, message := parseErrorBody([]byte(tt.body))
			if code != tt.wantCode || message != tt.wantMessage {
				t.Errorf("got (%q, %q)\nwant (%q, %q)", code, message, tt.wantCode, tt.wantMessage)
			}
		})
	}
}

func TestNewAPIError(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("Retry-After", "3")
	e := newAPIError(http.StatusBadGateway, nil, h, "", time.Now())
	if e.Message != "Bad Gateway" || e.RetryAfter != 3*time.Second {
		t.Errorf("empty body: got %+v", e)
	}
	long := newAPIError(http.StatusBadGateway, []byte(strings.Repeat("x", 10_000)), nil, "", time.Now())
	if len(long.Message) > maxErrorMessage+len("…") {
		t.Errorf("message of %d bytes kept whole", len(long.Message))
	}
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want bool
	}{
		{&APIError{Status: 429}, true},
		{&APIError{Status: 408}, true},
		{&APIError{Status: 500}, true},
		{&APIError{Status: 529}, true},
		{&APIError{Status: 400}, false},
		{&APIError{Status: 401}, false},
		{&APIError{Status: 404}, false},
		{&APIError{Status: 422}, false},
		{&APIError{Status: 200, Code: "server_error"}, true},
		{&APIError{Status: 200, Code: "invalid_request_error"}, false},
		{fmt.Errorf("wrapped: %w", &APIError{Status: 503}), true},
		{fmt.Errorf("%w: %w", ErrInterrupted, &APIError{Status: 503}), true},
		{fmt.Errorf("%w: %w", ErrInterrupted, &APIError{Status: 400}), false},
		{syscall.ECONNRESET, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{io.ErrUnexpectedEOF, true},
		{ErrIdleTimeout, true},
		{ErrTruncated, true},
		{ErrCallTooLong, false},
		{callTooLong(time.Minute), false},
		{outputTooLarge(1 << 20), false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{errors.New("llm: malformed stream chunk"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := Retryable(tt.err); got != tt.want {
			t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestAPIErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  APIError
		want string
	}{
		{APIError{Status: 429, Code: "rate_limit_exceeded", Message: "slow down"}, "llm: provider answered 429 (rate_limit_exceeded): slow down"},
		{APIError{Status: 502}, "llm: provider answered 502"},
		{APIError{Status: 200, Code: "server_error", Message: "oops"}, "llm: provider error in stream (server_error): oops"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
