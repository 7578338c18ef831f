package fakellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Request is one chat-completions request the server received, kept for
// assertions. Treat it as read-only: the server shares it with every caller
// of Requests.
//
// Its JSON form (used by the record file and GET /fakellm/requests) holds
// the index, rule, headers, raw body, prompt tokens and context window;
// unmarshalling it decodes the body again, so the decoded view is restored
// too.
type Request struct {
	// Index is the request's 0-based arrival number (see Match.RequestIndex).
	Index int `json:"index"`
	// Rule is the index of the rule that answered, or -1 for the default
	// reply or the built-in compaction summary. A request refused for its
	// length names the rule whose window refused it.
	Rule int `json:"rule"`
	// RuleName is the answering rule's name, if it has one.
	RuleName string `json:"rule_name,omitempty"`
	// Header holds every request header, Authorization included.
	Header http.Header `json:"header"`
	// Body is the request body exactly as sent.
	Body json.RawMessage `json:"body"`
	// PromptTokens is the server's count of the prompt: about four
	// characters per token of every message's text, every tool call's name
	// and arguments, and every offered tool's name, description and
	// parameters. It is what a context window is checked against, and the
	// usage's prompt_tokens unless a rule overrides that. Computed from Body
	// like the decoded view, and kept in the JSON form for scripts reading
	// a record.
	PromptTokens int `json:"prompt_tokens"`
	// ContextWindow is the window that applied to the request, 0 when
	// unlimited (see Rules.ContextWindow).
	ContextWindow int `json:"context_window,omitempty"`

	// The fields below are decoded from Body.

	Model    string    `json:"-"`
	Messages []Message `json:"-"`
	Tools    []Tool    `json:"-"`
	Stream   bool      `json:"-"`
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool `json:"-"`
	// MaxOutputTokens is the output the request reserves:
	// max_completion_tokens, or max_tokens when that is absent; 0 when it
	// sets neither. Both fields also stay in Extra as sent.
	MaxOutputTokens int `json:"-"`
	// Extra holds the top-level fields not decoded above, such as
	// temperature or prompt_cache_key, as sent.
	Extra map[string]json.RawMessage `json:"-"`
}

// Message is one message of a request's conversation.
type Message struct {
	Role string
	// Content is the message text: the content string, or the text parts
	// of a content array joined by newlines.
	Content string
	// RawContent is the content exactly as sent (string, array or null).
	RawContent       json.RawMessage
	Name             string
	ToolCallID       string
	ToolCalls        []MessageToolCall
	ReasoningContent string
}

