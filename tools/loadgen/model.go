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

	"github.com/agents-os/agents/tools/fakellm"
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
// It is not a fakellm server: that decodes every request (the whole
// history, a little longer each step), checks it and keeps it for tests
// to read, and flushes each chunk of its stream on its own. On a small
// machine the load tool shares the CPU with the server it measures, so
// its model does the least a zero-delay provider can: it reads the
// request, looks only at whether it asks for a stream and for usage, and
// answers with fakellm's bytes made once (fakellm.Canned), a stream in
// one write. What the server does with the answer is the same as with
// any provider's.
type Model struct {
	URL string // base URL, …/v1

	server *http.Server
}

// answers are the model's answer, made once by fakellm as it would send
// it.
var answers = func() fakellm.Canned {
	c, err := fakellm.NewCanned(modelName, answerText, 16, 2)
	if err != nil {
		panic(err)
	}
	return c
}()

const modelName = "load-model"

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
		_, _ = w.Write(answers.Completion)
		return
	}
	stream := answers.Stream
	if bytes.Contains(body, []byte(`"include_usage":true`)) {
		stream = answers.StreamWithUsage
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(stream)))
	_, _ = w.Write(stream)
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
