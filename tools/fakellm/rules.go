package fakellm

import "encoding/json"

// DefaultModel is the model id the server advertises when Rules.Model is
// empty.
const DefaultModel = "fake-model"

// DefaultChunkSize is how many characters (runes) of text, reasoning or tool
// arguments go into one streamed chunk when a reply does not say.
const DefaultChunkSize = 8

// Rules is the whole configuration of a Server. It is what a rules file
// holds; the JSON names are the ones documented in docs/fakellm.md.
type Rules struct {
	// Model is the id listed by GET /v1/models (DefaultModel when empty).
	// Answers echo the model the request asked for, whatever this says.
	Model string `json:"model,omitempty"`
	// Default answers requests no rule matches. Nil means the built-in
	// reply: a short text saying no rule matched, echoing the last user
	// message.
	Default *Reply `json:"default,omitempty"`
	// ContextWindow is the model's context length in tokens, as the server
	// counts them (Request.PromptTokens): a request whose prompt plus
	// requested output exceeds it is refused with OpenAI's 400
	// context_length_exceeded error. Zero means unlimited. A rule's own
	// ContextWindow replaces it for the requests that rule answers.
	ContextWindow int `json:"context_window,omitempty"`
	// Rules are tried in order; the first one that matches answers.
	Rules []Rule `json:"rules"`
}

// Rule pairs a condition with the reply it produces.
type Rule struct {
	// Name shows up in errors and in recorded requests; optional.
	Name string `json:"name,omitempty"`
	// Match is the condition; every field that is set must hold. The zero
	// Match matches every request but compaction requests (see
	// Match.Compaction).
	Match Match `json:"match,omitzero"`
	// Times limits the rule to its first Times matches; after that it is
	// skipped as if it did not match. Zero means no limit.
	Times int `json:"times,omitempty"`
	// ContextWindow, when positive, replaces Rules.ContextWindow for the
	// requests this rule answers, so that one model (matched by name) or
	// one step can have a small window. A refused request does not use up
	// one of the rule's Times.
	ContextWindow int `json:"context_window,omitempty"`
	// Reply is what the server answers when the rule is chosen.
	Reply Reply `json:"reply"`
}

// Match is a condition on a request. Text comparisons are case-sensitive
// (use "(?i)" in a regexp to ignore case). An empty field is not checked.
type Match struct {
	// UserContains must be a substring of the last user message.
	UserContains string `json:"user_contains,omitempty"`
	// UserRegexp must match the last user message (Go regexp syntax).
	UserRegexp string `json:"user_regexp,omitempty"`
	// ToolResultContains must be a substring of the last tool result (the
	// content of the last message with role "tool").
	ToolResultContains string `json:"tool_result_contains,omitempty"`
	// ToolResultRegexp must match the last tool result.
	ToolResultRegexp string `json:"tool_result_regexp,omitempty"`
	// LastIsToolResult, when set, requires the last message to be (true) or
	// not to be (false) a tool result.
	LastIsToolResult *bool `json:"last_is_tool_result,omitempty"`
	// ToolsOffered lists tool names that must all be in the request's tools.
	ToolsOffered []string `json:"tools_offered,omitempty"`
	// Model must equal the model the request asks for.
	Model string `json:"model,omitempty"`
	// SystemContains must be a substring of the system prompt (the system
	// and developer messages joined by newlines).
	SystemContains string `json:"system_contains,omitempty"`
	// RequestIndex must equal the 0-based number of chat requests the
	// server received before this one (since it started or was Reset).
	RequestIndex *int `json:"request_index,omitempty"`
	// AssistantMessages must equal the number of assistant messages already
	// in the conversation: 0 on the first step of a run, 1 after the model
	// answered once, and so on. Unlike RequestIndex it does not depend on
	// what other conversations the server has seen.
	AssistantMessages *int `json:"assistant_messages,omitempty"`
	// Compaction, when set, makes the rule answer compaction requests (see
	// Request.IsCompaction) and only them. Rules without it never see a
	// compaction request, so a catch-all rule cannot take one; when no
	// compaction rule matches, the built-in summary answers.
	Compaction bool `json:"compaction,omitempty"`
}

// Reply is what the server answers. It is either an answer (any of Text,
// Reasoning and ToolCalls, possibly all empty) or an Error.
//
// Text, Reasoning and tool-call arguments may contain the placeholders
// {{last_user}}, {{last_tool_result}}, {{model}}, {{request_index}} and
// {{summary}} (the built-in summary of a compaction request, empty for any
// other request).
type Reply struct {
	// Text is the assistant's content.
	Text string `json:"text,omitempty"`
	// Reasoning is sent as reasoning_content, before the text.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls the assistant asks for, in order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason overrides the finish reason, which is otherwise
	// "tool_calls" when there are tool calls and "stop" when not.
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage overrides the estimated token counts field by field.
	Usage Usage `json:"usage,omitzero"`
	// ChunkSize is how many characters go into one streamed chunk
	// (DefaultChunkSize when zero).
	ChunkSize int `json:"chunk_size,omitempty"`
	// ChunkDelay is a Go duration ("20ms") waited between streamed chunks.
	ChunkDelay string `json:"chunk_delay,omitempty"`
	// InitialDelay is a Go duration waited before the response starts,
	// before the status line, so it also delays errors.
	InitialDelay string `json:"initial_delay,omitempty"`
	// DisconnectAfterChunks, when positive, makes the server drop the
	// connection after sending that many streamed chunks, without a finish
	// reason or [DONE]. A non-streaming request gets no response at all.
	DisconnectAfterChunks int `json:"disconnect_after_chunks,omitempty"`
	// Error, when set, answers with an HTTP error instead.
	Error *HTTPError `json:"error,omitempty"`
}

// ToolCall is one tool call in a reply.
type ToolCall struct {
	// ID is the call id; when empty the server numbers calls call_1,
	// call_2, ... in the order it emits them (reset by Server.Reset).
	ID string `json:"id,omitempty"`
	// Name is the function name; required.
	Name string `json:"name"`
	// Arguments is a JSON object, sent compacted as the arguments string.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// RawArguments is sent verbatim instead of Arguments, for scripting
	// malformed arguments. At most one of the two may be set; with
	// neither, the arguments are "{}".
	RawArguments string `json:"raw_arguments,omitempty"`
}

// Usage overrides token counts. A zero field keeps the server's estimate
// (about four characters per token); TotalTokens defaults to prompt plus
// completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	TotalTokens      int `json:"total_tokens,omitempty"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
}

// HTTPError is a scripted HTTP failure.
type HTTPError struct {
	// Status is the HTTP status code, 400 to 599.
	Status int `json:"status"`
	// Message goes into an OpenAI-style body {"error": {"message": ...}}.
	// When empty, the status text is used.
	Message string `json:"message,omitempty"`
	// Body, when set, is sent verbatim instead of the OpenAI-style body.
	Body string `json:"body,omitempty"`
	// RetryAfter, when set, is sent as the Retry-After header ("2", or an
	// HTTP date).
	RetryAfter string `json:"retry_after,omitempty"`
}