// MessageToolCall is a tool call inside an assistant message of a request.
type MessageToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Tool is a tool offered by a request (OpenAI's function tool, flattened).
type Tool struct {
	Type        string
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ContextExceeded reports whether the request did not fit its context
// window, so that the server refused it with context_length_exceeded.
func (r Request) ContextExceeded() bool {
	return r.ContextWindow > 0 && r.PromptTokens+r.MaxOutputTokens > r.ContextWindow
}

// LastUserText is the text of the last message with role "user", or "".
func (r Request) LastUserText() string {
	if m, ok := r.last(func(m Message) bool { return m.Role == "user" }); ok {
		return m.Content
	}
	return ""
}

// LastToolResult is the text of the last message with role "tool", and
// whether there is one.
func (r Request) LastToolResult() (string, bool) {
	m, ok := r.last(func(m Message) bool { return m.Role == "tool" })
	return m.Content, ok
}

// LastIsToolResult reports whether the conversation ends with a tool result.
func (r Request) LastIsToolResult() bool {
	return len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == "tool"
}

// SystemPrompt is the text of the system and developer messages, joined by
// newlines.
func (r Request) SystemPrompt() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == "system" || m.Role == "developer" {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// AssistantMessages counts the assistant messages in the conversation.
func (r Request) AssistantMessages() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// ToolNames lists the names of the offered tools, in request order.
func (r Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

func (r Request) last(want func(Message) bool) (Message, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if want(r.Messages[i]) {
			return r.Messages[i], true
		}
	}
	return Message{}, false
}

// UnmarshalJSON reads the JSON form and decodes the body into the view.
func (r *Request) UnmarshalJSON(data []byte) error {
	type stored Request // same fields, no methods: avoids recursion
	var s stored
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*r = Request(s)
	return r.decodeBody()
}

// The wire shapes of the request body, only as far as the server reads them.
type (
	wireRequest struct {
		Model         string         `json:"model"`
		Messages      []wireMessage  `json:"messages"`
		Tools         []wireTool     `json:"tools"`
		Stream        bool           `json:"stream"`
		StreamOptions *streamOptions `json:"stream_options"`
		// Decoded to be checked and counted; they stay in Extra too.
		MaxCompletionTokens *int `json:"max_completion_tokens"`
		MaxTokens           *int `json:"max_tokens"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	wireMessage struct {
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		Name             string          `json:"name"`
		ToolCallID       string          `json:"tool_call_id"`
		ToolCalls        []wireToolCall  `json:"tool_calls"`
		ReasoningContent string          `json:"reasoning_content"`
	}
	wireToolCall struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	contentPart struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
)

// isDecodedField reports whether a top-level body field has a place of its
// own in Request; every other field goes to Extra.
func isDecodedField(name string) bool {
	switch name {
	case "model", "messages", "tools", "stream", "stream_options":
		return true
	}
	return false
}

// decodeBody fills the decoded view from r.Body.
func (r *Request) decodeBody() error {
	var wire wireRequest
	if err := json.Unmarshal(r.Body, &wire); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &extra); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	for name := range extra {
		if isDecodedField(name) {
			delete(extra, name)
		}
	}
	if len(extra) == 0 {
		extra = nil
	}
	r.Model, r.Stream, r.Extra = wire.Model, wire.Stream, extra
	r.IncludeUsage = wire.StreamOptions != nil && wire.StreamOptions.IncludeUsage
	switch {
	case wire.MaxCompletionTokens != nil:
		r.MaxOutputTokens = max(0, *wire.MaxCompletionTokens)
	case wire.MaxTokens != nil:
		r.MaxOutputTokens = max(0, *wire.MaxTokens)
	default:
		r.MaxOutputTokens = 0
	}
	r.Messages = make([]Message, len(wire.Messages))
	for i, wm := range wire.Messages {
		m, err := wm.decode()
		if err != nil {
			return fmt.Errorf("request body: messages[%d]: %w", i, err)
		}
		r.Messages[i] = m
	}
	r.Tools = make([]Tool, len(wire.Tools))
	for i, wt := range wire.Tools {
		r.Tools[i] = Tool{
			Type:        wt.Type,
			Name:        wt.Function.Name,
			Description: wt.Function.Description,
			Parameters:  wt.Function.Parameters,
		}
	}
	r.PromptTokens = countPromptTokens(r.Messages, r.Tools)
	return nil
}

func (wm wireMessage) decode() (Message, error) {
	text, err := contentText(wm.Content)
	if err != nil {
		return Message{}, err
	}
	m := Message{
		Role:             wm.Role,
		Content:          text,
		RawContent:       wm.Content,
		Name:             wm.Name,
		ToolCallID:       wm.ToolCallID,
		ReasoningContent: wm.ReasoningContent,
	}
	for _, c := range wm.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, MessageToolCall{
			ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments,
		})
	}
	return m, nil
}

// contentText flattens a message content: a string, null, or an array of
// parts whose text parts are joined by newlines (images and the like carry
// no text to match on).
func contentText(raw json.RawMessage) (string, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return "", nil
	}
	switch trimmed[0] {
	case '"':
		var s string
		err := json.Unmarshal(trimmed, &s)
		return s, err
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(trimmed, &parts); err != nil {
			return "", err
		}
		var texts []string
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", errors.New("content must be a string, an array of parts or null")
}
