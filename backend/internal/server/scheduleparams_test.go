package server_test

import (
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
