package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

// BenchmarkPrompt is a prompt as the load tool makes it (BENCHMARKS.md):
// POST /v1/sessions/{id}/messages, then the waiting GET
// /v1/sessions/{id}?wait=true&after_turn=N, both through the handler TCP
// listeners serve, without the network. Each session takes ten prompts,
// as the load's rows do. Its allocations per operation are the serving
// path's plus the run's.
func BenchmarkPrompt(b *testing.B) {
	e := start(b, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	h := e.srv.Handler()
	serve := func(method, path, body string, want int) []byte {
		r := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(body))
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	var id string
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%10 == 0 {
			b.StopTimer()
			var created struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(serve("POST", "/v1/sessions", `{"agent":"helper"}`, http.StatusCreated), &created); err != nil {
				b.Fatal(err)
			}
			id = created.ID
			b.StartTimer()
		}
		var posted struct {
			Session struct {
				TurnCount int `json:"turn_count"`
			} `json:"session"`
		}
		if err := json.Unmarshal(serve("POST", "/v1/sessions/"+id+"/messages", `{"text":"hello"}`, http.StatusOK), &posted); err != nil {
			b.Fatal(err)
		}
		serve("GET", "/v1/sessions/"+id+"?wait=true&timeout=60s&after_turn="+strconv.Itoa(posted.Session.TurnCount-1), "", http.StatusOK)
	}
}
