package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

var (
	// ErrInterrupted wraps a failure that happened after output had reached
	// the callback. The client never retries it (the caller cannot unsee
	// text); Retryable tells whether its cause is worth a fresh attempt.
	ErrInterrupted = errors.New("llm: stream broke after output was delivered")
	// ErrIdleTimeout: the provider sent nothing for longer than the idle
	// timeout.
	ErrIdleTimeout = errors.New("llm: provider went silent past the idle timeout")
	// ErrCallTooLong: the whole call, retries and streaming included, took
	// longer than Limits.MaxCallTime. The error names the limit.
	ErrCallTooLong = errors.New("llm: the model call took too long")
	// ErrOutputTooLarge: the answer (its text, thinking and tool calls)
	// grew past Limits.MaxOutputBytes. The error names the limit.
	ErrOutputTooLarge = errors.New("llm: the model's answer is too large")
	// ErrTruncated: the stream ended before the provider said it was done.
	ErrTruncated = errors.New("llm: stream ended before the completion did")
)

// limitError is a limit's sentinel error with the limit spelled out.
type limitError struct {
	kind error
	text string
}

func (e *limitError) Error() string { return e.text }
func (e *limitError) Unwrap() error { return e.kind }

func callTooLong(limit time.Duration) error {
	return &limitError{kind: ErrCallTooLong, text: "llm: the model call took longer than " + limit.String()}
}

func outputTooLarge(limit int64) error {
	return &limitError{kind: ErrOutputTooLarge, text: "llm: the model's answer exceeded " + formatBytes(limit)}
}

// formatBytes writes a size as people set it: in MiB or KiB when it is a
// whole number of them.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// APIError is an error the provider answered with, as an HTTP status or as
// an error object inside a stream (then Status is the stream's 200).
type APIError struct {
	Status int
	// Code is the provider's error code or, lacking one, its error type.
	Code string
	// Message is the provider's own explanation.
	Message string
	// RetryAfter is how long the provider asked to wait, zero if it did not.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	if e.Status == http.StatusOK {
		b.WriteString("llm: provider error in stream")
	} else {
		fmt.Fprintf(&b, "llm: provider answered %d", e.Status)
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Retryable reports whether the same request may succeed later: rate limits,
// server errors and, for errors inside a stream, codes that say so.
func (e *APIError) Retryable() bool {
	switch {
	case e.Status == http.StatusTooManyRequests, e.Status == http.StatusRequestTimeout:
		return true
	case e.Status >= 500:
		return true
	case e.Status == http.StatusOK:
		code := strings.ToLower(e.Code)
		for _, transient := range []string{"overloaded", "server_error", "rate_limit", "timeout", "unavailable"} {
			if strings.Contains(code, transient) {
				return true
			}
		}
	}
	return false
}

// Retryable reports whether sending the same request again may succeed:
// rate limits, server errors, dropped or refused connections, a silent
// provider, a truncated stream. Cancellation, the limits of a call (its
// time, the size of its answer) and client errors (4xx) are final. For an
// error wrapping ErrInterrupted it speaks of the cause; the caller decides
// whether to redo a step whose partial output it has already shown.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	var apiErr *APIError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.Retryable()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrCallTooLong), errors.Is(err, ErrOutputTooLarge):
		return false
	case errors.Is(err, ErrIdleTimeout), errors.Is(err, ErrTruncated):
		return true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return dnsErr.IsTimeout || dnsErr.IsTemporary
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// maxErrorMessage bounds what a provider's error body contributes to an
// error string (some answer with a whole HTML page).
const maxErrorMessage = 2000

// newAPIError reads a provider error body. The API key is scrubbed from the
// message, since some providers quote the key they rejected.
func newAPIError(status int, body []byte, header http.Header, apiKey string, now time.Time) *APIError {
	code, message := parseErrorBody(body)
	if message == "" {
		message = http.StatusText(status)
	}
	if apiKey != "" {
		message = strings.ReplaceAll(message, apiKey, "[redacted]")
	}
	if len(message) > maxErrorMessage {
		message = message[:maxErrorMessage] + "…"
	}
	e := &APIError{Status: status, Code: code, Message: message}
	if header != nil {
		e.RetryAfter, _ = parseRetryAfter(header, now)
	}
	return e
}

// parseErrorBody finds the code and message in the error bodies providers
// send: {"error": {"message", "code", "type"}} (OpenAI and most others),
// {"error": "text"} (Ollama), {"message": "text" | object, "type", "code"}
// (Mistral), {"detail": …} (FastAPI servers), or plain text.
func parseErrorBody(body []byte) (code, message string) {
	body = bytes.TrimSpace(body)
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    json.RawMessage `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if len(body) == 0 || body[0] != '{' || jsoncheck.Depth(body, jsoncheck.MaxDepth) != nil || json.Unmarshal(body, &env) != nil {
		return "", string(body)
	}
	if s, ok := jsonString(env.Error); ok {
		return "", s
	}
	if len(env.Error) > 0 && env.Error[0] == '{' {
		var inner struct {
			Message  json.RawMessage `json:"message"`
			Type     json.RawMessage `json:"type"`
			Code     json.RawMessage `json:"code"`
			Metadata struct {
				Raw string `json:"raw"`
			} `json:"metadata"`
		}
		if json.Unmarshal(env.Error, &inner) == nil {
			message = jsonText(inner.Message)
			// Routers wrap the upstream provider's answer here; it is the
			// part that says what is actually wrong.
			if inner.Metadata.Raw != "" {
				message += ": " + inner.Metadata.Raw
			}
			return firstSet(jsonText(inner.Code), jsonText(inner.Type)), message
		}
	}
	message = firstSet(jsonText(env.Message), jsonText(env.Detail))
	return firstSet(jsonText(env.Code), jsonText(env.Type)), message
}

// jsonText is a JSON value as text: a string unquoted, null as nothing, and
// anything else (a numeric code, Mistral's validation details, tool
// arguments sent as an object) as compact JSON.
func jsonText(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) != nil {
		return string(raw)
	}
	return compact.String()
}

func asAPIError(err error) *APIError {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr
	}
	return nil
}
