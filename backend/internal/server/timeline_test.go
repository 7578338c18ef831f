package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

// An answer carries how long its model call took, so a client can draw
// when the call began: its turn's create_time less the duration.
func TestAnAnswerCarriesItsModelCallsDuration(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "hi"}})
	status, _, body := e.send(request{method: "POST", path: "/v1/sessions?wait=true", body: `{"agent": "boss", "message": {"text": "hi"}}`})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, body)
	}
	var s struct {
		Turns []struct {
			LLM *struct {
				Duration string `json:"duration"`
			} `json:"llm"`
		} `json:"turns"`
	}
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, turn := range s.Turns {
		if turn.LLM != nil {
			found = true
			if turn.LLM.Duration == "" {
				t.Errorf("an answer without its duration: %s", body)
			}
		}
	}
	if !found {
		t.Fatalf("no answer: %s", body)
	}
}
