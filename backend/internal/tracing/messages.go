package tracing

import (
	"encoding/json"
	"strings"

	"github.com/agents-os/agents/backend/internal/llm"
)

// The contents of a model call, recorded only on opt-in, are written as
// the GenAI conventions' message JSON: a list of messages, each a role and
// its parts (text, reasoning, tool calls, tool call responses). Images
// are left out: they are data, not what anyone reads in a trace.

type message struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  *string         `json:"response,omitempty"`
}

// inputMessages returns the system instructions (as their parts' JSON,
// "" without any) and the other messages of a request.
func inputMessages(msgs []llm.Message) (system, input string) {
	var sys []part
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == llm.RoleSystem {
			sys = append(sys, part{Type: "text", Content: m.Text})
			continue
		}
		out = append(out, message{Role: string(m.Role), Parts: partsOf(m)})
	}
	if len(sys) > 0 {
		system = encode(sys)
	}
	return system, encode(out)
}

// outputMessages is the answer of a model call as one assistant message.
func outputMessages(r llm.Response) string {
	m := llm.AssistantMessage(r)
	return encode([]message{{Role: string(llm.RoleAssistant), Parts: partsOf(m), FinishReason: r.FinishReason}})
}

func partsOf(m llm.Message) []part {
	parts := []part{}
	if m.Thinking != "" {
		parts = append(parts, part{Type: "reasoning", Content: m.Thinking})
	}
	if m.Role == llm.RoleTool {
		text := m.Text
		return append(parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: &text})
	}
	if m.Text != "" {
		parts = append(parts, part{Type: "text", Content: m.Text})
	}
	for _, c := range m.ToolCalls {
		parts = append(parts, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: arguments(c.Arguments)})
	}
	return parts
}

// arguments keeps a call's arguments as the JSON object they are, and
// as a JSON string when the model wrote something else.
func arguments(s string) json.RawMessage {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
