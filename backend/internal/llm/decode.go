package llm

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strings"
)

// wireChunk is one streamed chunk or, with Message instead of Delta in its
// choice, a whole non-streamed completion. Fields that providers fill in
// different shapes are kept raw and read leniently.
type wireChunk struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

func (c wireChunk) hasError() bool {
	return len(c.Error) > 0 && !bytes.Equal(c.Error, []byte("null"))
}

type wireChoice struct {
	Index        int        `json:"index"`
	Delta        *wireDelta `json:"delta"`
	Message      *wireDelta `json:"message"`
	FinishReason *string    `json:"finish_reason"`
	// Usage inside the choice is where Moonshot puts it in its last chunk.
	Usage *wireUsage `json:"usage"`
}

type wireDelta struct {
	// Content is a string, or (Mistral's reasoning models) a list of typed
	// parts among which "thinking" ones carry the reasoning.
	Content json.RawMessage `json:"content"`
	// ReasoningContent (DeepSeek, Kimi, vLLM) and Reasoning (Ollama,
	// OpenRouter, newer vLLM) are the same thing under two names.
	ReasoningContent json.RawMessage     `json:"reasoning_content"`
	Reasoning        json.RawMessage     `json:"reasoning"`
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
}

type wireToolCallDelta struct {
	// Index is missing from some providers' deltas.
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name string `json:"name"`
		// Arguments is a JSON string of JSON text, or from a few servers
		// the object itself.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// wireUsage gathers every usage field seen in the wild.
type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	// CachedTokens at the top level is Kimi's; PromptCacheHitTokens is
	// DeepSeek's; NumCachedTokens is Mistral's.
	CachedTokens            int                   `json:"cached_tokens"`
	PromptCacheHitTokens    int                   `json:"prompt_cache_hit_tokens"`
	NumCachedTokens         int                   `json:"num_cached_tokens"`
	ReasoningTokens         int                   `json:"reasoning_tokens"`
	PromptTokensDetails     *wireCachedDetails    `json:"prompt_tokens_details"`
	CompletionTokensDetails *wireReasoningDetails `json:"completion_tokens_details"`
}

type wireCachedDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type wireReasoningDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

