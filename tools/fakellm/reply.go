package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// compiledReply is a checked Reply. Text fields still hold placeholders;
// render fills them for one request.
type compiledReply struct {
	text                  string
	reasoning             string
	toolCalls             []compiledToolCall
	finishReason          string
	usage                 Usage
	chunkSize             int
	chunkDelay            time.Duration
	initialDelay          time.Duration
	disconnectAfterChunks int
	err                   *HTTPError
}

type compiledToolCall struct {
	id   string
	name string
	// arguments is compact JSON, or the raw text when raw is set.
	arguments string
	raw       bool
}

// compileReply checks r; field names in errors start with prefix ("reply"
// inside a rule, "default" for the default reply).
func compileReply(prefix string, r Reply) (compiledReply, error) {
	field := func(name string) string { return prefix + "." + name }
	c := compiledReply{
		text:                  r.Text,
		reasoning:             r.Reasoning,
		finishReason:          r.FinishReason,
		usage:                 r.Usage,
		chunkSize:             r.ChunkSize,
		disconnectAfterChunks: r.DisconnectAfterChunks,
	}
	if c.chunkSize < 0 {
		return c, fieldErrorf(field("chunk_size"), "must not be negative, got %d", r.ChunkSize)
	}
	if c.chunkSize == 0 {
		c.chunkSize = DefaultChunkSize
	}
	if c.disconnectAfterChunks < 0 {
		return c, fieldErrorf(field("disconnect_after_chunks"), "must not be negative, got %d", r.DisconnectAfterChunks)
	}
	var err error
	if c.chunkDelay, err = parseDelay(field("chunk_delay"), r.ChunkDelay); err != nil {
		return c, err
	}
	if c.initialDelay, err = parseDelay(field("initial_delay"), r.InitialDelay); err != nil {
		return c, err
	}
	if err := checkUsage(field("usage"), r.Usage); err != nil {
		return c, err
	}
	if err := checkPlaceholders(field("text"), r.Text); err != nil {
		return c, err
	}
	if err := checkPlaceholders(field("reasoning"), r.Reasoning); err != nil {
		return c, err
	}
	for i, call := range r.ToolCalls {
		cc, err := compileToolCall(field(fmt.Sprintf("tool_calls[%d]", i)), call)
		if err != nil {
			return c, err
		}
		c.toolCalls = append(c.toolCalls, cc)
	}
	if r.Error != nil {
		if err := checkHTTPError(field("error"), r); err != nil {
			return c, err
		}
		e := *r.Error
		c.err = &e
	}
	return c, nil
}

func compileToolCall(field string, call ToolCall) (compiledToolCall, error) {
	c := compiledToolCall{id: call.ID, name: call.Name}
	if call.Name == "" {
		return c, fieldErrorf(field+".name", "is required")
	}
	switch {
	case len(call.Arguments) > 0 && call.RawArguments != "":
		return c, fieldErrorf(field, "set arguments or raw_arguments, not both")
	case call.RawArguments != "":
		c.arguments, c.raw = call.RawArguments, true
		return c, checkPlaceholders(field+".raw_arguments", call.RawArguments)
	case len(call.Arguments) > 0:
		trimmed := bytes.TrimSpace(call.Arguments)
		if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
			return c, fieldErrorf(field+".arguments", "must be a JSON object, got %s", call.Arguments)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, trimmed); err != nil {
			return c, &fieldError{field: field + ".arguments", err: err}
		}
		c.arguments = compact.String()
		return c, checkPlaceholders(field+".arguments", c.arguments)
	default:
		c.arguments = "{}"
		return c, nil
	}
}

func checkHTTPError(field string, r Reply) error {
	if s := r.Error.Status; s < 400 || s > 599 {
		return fieldErrorf(field+".status", "must be an HTTP error status (400-599), got %d", s)
	}
	if r.Text != "" || r.Reasoning != "" || len(r.ToolCalls) > 0 || r.FinishReason != "" ||
		r.Usage != (Usage{}) || r.DisconnectAfterChunks != 0 {
		return fieldErrorf(field, "an error reply cannot also have text, reasoning, tool_calls, finish_reason, usage or disconnect_after_chunks")
	}
	return nil
}

func checkUsage(field string, u Usage) error {
	counts := []struct {
		name  string
		value int
	}{
		{"prompt_tokens", u.PromptTokens},
		{"completion_tokens", u.CompletionTokens},
		{"total_tokens", u.TotalTokens},
		{"cached_tokens", u.CachedTokens},
		{"reasoning_tokens", u.ReasoningTokens},
	}
	for _, c := range counts {
		if c.value < 0 {
			return fieldErrorf(field+"."+c.name, "must not be negative, got %d", c.value)
		}
	}
	return nil
}

func parseDelay(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fieldErrorf(field, "want a Go duration such as \"20ms\": %v", err)
	}
	if d < 0 {
		return 0, fieldErrorf(field, "must not be negative, got %q", s)
	}
	return d, nil
}
