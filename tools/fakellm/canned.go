package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Canned is one text answer rendered once, as this server would send it,
// for a server that answers every request alike without reading it (the
// load tool's model, whose CPU is taken from the server it measures).
type Canned struct {
	// Stream and StreamWithUsage are the server-sent events of a streamed
	// answer, the text in one chunk, ending with data: [DONE]; the second
	// has the usage chunk a client asks for with include_usage.
	Stream, StreamWithUsage []byte
	// Completion is the JSON body of the answer not streamed.
	Completion []byte
}

// NewCanned renders text as model's answer that used promptTokens and
// completionTokens.
func NewCanned(model, text string, promptTokens, completionTokens int) (Canned, error) {
	a := answer{
		id: "chatcmpl-canned", model: model, text: text, finishReason: "stop",
		usage: wireUsage{PromptTokens: promptTokens, CompletionTokens: completionTokens, TotalTokens: promptTokens + completionTokens},
	}
	stream := func(includeUsage bool) ([]byte, error) {
		var b bytes.Buffer
		for _, chunk := range a.chunks(max(1, utf8.RuneCountInString(text)), includeUsage) {
			data, err := json.Marshal(chunk)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&b, "data: %s\n\n", data)
		}
		b.WriteString("data: [DONE]\n\n")
		return b.Bytes(), nil
	}
	var c Canned
	var err error
	if c.Stream, err = stream(false); err != nil {
		return Canned{}, err
	}
	if c.StreamWithUsage, err = stream(true); err != nil {
		return Canned{}, err
	}
	if c.Completion, err = json.Marshal(a.completion()); err != nil {
		return Canned{}, err
	}
	return c, nil
}