func (u *wireUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	out := Usage{
		PromptTokens:     firstSet(u.PromptTokens, u.InputTokens),
		CompletionTokens: firstSet(u.CompletionTokens, u.OutputTokens),
		CachedTokens:     firstSet(u.CachedTokens, u.PromptCacheHitTokens, u.NumCachedTokens),
		ReasoningTokens:  u.ReasoningTokens,
	}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens != 0 {
		out.CachedTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != 0 {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// firstSet is the first of values that is not the zero value.
func firstSet[T comparable](values ...T) T {
	var zero T
	for _, v := range values {
		if v != zero {
			return v
		}
	}
	return zero
}

// assembler folds chunks into a Response, handing each new piece of output
// to emit as it goes. It holds at most limit bytes of output: a piece that
// would pass it is neither kept nor handed out, and fails the chunk.
type assembler struct {
	emit         func(Delta)
	text         strings.Builder
	thinking     strings.Builder
	calls        []*partialCall
	byIndex      map[int]int // provider's tool call index → position in calls
	finishReason string
	usage        *wireUsage
	model, id    string
	size, limit  int64 // bytes of output held, and the most it may hold
}

// callOverhead is what a tool call counts for besides its id, name and
// arguments, so that a provider cannot open calls without end for free.
const callOverhead = 64

type partialCall struct {
	id   string
	name string
	args strings.Builder
}

func newAssembler(emit func(Delta), limit int64) *assembler {
	if emit == nil {
		emit = func(Delta) {}
	}
	return &assembler{emit: emit, limit: limit}
}

// reserve counts n more bytes of output, or fails if they pass the limit.
func (a *assembler) reserve(n int) error {
	if a.size+int64(n) > a.limit {
		return outputTooLarge(a.limit)
	}
	a.size += int64(n)
	return nil
}

func (a *assembler) add(c wireChunk) error {
	if c.Model != "" {
		a.model = c.Model
	}
	if c.ID != "" {
		a.id = c.ID
	}
	if c.Usage != nil {
		a.usage = c.Usage
	}
	for _, choice := range c.Choices {
		if choice.Index != 0 {
			continue // only one completion is ever asked for
		}
		if choice.Usage != nil {
			a.usage = choice.Usage
		}
		if d := choice.Delta; d != nil {
			if err := a.addDelta(*d); err != nil {
				return err
			}
		}
		if m := choice.Message; m != nil {
			if err := a.addDelta(*m); err != nil {
				return err
			}
		}
		if choice.FinishReason != nil && *choice.FinishReason != "" {
			a.finishReason = *choice.FinishReason
		}
	}
	return nil
}

func (a *assembler) addDelta(d wireDelta) error {
	thinking, _ := jsonString(d.ReasoningContent)
	if thinking == "" {
		thinking, _ = jsonString(d.Reasoning)
	}
	text, partThinking := contentText(d.Content)
	if err := a.addThinking(thinking); err != nil {
		return err
	}
	if err := a.addThinking(partThinking); err != nil {
		return err
	}
	if text != "" {
		if err := a.reserve(len(text)); err != nil {
			return err
		}
		a.text.WriteString(text)
		a.emit(Delta{Text: text})
	}
	for _, tc := range d.ToolCalls {
		if err := a.addToolCall(tc); err != nil {
			return err
		}
	}
	return nil
}

func (a *assembler) addThinking(s string) error {
	if s == "" {
		return nil
	}
	if err := a.reserve(len(s)); err != nil {
		return err
	}
	a.thinking.WriteString(s)
	a.emit(Delta{Thinking: s})
	return nil
}

func (a *assembler) addToolCall(tc wireToolCallDelta) error {
	pos, fresh := a.slotFor(tc)
	call := &partialCall{}
	if !fresh {
		call = a.calls[pos]
	}
	var id, name string
	if call.id == "" {
		id = tc.ID
	}
	// Most providers send the name once; some repeat it in every delta, a
	// few split it. Appending only what differs serves all three.
	if n := tc.Function.Name; n != "" && n != call.name {
		name = n
	}
	args := jsonText(tc.Function.Arguments)
	cost := len(id) + len(name) + len(args)
	if fresh {
		cost += callOverhead
	}
	if err := a.reserve(cost); err != nil {
		return err
	}
	if fresh {
		a.calls = append(a.calls, call)
		if tc.Index != nil {
			if a.byIndex == nil {
				a.byIndex = map[int]int{}
			}
			a.byIndex[*tc.Index] = pos
		}
	}
	call.id += id
	call.name += name
	call.args.WriteString(args)
	a.emit(Delta{ToolCall: &ToolCallProgress{Index: pos, ID: call.id, Name: call.name, ArgumentsDelta: args}})
	return nil
}

// slotFor finds the call a tool call delta continues, or says (fresh) that
// it starts a new one, which would go at pos.
func (a *assembler) slotFor(tc wireToolCallDelta) (pos int, fresh bool) {
	next := len(a.calls)
	if tc.Index != nil {
		pos, ok := a.byIndex[*tc.Index]
		// A different id under a known index is a new call from a provider
		// that numbers every call 0.
		if ok && (tc.ID == "" || a.calls[pos].id == "" || a.calls[pos].id == tc.ID) {
			return pos, false
		}
		return next, true
	}
	if tc.ID != "" {
		for pos, c := range a.calls {
			if c.id == tc.ID {
				return pos, false
			}
		}
		return next, true
	}
	// Neither index nor id: continue the last call, unless it is complete
	// and this delta names a function, which starts the next call.
	last := next - 1
	if last < 0 {
		return next, true
	}
	if tc.Function.Name != "" && a.calls[last].name != "" && json.Valid([]byte(a.calls[last].args.String())) {
		return next, true
	}
	return last, false
}

// response is what was assembled so far. Calls that never got an id from
// the provider get one here, since tool results must name the call.
func (a *assembler) response() Response {
	r := Response{
		Text:         a.text.String(),
		Thinking:     a.thinking.String(),
		FinishReason: a.finishReason,
		Usage:        a.usage.usage(),
		Model:        a.model,
		ID:           a.id,
	}
	for _, c := range a.calls {
		if c.id == "" {
			c.id = "call_" + rand.Text()
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{
			ID:        c.id,
			Name:      c.name,
			Arguments: argumentsOrEmptyObject(c.args.String()),
		})
	}
	return r
}

// jsonString reads raw as a JSON string; anything else (null, missing, an
// object) gives false.
func jsonString(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	// As chunkParser reads strings, which is as encoding/json does; what
	// is not one string alone is left to encoding/json.
	p := chunkParser{data: raw}
	if s, ok := p.stringValue(); ok && p.pos == len(raw) {
		return s, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// contentText reads message content as text and thinking: a plain string is
// text; a list of parts contributes its "text" parts to text and its
// "thinking" parts (each a string or a list of text parts) to thinking.
func contentText(raw json.RawMessage) (text, thinking string) {
	if s, ok := jsonString(raw); ok {
		return s, ""
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	var tb, hb strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			tb.WriteString(p.Text)
		case "thinking":
			if s, ok := jsonString(p.Thinking); ok {
				hb.WriteString(s)
				continue
			}
			inner, _ := contentText(p.Thinking)
			hb.WriteString(inner)
		}
	}
	return tb.String(), hb.String()
}
