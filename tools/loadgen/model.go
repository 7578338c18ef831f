package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// The agent every scenario talks to. Its API key is never configured, so
// the server sends its model calls to --offline-model.
const (
	agentSlug   = "load"
	agentKeyID  = "loadgen-offline-key"
	agentKeyEnv = "LOADGEN_OFFLINE_KEY"
	// answerText is the model's whole answer, sent in one chunk at once: a
	// prompt is one step with no tool call.
	answerText = "Done."
)

// writeAgentFile writes the agent file for agentSlug to path.
func writeAgentFile(path string) error {
	desc := map[string]any{
		"tag": "OpenAIAgentDescription",
		"contents": map[string]any{
			"slug":         agentSlug,
			"flavor":       "OpenAIv1",
			"modelUrl":     "https://models.invalid/v1",
			"apiKeyId":     agentKeyID,
			"modelName":    modelName,
			"announce":     "Answers every prompt at once; the load tool's agent.",
			"systemPrompt": []string{"You are the agent of the load test."},
		},
	}
	b, err := json.MarshalIndent(desc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Model is the offline model served inside this process at no delay.
//
// It is not fakellm: fakellm decodes every request (the whole history, a
// little longer each step), checks it and keeps it for tests to read, and
// flushes each chunk of its stream on its own. On a small machine the
// load tool shares the CPU with the server it measures, so its model does
// the least a zero-delay provider can: it reads the request, looks only at
// whether it asks for a stream and for usage, and answers with bytes made
// once, a stream in one write. What the server does with the answer is
// the same as with any provider's.
type Model struct {
	URL string // base URL, …/v1

	server *http.Server
}

// The answers, made once: a streamed answer with usage, one without, and
// a whole completion.
var (
	streamWithUsage = modelStream(true)
	streamNoUsage   = modelStream(false)
	completionBody  = modelCompletion()
)

const (
	modelName        = "load-model"
	completionID     = "chatcmpl-load"
	promptTokens     = 16
	completionTokens = 2
)

type modelUsage struct {
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Total      int `json:"total_tokens"`
}

var answerUsage = modelUsage{Prompt: promptTokens, Completion: completionTokens, Total: promptTokens + completionTokens}

// modelStream is the event stream of answerText: the role, the text in
// one chunk, the finish reason, usage (as OpenAI sends it, in a last
// chunk with no choices) when asked, and [DONE].
func modelStream(usage bool) []byte {
	type delta struct {
		Role    string  `json:"role,omitempty"`
		Content *string `json:"content,omitempty"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Delta        delta   `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	}
	type chunk struct {
		ID      string      `json:"id"`
		Object  string      `json:"object"`
		Created int64       `json:"created"`
		Model   string      `json:"model"`
		Choices []choice    `json:"choices"`
		Usage   *modelUsage `json:"usage,omitempty"`
	}
	empty, text, stop := "", answerText, "stop"
	chunks := []chunk{
		{Choices: []choice{{Delta: delta{Role: "assistant", Content: &empty}}}},
		{Choices: []choice{{Delta: delta{Content: &text}}}},
		{Choices: []choice{{FinishReason: &stop}}},
	}
	if usage {
		chunks = append(chunks, chunk{Choices: []choice{}, Usage: &answerUsage})
	}
	var b bytes.Buffer
	for _, c := range chunks {
		c.ID, c.Object, c.Model = completionID, "chat.completion.chunk", modelName
		data, err := json.Marshal(c)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&b, "data: %s\n\n", data)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// modelCompletion is answerText as a whole completion, for a request
// that does not stream.
func modelCompletion() []byte {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Message      message `json:"message"`
		FinishReason string  `json:"finish_reason"`
	}
	b, err := json.Marshal(struct {
		ID      string     `json:"id"`
		Object  string     `json:"object"`
		Created int64      `json:"created"`
		Model   string     `json:"model"`
		Choices []choice   `json:"choices"`
		Usage   modelUsage `json:"usage"`
	}{completionID, "chat.completion", 0, modelName, []choice{{Message: message{"assistant", answerText}, FinishReason: "stop"}}, answerUsage})
	if err != nil {
		panic(err)
	}
	return b
}

// StartModel serves the model on a local port.
func StartModel() (*Model, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", answer)
	m := &Model{URL: fmt.Sprintf("http://%s/v1", ln.Addr()), server: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = m.server.Serve(ln) }()
	return m, nil
}

// requestBuffers keep the request bodies' buffers between answers.
var requestBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// answer reads the request and answers answerText at once.
func answer(w http.ResponseWriter, r *http.Request) {
	buf := requestBuffers.Get().(*bytes.Buffer)
	defer requestBuffers.Put(buf)
	buf.Reset()
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body := buf.Bytes()
	if !bytes.Contains(body, []byte(`"stream":true`)) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(completionBody)
		return
	}
	answer := streamNoUsage
	if bytes.Contains(body, []byte(`"include_usage":true`)) {
		answer = streamWithUsage
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
	_, _ = w.Write(answer)
}

// Close stops the model.
func (m *Model) Close() error {
	if m.server == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := m.server.Shutdown(ctx); err != nil {
		return m.server.Close()
	}
	return nil
}
