package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
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
			"modelName":    "load-model",
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
type Model struct {
	URL string // base URL, …/v1

	fake   *fakellm.Server
	server *http.Server
}

// StartModel serves fakellm on a local port with one rule: answer
// answerText at once, in one chunk.
func StartModel() (*Model, error) {
	rules := fakellm.Rules{Rules: []fakellm.Rule{{
		Name:  "answer",
		Reply: fakellm.Reply{Text: answerText, ChunkSize: len(answerText)},
	}}}
	if err := rules.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	m := &Model{URL: fmt.Sprintf("http://%s/v1", ln.Addr()), fake: fakellm.New(rules)}
	m.server = &http.Server{Handler: m.fake, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.server.Serve(ln) }()
	return m, nil
}

// Forget drops the requests the model recorded, which it keeps in memory.
func (m *Model) Forget() {
	if m.fake != nil {
		m.fake.Reset()
	}
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
