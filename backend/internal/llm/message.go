package llm

import (
	"encoding/base64"
	"encoding/json"
)

// Role says who speaks a Message.
type Role string

// The roles of a chat-completions conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Request is one model call: the whole conversation so far plus the tools the
// model may call. It says nothing about any provider; the client's Flavor
// decides how it is written on the wire.
type Request struct {
	Model    string
	Messages []Message
	Tools    []ToolSpec
	// SessionID is sent as prompt_cache_key where the provider understands it,
	// so that successive steps of one session hit the same prompt cache.
	SessionID   string
	Temperature *float64
	// MaxTokens caps the completion; zero leaves it to the provider (or to the
	// flavor's default where the provider requires one).
	MaxTokens int
	// Encoded optionally holds Messages as EncodeMessages wrote them, one
	// for each message and in order, so that the client need not write
	// them again. A client sends them as they are when they were written
	// for its flavor, and writes Messages itself otherwise.
	Encoded []EncodedMessage
}

// Message is one entry of the conversation.
type Message struct {
	Role Role
	Text string
	// Images go with user messages, as content parts.
	Images []Image
	// ToolCalls are the calls an assistant message asked for; their IDs must
	// come back in the tool messages that answer them.
	ToolCalls []ToolCall
	// Thinking is the reasoning an assistant message came with. Some providers
	// (Kimi) refuse a history whose tool-calling turns lost it.
	Thinking string
	// ToolCallID names the call a tool message answers.
	ToolCallID string
}

// SystemMessage is the system prompt.
func SystemMessage(text string) Message { return Message{Role: RoleSystem, Text: text} }

// UserMessage is a user turn, optionally with images.
func UserMessage(text string, images ...Image) Message {
	return Message{Role: RoleUser, Text: text, Images: images}
}

// ToolResultMessage answers the tool call whose ID is callID.
func ToolResultMessage(callID, text string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Text: text}
}

// AssistantMessage replays a model answer into the history, so the next step
// sees what it said, thought and asked for.
func AssistantMessage(r Response) Message {
	return Message{Role: RoleAssistant, Text: r.Text, Thinking: r.Thinking, ToolCalls: r.ToolCalls}
}

// Image is an image attachment, given by URL: an https URL or a data URL.
type Image struct {
	URL string
}

// ImageData makes an image attachment from raw bytes, as a data URL.
func ImageData(mediaType string, data []byte) Image {
	return Image{URL: "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)}
}

// ToolSpec offers a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments object; empty means a
	// tool without arguments.
	Parameters json.RawMessage
}

// ToolCall is a call the model asked for. Arguments is the JSON text the model
// wrote, not validated here.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Response is the assembled answer of one model call.
type Response struct {
	Text      string
	Thinking  string
	ToolCalls []ToolCall
	// FinishReason is the provider's word for why it stopped: stop,
	// tool_calls, length, content_filter, …
	FinishReason string
	Usage        Usage
	// Model is the model the provider says answered, when it says so.
	Model string
	// ID is the provider's id of the answer (OpenAI's "chatcmpl-…"), when
	// it gives one.
	ID string
}

// Usage counts tokens as the provider reported them. CachedTokens is part of
// PromptTokens; ReasoningTokens is part of CompletionTokens.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
	ReasoningTokens  int
}

// Delta is one piece of streamed output. Exactly one of its fields is set.
type Delta struct {
	Text     string
	Thinking string
	ToolCall *ToolCallProgress
}

// ToolCallProgress reports a tool call growing while it streams. ID and Name
// are what is known of the call so far; ArgumentsDelta is the new fragment.
type ToolCallProgress struct {
	// Index is the call's position in the final Response.ToolCalls.
	Index          int
	ID             string
	Name           string
	ArgumentsDelta string
}
