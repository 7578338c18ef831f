package fakellm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"
)

// errDisconnect asks the handler to drop the connection, as scripted by
// Reply.DisconnectAfterChunks.
var errDisconnect = errors.New("fakellm: scripted disconnect")

// chunks splits a into the events a real provider would stream: the role,
// reasoning fragments, text fragments, for each tool call its id and name
// followed by argument fragments, the finish reason, and usage when the
// client asked for it (in a last event with no choices, as OpenAI does).
func (a answer) chunks(size int, includeUsage bool) []wireChunk {
	var out []wireChunk
	add := func(delta wireDelta, finish *string) {
		out = append(out, wireChunk{
			ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
			Choices: []wireChunkChoice{{Delta: delta, FinishReason: finish}},
		})
	}
	add(wireDelta{Role: "assistant", Content: new("")}, nil)
	for _, part := range splitRunes(a.reasoning, size) {
		add(wireDelta{ReasoningContent: part}, nil)
	}
	for _, part := range splitRunes(a.text, size) {
		add(wireDelta{Content: new(part)}, nil)
	}
	for i, call := range a.toolCalls {
		add(wireDelta{ToolCalls: []wireToolCallDelta{{
			Index: i, ID: call.id, Type: "function",
			Function: wireFunction{Name: call.name},
		}}}, nil)
		for _, part := range splitRunes(call.arguments, size) {
			add(wireDelta{ToolCalls: []wireToolCallDelta{{
				Index: i, Function: wireFunction{Arguments: part},
			}}}, nil)
		}
	}
	add(wireDelta{}, new(a.finishReason))
	if includeUsage {
		out = append(out, wireChunk{
			ID: a.id, Object: "chat.completion.chunk", Created: a.created, Model: a.model,
			Choices: []wireChunkChoice{}, Usage: new(a.usage),
		})
	}
	return out
}

// splitRunes cuts s into pieces of at most size runes, never inside a
// UTF-8 sequence, so that every piece is valid text on its own.
func splitRunes(s string, size int) []string {
	var parts []string
	for len(s) > 0 {
		end, n := 0, 0
		for end < len(s) && n < size {
			_, width := utf8.DecodeRuneInString(s[end:])
			end += width
			n++
		}
		parts = append(parts, s[:end])
		s = s[end:]
	}
	return parts
}

// stream sends a as server-sent events, waiting the reply's chunk delay
// between events. It stops as soon as ctx ends (the client went away) and
// returns errDisconnect when the reply scripts a dropped connection.
func stream(ctx context.Context, w http.ResponseWriter, a answer, r compiledReply, includeUsage bool) error {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher := http.NewResponseController(w)
	send := func(data []byte) error {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return err
		}
		return flusher.Flush()
	}
	for i, chunk := range a.chunks(r.chunkSize, includeUsage) {
		if i > 0 {
			if err := sleep(ctx, r.chunkDelay); err != nil {
				return err
			}
		}
		if r.disconnectAfterChunks > 0 && i == r.disconnectAfterChunks {
			return errDisconnect
		}
		data, err := json.Marshal(chunk)
		if err != nil {
			return err
		}
		if err := send(data); err != nil {
			return err
		}
	}
	if r.disconnectAfterChunks > 0 {
		return errDisconnect
	}
	return send([]byte("[DONE]"))
}

// sleep waits d, or less if ctx ends first, and then reports ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
	}
	return ctx.Err()
}
