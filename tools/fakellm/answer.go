package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// answer is a reply made concrete for one request: placeholders filled,
// call ids assigned, usage computed. Both the streaming and the
// non-streaming writers send it.
type answer struct {
	id           string
	model        string
	created      int64
	text         string
	reasoning    string
	toolCalls    []answerToolCall
	finishReason string
	usage        wireUsage
}

type answerToolCall struct {
	id        string
	name      string
	arguments string
}

// render makes r concrete for req. Calls without an explicit id are
// numbered from firstCallNumber on.
func (r compiledReply) render(req Request, firstCallNumber int, created int64) answer {
	fill := newPlaceholders(req)
	a := answer{
		id:           fmt.Sprintf("chatcmpl-fake-%d", req.Index),
		model:        req.Model,
		created:      created,
		text:         fill.text.Replace(r.text),
		reasoning:    fill.text.Replace(r.reasoning),
		finishReason: r.finishReason,
	}
	next := firstCallNumber
	for _, c := range r.toolCalls {
		call := answerToolCall{id: c.id, name: c.name}
		if call.id == "" {
			call.id = fmt.Sprintf("call_%d", next)
			next++
		}
		if c.raw {
			call.arguments = fill.text.Replace(c.arguments)
		} else {
			call.arguments = fill.inJSONString.Replace(c.arguments)
		}
		a.toolCalls = append(a.toolCalls, call)
	}
	if a.finishReason == "" {
		a.finishReason = "stop"
		if len(a.toolCalls) > 0 {
			a.finishReason = "tool_calls"
		}
	}
	a.usage = a.estimateUsage(req).override(r.usage)
	return a
}

// generatedIDs is how many call ids render will number.
func (r compiledReply) generatedIDs() int {
	n := 0
	for _, c := range r.toolCalls {
		if c.id == "" {
			n++
		}
	}
	return n
}

// estimateTokens counts about four characters per token: deterministic and
// close enough to make usage plumbing observable.
func estimateTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// countPromptTokens estimates a prompt as real providers bill it: the
// messages and the tool calls in them, and the tool definitions too, which
// count against the context window like any message. Parameters are
// counted compacted so that the sender's indentation does not matter.
func countPromptTokens(messages []Message, tools []Tool) int {
	n := 0
	for _, m := range messages {
		n += estimateTokens(m.Content)
		for _, c := range m.ToolCalls {
			n += estimateTokens(c.Name) + estimateTokens(c.Arguments)
		}
	}
	for _, t := range tools {
		n += estimateTokens(t.Name) + estimateTokens(t.Description) + estimateTokens(compactJSON(t.Parameters))
	}
	return max(n, 1)
}

// compactJSON is raw without insignificant space, or raw as is when it is
// not JSON.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func (a answer) estimateUsage(req Request) wireUsage {
	u := wireUsage{PromptTokens: req.PromptTokens}
	u.CompletionTokensDetails.ReasoningTokens = estimateTokens(a.reasoning)
	u.CompletionTokens = estimateTokens(a.text) + u.CompletionTokensDetails.ReasoningTokens
	for _, c := range a.toolCalls {
		u.CompletionTokens += estimateTokens(c.name) + estimateTokens(c.arguments)
	}
	return u
}

// override applies the non-zero fields of o and sets the total.
func (u wireUsage) override(o Usage) wireUsage {
	if o.PromptTokens > 0 {
		u.PromptTokens = o.PromptTokens
	}
	if o.CompletionTokens > 0 {
		u.CompletionTokens = o.CompletionTokens
	}
	if o.CachedTokens > 0 {
		u.PromptTokensDetails.CachedTokens = o.CachedTokens
	}
	if o.ReasoningTokens > 0 {
		u.CompletionTokensDetails.ReasoningTokens = o.ReasoningTokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	if o.TotalTokens > 0 {
		u.TotalTokens = o.TotalTokens
	}
	return u
}
