package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/tools/fakellm"
)

// copyTestdata copies the test agents with their tools and helpers to a
// directory of the test's own, which it may change; it returns the
// agents directory.
func copyTestdata(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS("testdata")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dst, "agents")
}

// editAgent rewrites fields of an agent file's contents.
func editAgent(t *testing.T, path string, fields map[string]any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tag      string         `json:"tag"`
		Contents map[string]any `json:"contents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for k, v := range fields {
		doc.Contents[k] = v
	}
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 8, item 12: every step uses its agent as it is now, so an agent
// reloaded with a new prompt and model reaches a session in the middle
// of a run, at its next step.
func TestAReloadedAgentReachesALiveSessionAtItsNextStep(t *testing.T) {
	t.Parallel()
	dir := copyTestdata(t)
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "revised boss"}, Reply: fakellm.Reply{Text: "the new prompt at work"}},
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{Text: "calling echo", ChunkSize: 2,
			ToolCalls: []fakellm.ToolCall{{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "x"}`)}}}},
		{Reply: fakellm.Reply{Text: "the old prompt at work"}},
	}}, withAgentsDir(dir), withModelFaults())
	hold := e.modelFaults.HoldAfter(1)
	id := e.create("boss", "go").GetMeta().GetId()
	select {
	case <-hold.Held():
	case <-time.After(20 * time.Second):
		t.Fatal("the first model call never streamed")
	}

	editAgent(t, filepath.Join(dir, "boss.json"), map[string]any{
		"systemPrompt": []string{"You are the revised boss agent of the tests."},
		"modelName":    "test-model-2",
	})
	if status, _, body := e.do(http.MethodPost, "/v1/agents:reload", ""); status != http.StatusOK || !strings.Contains(string(body), "revised boss") {
		t.Fatalf("reload = %d %s", status, body)
	}
	hold.Release()

	s := e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); got != "the new prompt at work" {
		t.Fatalf("answer = %q, want the step after the reload to use the new prompt", got)
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d, want 2", len(reqs))
	}
	if reqs[0].Model != "test-model" || reqs[1].Model != "test-model-2" {
		t.Errorf("models asked = %q then %q, want the new model from the step after the reload", reqs[0].Model, reqs[1].Model)
	}
	if p := reqs[1].SystemPrompt(); !strings.Contains(p, "revised boss") {
		t.Errorf("system prompt after the reload = %q", p)
	}
}
