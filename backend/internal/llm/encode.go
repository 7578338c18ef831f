package llm

import (
	"encoding/json"
	"errors"
	"fmt"
)

// wireOptions is the request body of POST /chat/completions after its
// model and messages, which encodeRequest writes before it. Optional fields
// are pointers or omitempty so that a field a flavor leaves out is absent,
// not zero: strict providers reject unknown or unexpected keys.
type wireOptions struct {
	Tools               []wireTool         `json:"tools,omitempty"`
	ToolChoice          string             `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool              `json:"parallel_tool_calls,omitempty"`
	Stream              bool               `json:"stream,omitempty"`
	StreamOptions       *wireStreamOptions `json:"stream_options,omitempty"`
	Temperature         *float64           `json:"temperature,omitempty"`
	MaxTokens           int                `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	PromptCacheKey      string             `json:"prompt_cache_key,omitempty"`
	Thinking            *wireThinking      `json:"thinking,omitempty"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          wireContent    `json:"content"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
}

// wireContent is a message's content: a plain string, a list of parts (text
// plus images), or null (an assistant turn that only called tools; an empty
// string there is refused by Claude's layer as an empty text block).
type wireContent struct {
	text  *string
	parts []wirePart
}

func (c wireContent) MarshalJSON() ([]byte, error) {
	switch {
	case c.parts != nil:
		return json.Marshal(c.parts)
	case c.text != nil:
		return json.Marshal(*c.text)
	default:
		return []byte("null"), nil
	}
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireFunctionCall `json:"function"`
}

type wireFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptyObjectSchema is offered for tools without parameters: several
// providers reject a function whose parameters are missing.
const emptyObjectSchema = `{"type":"object","properties":{}}`

// EncodedMessage is a Message as one flavor writes it in a request body.
// EncodeMessages makes them; Request.Encoded carries them.
type EncodedMessage struct {
	flavor Flavor
	json   []byte
}

// EncodeMessages writes msgs in the dialect of flavor f, one EncodedMessage
// for each. A conversation grows only at its end, so a caller that keeps
// the encoding of each message can send it with every later request
// (Request.Encoded) instead of having the client write the whole history
// again for each call.
func EncodeMessages(f Flavor, msgs []Message) ([]EncodedMessage, error) {
	flavor, err := ParseFlavor(string(f))
	if err != nil {
		return nil, err
	}
	d := dialectFor(flavor)
	out := make([]EncodedMessage, 0, len(msgs))
	for i, m := range msgs {
		wm, err := encodeMessage(d, m)
		if err != nil {
			return nil, fmt.Errorf("llm: message %d: %w", i, err)
		}
		data, err := json.Marshal(wm)
		if err != nil {
			return nil, fmt.Errorf("llm: message %d: %w", i, err)
		}
		out = append(out, EncodedMessage{flavor: flavor, json: data})
	}
	return out, nil
}

// encodedFor reports whether req's Encoded messages are its Messages
// written for flavor.
func encodedFor(flavor Flavor, req Request) bool {
	if len(req.Encoded) != len(req.Messages) {
		return false
	}
	for _, m := range req.Encoded {
		if m.flavor != flavor {
			return false
		}
	}
	return true
}

// encodeRequest writes req in the dialect d: {"model":…,"messages":[…],…}
// with the options of wireOptions after the messages, as json.Marshal
// writes one struct holding them all. The messages are req.Encoded when
// they were written for d, or req.Messages written now.
func encodeRequest(d dialect, req Request, stream bool) (requestBody, error) {
	if req.Model == "" {
		return requestBody{}, errors.New("llm: request has no model")
	}
	if len(req.Messages) == 0 {
		return requestBody{}, errors.New("llm: request has no messages")
	}
	model, err := json.Marshal(req.Model)
	if err != nil {
		return requestBody{}, err
	}
	opts, err := json.Marshal(requestOptions(d, req, stream))
	if err != nil {
		return requestBody{}, err
	}
	if encodedFor(d.flavor, req) {
		messages := requestBody{messages: req.Encoded}.size()
		if size := len(`{"model":,"messages":[]`) + len(model) + messages + len(opts); size <= maxFlatBody {
			// A small body is written whole, to be sent from one slice.
			flat := appendBodyHead(make([]byte, 0, size), model)
			flat = append(flat, '[')
			for i, m := range req.Encoded {
				if i > 0 {
					flat = append(flat, ',')
				}
				flat = append(flat, m.json...)
			}
			flat = append(flat, ']')
			return requestBody{prefix: appendBodyTail(flat, opts)}, nil
		}
		return requestBody{
			prefix:   append(appendBodyHead(nil, model), '['),
			messages: req.Encoded,
			suffix:   appendBodyTail([]byte{']'}, opts),
		}, nil
	}
	wms := make([]wireMessage, 0, len(req.Messages))
	for i, m := range req.Messages {
		wm, err := encodeMessage(d, m)
		if err != nil {
			return requestBody{}, fmt.Errorf("llm: message %d: %w", i, err)
		}
		wms = append(wms, wm)
	}
	messages, err := json.Marshal(wms)
	if err != nil {
		return requestBody{}, err
	}
	return requestBody{prefix: appendBodyTail(append(appendBodyHead(nil, model), messages...), opts)}, nil
}

