package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

// A schedule stores its params and shows them in every answer, and a
// secret param is never stored nor returned: a schedule giving its
// agent's secret param is refused, naming it, and nothing is stored.
func TestAScheduleRefusesASecretParam(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	status, _, b := e.do(http.MethodPost, "/v1/schedules", `{"agent": "vault", "every": "1h", "message": {"text": "x"}, "params": {"API_TOKEN": "s3cret"}}`)
	if _, _, msg := jsonError(t, b); status != http.StatusBadRequest || !strings.Contains(msg, "API_TOKEN") || !strings.Contains(msg, "secret") {
		t.Errorf("a secret param = %d %s, want 400 naming it", status, b)
	}
	if strings.Contains(string(b), "s3cret") {
		t.Errorf("the answer shows the secret: %s", b)
	}
	status, _, b = e.do(http.MethodGet, "/v1/schedules", "")
	if status != http.StatusOK || strings.Contains(string(b), "s3cret") || strings.Contains(string(b), `"id"`) {
		t.Errorf("schedules after the refusal: %d %s", status, b)
	}
}

// A schedule's message is text and attachments: one asking to interrupt
// is refused rather than stored without it (a firing never interrupts a
// run; with overlap queue its message joins the run at its next step).
func TestAScheduleRefusesAnInterruptingMessage(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	status, _, b := e.do(http.MethodPost, "/v1/schedules", `{"agent": "helper", "every": "1h", "message": {"text": "x", "interrupt": true}}`)
	if _, _, msg := jsonError(t, b); status != http.StatusBadRequest || !strings.Contains(msg, "message.interrupt") {
		t.Errorf("an interrupting message = %d %s, want 400 naming message.interrupt", status, b)
	}
	status, _, b = e.do(http.MethodPost, "/v1/schedules", `{"agent": "helper", "every": "1h", "message": {"text": "x"}}`)
	if status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, b)
	}
	var sc struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	status, _, b = e.do(http.MethodPatch, "/v1/schedules/"+sc.ID, `{"message": {"text": "y", "interrupt": true}}`)
	if _, _, msg := jsonError(t, b); status != http.StatusBadRequest || !strings.Contains(msg, "message.interrupt") {
		t.Errorf("an update to an interrupting message = %d %s, want 400", status, b)
	}
}
