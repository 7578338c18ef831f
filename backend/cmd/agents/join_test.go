//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// sessionJSON is what GET /v1/sessions/{id} answers, in the JSON names a
// client reads: the session object, its summary at the top.
type sessionJSON struct {
	Status     string `json:"status"`
	Seq        uint64 `json:"seq"`
	DeltaSeq   uint64 `json:"delta_seq"`
	InProgress *struct {
		Text string `json:"text"`
	} `json:"in_progress"`
}

// TestJoinMidAnswerOverHTTPContinuesTheDeltasWithNoGap opens a session
// over the JSON routes while its answer streams: GET /v1/sessions/{id}
// shows the text so far and the position it reflects, and the session's
// SSE stream after that position carries the rest of the text, so that
// the two together are the stored answer, nothing missing or twice.
func TestJoinMidAnswerOverHTTPContinuesTheDeltasWithNoGap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	t.Parallel()
	bin := buildAgents(t)
	// Forty distinct chunks, so a gap or a repeat shows in the text.
	var answer strings.Builder
	for i := range 40 {
		fmt.Fprintf(&answer, "c%02d ", i)
	}
	model := fakellmtest.Start(t, fakellm.Rules{
		Rules: []fakellm.Rule{{Name: "stream", Match: fakellm.Match{SystemContains: slowPrompt}, Reply: fakellm.Reply{
			Text: answer.String(), ChunkSize: 4, ChunkDelay: "100ms",
		}}},
		Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: 500, Message: "fakellm: unexpected request"}},
	})
	dir := t.TempDir()
	srv := startServe(t, bin, dir, filepath.Join(dir, "agents.db"), model.URL())
	id := srv.create(t, "slow", "stream me something")

	// Poll until a few chunks of the answer have streamed.
	var got sessionJSON
	deadline := time.Now().Add(60 * time.Second)
	for {
		got = getSessionJSON(t, srv.url, id)
		if p := got.InProgress; p != nil && len(p.Text) >= 5*4 {
			break
		}
		if st := got.Status; st != "running" {
			t.Fatalf("session %s is %s before any text was in progress", id, st)
		}
		if time.Now().After(deadline) {
			t.Fatal("no text in progress within 60s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	partial := got.InProgress.Text
	if got.Seq == 0 {
		t.Fatalf("GET /v1/sessions/%s mid-answer has no seq", id)
	}
	at := events.Position{Seq: got.Seq, Delta: got.DeltaSeq}.String()

	stream := openSSE(t, srv.url+"/v1/sessions/"+id+"/events", at)
	if mode := stream.header.Get("Agents-Replay"); mode != "replay" {
		t.Fatalf("subscribe after %s: Agents-Replay = %q, want replay", at, mode)
	}
	frames := stream.until(t, "the end of the run", runStopped(id))
	checkIncreasing(t, at, frames)
	var rest strings.Builder
	deltas := 0
	for _, f := range frames {
		if f.event == "text.delta" {
			rest.WriteString(f.decode(t).GetTextDelta().GetText())
			deltas++
		}
	}

	s := srv.get(t, id)
	texts := llmTexts(s)
	if len(texts) != 1 || texts[0] != answer.String() {
		t.Fatalf("stored answers = %q, want the streamed text", texts)
	}
	if partial+rest.String() != texts[0] {
		t.Errorf("text in progress %q + %d deltas after %s %q != stored answer %q", partial, deltas, at, rest.String(), texts[0])
	}
	if deltas == 0 || len(partial) >= len(texts[0]) {
		t.Errorf("joined with %q in progress and %d deltas to come; want a join mid-answer", partial, deltas)
	}
	if st := s.GetMeta().GetStatus(); st != agentsv1.SessionStatus_SESSION_STATUS_READY {
		t.Errorf("status after the answer = %v, want ready", st)
	}
}

// getSessionJSON reads GET /v1/sessions/{id}.
func getSessionJSON(t *testing.T, url, id string) sessionJSON {
	t.Helper()
	res, err := http.Get(url + "/v1/sessions/" + id)
	if err != nil {
		t.Fatalf("GET /v1/sessions/%s: %v", id, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/sessions/%s: status %d, %v: %s", id, res.StatusCode, err, body)
	}
	var s sessionJSON
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("GET /v1/sessions/%s: %v: %s", id, err, body)
	}
	return s
}