// appendBodyHead appends what comes before the messages' list: the model,
// as JSON, and the messages' key.
func appendBodyHead(b, model []byte) []byte {
	b = append(b, `{"model":`...)
	b = append(b, model...)
	return append(b, `,"messages":`...)
}

// appendBodyTail appends what comes after the messages' list: the fields
// of opts, an object in JSON, whose "{" gives way to a comma, or to
// nothing when it has no fields.
func appendBodyTail(b, opts []byte) []byte {
	if len(opts) > len("{}") {
		b = append(b, ',')
	}
	return append(b, opts[1:]...)
}

// requestOptions is everything of req's body but its model and messages.
func requestOptions(d dialect, req Request, stream bool) wireOptions {
	w := wireOptions{Temperature: req.Temperature, Stream: stream}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, encodeTool(t))
	}
	if stream && d.askStreamUsage {
		w.StreamOptions = &wireStreamOptions{IncludeUsage: true}
	}
	if d.promptCacheKey {
		w.PromptCacheKey = req.SessionID
	}
	if d.toolChoiceAuto && len(w.Tools) > 0 {
		parallel := true
		w.ToolChoice = "auto"
		w.ParallelToolCalls = &parallel
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = d.defaultMaxTokens
	}
	if d.thinkingBudget > 0 {
		// Thinking counts in the cap, and Claude refuses thinking of the
		// cap or more, or of fewer than minThinking tokens: under a cap
		// smaller than the budget (a spend budget's), thinking takes half
		// of it, or none.
		thinking := d.thinkingBudget
		if maxTokens > 0 && thinking >= maxTokens {
			thinking = maxTokens / 2
		}
		if thinking >= minThinking {
			w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: thinking}
		}
	}
	if d.maxTokensField == "max_tokens" {
		w.MaxTokens = maxTokens
	} else {
		w.MaxCompletionTokens = maxTokens
	}
	return w
}

func encodeMessage(d dialect, m Message) (wireMessage, error) {
	wm := wireMessage{Role: string(m.Role)}
	switch m.Role {
	case RoleSystem:
		wm.Content.text = &m.Text
	case RoleUser:
		if len(m.Images) == 0 {
			wm.Content.text = &m.Text
			break
		}
		wm.Content.parts = []wirePart{{Type: "text", Text: m.Text}}
		for _, img := range m.Images {
			wm.Content.parts = append(wm.Content.parts, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: img.URL}})
		}
	case RoleAssistant:
		if m.Text != "" || len(m.ToolCalls) == 0 {
			wm.Content.text = &m.Text
		}
		for _, c := range m.ToolCalls {
			wm.ToolCalls = append(wm.ToolCalls, wireToolCall{
				ID:       d.rewriteToolCallID(c.ID),
				Type:     "function",
				Function: wireFunctionCall{Name: c.Name, Arguments: argumentsOrEmptyObject(c.Arguments)},
			})
		}
		if d.echoThinking {
			wm.ReasoningContent = echoedThinking(m)
		}
	case RoleTool:
		if m.ToolCallID == "" {
			return wireMessage{}, errors.New("tool message without tool call id")
		}
		wm.Content.text = &m.Text
		wm.ToolCallID = d.rewriteToolCallID(m.ToolCallID)
	default:
		return wireMessage{}, fmt.Errorf("unknown role %q", m.Role)
	}
	return wm, nil
}

// echoedThinking is the reasoning_content of an assistant turn for a
// provider that wants it back, or nil to leave the field out.
func echoedThinking(m Message) *string {
	switch {
	case m.Thinking != "":
		return &m.Thinking
	case len(m.ToolCalls) > 0:
		placeholder := kimiThinkingPlaceholder
		return &placeholder
	default:
		return nil
	}
}

func (d dialect) rewriteToolCallID(id string) string {
	if d.toolCallID == nil {
		return id
	}
	return d.toolCallID(id)
}

func encodeTool(t ToolSpec) wireTool {
	params := t.Parameters
	if len(params) == 0 {
		params = json.RawMessage(emptyObjectSchema)
	}
	return wireTool{
		Type:     "function",
		Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: params},
	}
}

// argumentsOrEmptyObject keeps providers that parse arguments from choking
// on an empty string written back for a call without arguments.
func argumentsOrEmptyObject(args string) string {
	if args == "" {
		return "{}"
	}
	return args
}
