package fakellmtest_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

func ask(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json",
		strings.NewReader(`{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || len(answer.Choices) != 1 {
		t.Fatalf("status %d, decoding: %v", resp.StatusCode, err)
	}
	return answer.Choices[0].Message.Content
}

func TestStart(t *testing.T) {
	t.Parallel()
	var url string
	t.Run("server lives for the test", func(t *testing.T) {
		srv := fakellmtest.Start(t, fakellm.Rules{Rules: []fakellm.Rule{{Reply: fakellm.Reply{Text: "hello"}}}})
		url = srv.URL()
		if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
			t.Errorf("URL = %q, want http://127.0.0.1:PORT/v1", url)
		}
		if got := ask(t, url); got != "hello" {
			t.Errorf("answer = %q, want hello", got)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("recorded %d requests, want 1", n)
		}
	})
	if resp, err := http.Get(url + "/models"); err == nil {
		resp.Body.Close()
		t.Error("server still answers after its test ended")
	}
}

func TestStartFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(path, []byte(`{"rules": [{"reply": {"text": "from file"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := fakellmtest.StartFile(t, path)
	if got := ask(t, srv.URL()); got != "from file" {
		t.Errorf("answer = %q, want from file", got)
	}
}
