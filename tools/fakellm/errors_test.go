package fakellm_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

func TestHTTPErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		err             fakellm.HTTPError
		wantStatus      int
		wantContentType string
		wantRetryAfter  string
		wantBody        string // exact body, or "" to check the OpenAI shape
		wantMessage     string
		wantType        string
	}{
		{
			name:            "rate limited with Retry-After",
			err:             fakellm.HTTPError{Status: 429, Message: "slow down", RetryAfter: "2"},
			wantStatus:      429,
			wantContentType: "application/json",
			wantRetryAfter:  "2",
			wantMessage:     "slow down",
			wantType:        "rate_limit_error",
		},
		{
			name:            "server error with the status text",
			err:             fakellm.HTTPError{Status: 500},
			wantStatus:      500,
			wantContentType: "application/json",
			wantMessage:     "Internal Server Error",
			wantType:        "server_error",
		},
		{
			name:            "verbatim text body",
			err:             fakellm.HTTPError{Status: 502, Body: "<html>bad gateway</html>"},
			wantStatus:      502,
			wantContentType: "text/plain; charset=utf-8",
			wantBody:        "<html>bad gateway</html>",
		},
		{
			name:            "verbatim JSON body",
			err:             fakellm.HTTPError{Status: 400, Body: `{"error": {"message": "context too long", "code": "context_length_exceeded"}}`},
			wantStatus:      400,
			wantContentType: "application/json",
			wantBody:        `{"error": {"message": "context too long", "code": "context_length_exceeded"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{Error: &tt.err}}}})
			for _, stream := range []bool{false, true} {
				b := userBody("hi")
				b["stream"] = stream
				resp := post(t, t.Context(), srv, b)
				data, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != tt.wantStatus {
					t.Errorf("stream=%t: status = %d, want %d", stream, resp.StatusCode, tt.wantStatus)
				}
				if got := resp.Header.Get("Content-Type"); got != tt.wantContentType {
					t.Errorf("stream=%t: Content-Type = %q, want %q", stream, got, tt.wantContentType)
				}
				if got := resp.Header.Get("Retry-After"); got != tt.wantRetryAfter {
					t.Errorf("stream=%t: Retry-After = %q, want %q", stream, got, tt.wantRetryAfter)
				}
				if tt.wantBody != "" {
					if string(data) != tt.wantBody {
						t.Errorf("stream=%t: body = %q, want %q", stream, data, tt.wantBody)
					}
					continue
				}
				var e struct {
					Error struct{ Message, Type string }
				}
				if err := json.Unmarshal(data, &e); err != nil {
					t.Fatalf("stream=%t: error body is not JSON: %v: %s", stream, err, data)
				}
				if e.Error.Message != tt.wantMessage || e.Error.Type != tt.wantType {
					t.Errorf("stream=%t: error = %+v, want message %q type %q", stream, e.Error, tt.wantMessage, tt.wantType)
				}
			}
		})
	}
}

// TestFailOnceThenSucceed is the retry script: the first attempt is rate
// limited, the retry gets the answer.
func TestFailOnceThenSucceed(t *testing.T) {
	t.Parallel()
	srv := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Name: "throttle", Times: 1, Reply: fakellm.Reply{Error: &fakellm.HTTPError{Status: 429, RetryAfter: "1"}}},
		{Name: "answer", Reply: fakellm.Reply{Text: "finally"}},
	}})
	resp := post(t, t.Context(), srv, userBody("hi"))
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("first attempt: status %d, Retry-After %q; want 429 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := completeText(t, srv, userBody("hi")); got != "finally" {
		t.Errorf("retry: text = %q, want finally", got)
	}
	if s := streamChat(t, srv, userBody("hi")); s.text != "finally" {
		t.Errorf("later streamed request: text = %q, want finally", s.text)
	}
}
