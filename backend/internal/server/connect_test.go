package server_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

// TestConnectGetWithABadMessageIsInvalidArgument: a Connect GET request
// whose message does not decode is the caller's mistake, whatever the
// encoding: 400 invalid_argument, never a 500.
func TestConnectGetWithABadMessageIsInvalidArgument(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	const get = "/agents.v1.SessionService/GetSession?"
	for _, query := range []string{
		"encoding=json&base64=1&message=!!!",
		"encoding=proto&base64=1&message=" + url.QueryEscape("%%%"),
		"encoding=json&base64=1&message=" + url.QueryEscape("e30+"), // standard, not URL-safe, base64
		"encoding=json&base64=1&message=e30=====",
		"encoding=json&message=!!!",
		"encoding=proto&message=!!!",
		"encoding=json&base64=1&compression=gzip&message=eHh4",
		"encoding=json",
	} {
		t.Run(query, func(t *testing.T) {
			status, _, body := e.do(http.MethodGet, get+query, "")
			var got struct{ Code string }
			if err := json.Unmarshal(body, &got); err != nil || status != http.StatusBadRequest || got.Code != "invalid_argument" {
				t.Errorf("GET ?%s = %d %s, want 400 invalid_argument", query, status, body)
			}
		})
	}

	// Good base64, padded or not, still reaches the handler.
	msg := []byte(`{"sessionId": "nope"}`)
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding} {
		status, _, body := e.do(http.MethodGet, get+"encoding=json&base64=1&message="+url.QueryEscape(enc.EncodeToString(msg)), "")
		if status != http.StatusNotFound {
			t.Errorf("GET with a good base64 message = %d %s, want 404 for the unknown session", status, body)
		}
	}
}
