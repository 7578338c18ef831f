package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/tracing/otlptest"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// `agents serve` with an OTLP endpoint in its environment traces a run
// under the traceparent of the request that started it, and, stopped with
// SIGTERM, has sent every span before it exits, though its batches would
// wait an hour. Not parallel: the endpoint is in the environment the
// server inherits.
func TestServeSendsTheTraceOfARunUnderItsCallerAndFlushesOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as a child process")
	}
	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL())
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "3600000")
	t.Setenv("OTEL_SERVICE_NAME", "agents-e2e")
	bin := buildAgents(t)
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "hello back"}})
	dir := t.TempDir()
	p := startServe(t, bin, dir, filepath.Join(dir, "agents.db"), model.URL())

	const traceID, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, err := http.NewRequestWithContext(ctxFor(t), http.MethodPost, p.url+"/v1/sessions",
		strings.NewReader(`{"agent": "asker", "message": {"text": "hi"}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+parent+"-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var created struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&created); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/sessions = %d (%v)", res.StatusCode, err)
	}
	id := created.ID
	p.waitIdle(t, id)

	p.stop()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("agents serve did not stop")
	}
	var run, chat *otlptest.Span
	spans := rcv.Spans()
	for i, s := range spans {
		switch s.Name {
		case "invoke_agent asker":
			run = &spans[i]
		case "chat test-model":
			chat = &spans[i]
		}
	}
	if run == nil || chat == nil {
		t.Fatalf("received %v by the exit, want the run and its model call", spans)
	}
	if run.TraceID != traceID || run.ParentSpanID != parent || chat.ParentSpanID != run.SpanID {
		t.Errorf("run in trace %s under %s, chat under %s: want the caller's trace %s under %s, the chat under the run %s",
			run.TraceID, run.ParentSpanID, chat.ParentSpanID, traceID, parent, run.SpanID)
	}
	if run.Attributes["gen_ai.conversation.id"] != id || run.Resource["service.name"] != "agents-e2e" {
		t.Errorf("run's conversation %q, service %q: want %s of agents-e2e", run.Attributes["gen_ai.conversation.id"], run.Resource["service.name"], id)
	}
}
