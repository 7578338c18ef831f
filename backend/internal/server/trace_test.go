package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tracing"
	"github.com/agents-os/agents/tools/fakellm"
)

// traces records the spans of a server's runs in memory.
type traces struct {
	exp *tracetest.InMemoryExporter
	// ended is signalled after each span is exported.
	ended chan struct{}
}

// withMemoryTraces serves with tracing on, its spans kept in memory;
// capture records message contents too.
func withMemoryTraces(t *testing.T, capture bool) (option, *traces) {
	tr := &traces{exp: tracetest.NewInMemoryExporter(), ended: make(chan struct{}, 1)}
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tr.exp), sdktrace.WithSpanProcessor(tr))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return withTraces(&tracing.Setup{
		Tracer:     tracing.NewTracer(provider, capture),
		Propagator: propagation.TraceContext{},
	}), tr
}

func (tr *traces) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (tr *traces) OnEnd(sdktrace.ReadOnlySpan) {
	select {
	case tr.ended <- struct{}{}:
	default:
	}
}
func (tr *traces) Shutdown(context.Context) error   { return nil }
func (tr *traces) ForceFlush(context.Context) error { return nil }

// await returns the spans once every name in want has ended as often as
// it is listed.
func (tr *traces) await(t *testing.T, want ...string) tracetest.SpanStubs {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		spans := tr.exp.GetSpans()
		count := map[string]int{}
		for _, s := range spans {
			count[s.Name]++
		}
		missing := false
		for _, n := range want {
			count[n]--
			if count[n] < 0 {
				missing = true
			}
		}
		if !missing {
			return spans
		}
		select {
		case <-tr.ended:
		case <-deadline:
			t.Fatalf("spans ended: %v, want %v", names(spans), want)
		}
	}
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

// attrs are a span's attributes by key.
func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// wantAttrs checks the attributes of a span that must have these values.
func wantAttrs(t *testing.T, s tracetest.SpanStub, want map[string]any) {
	t.Helper()
	got := attrs(s)
	for k, w := range want {
		v, ok := got[attribute.Key(k)]
		if !ok {
			t.Errorf("%s: no %s (has %v)", s.Name, k, s.Attributes)
			continue
		}
		if v.AsInterface() != w {
			if ws, ok := w.([]string); !ok || strings.Join(v.AsStringSlice(), ",") != strings.Join(ws, ",") {
				t.Errorf("%s: %s = %v, want %v", s.Name, k, v.Emit(), w)
			}
		}
	}
}

// find returns the spans named name whose conversation is the session id.
func find(spans tracetest.SpanStubs, name, session string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name && attrs(s)["gen_ai.conversation.id"].AsString() == session {
			out = append(out, s)
		}
	}
	return out
}

// traceparent is a caller's span, as a W3C traceparent header.
const (
	callerTrace     = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan      = "00f067aa0ba902b7"
	callerParent    = "00-" + callerTrace + "-" + callerSpan + "-01"
	tracedUsageIn   = 11
	tracedUsageOut  = 7
	tracedModelName = "test-model"
	// tracedCost is what a call costs at $1 and $2 per million input and
	// output tokens.
	tracedCost = (tracedUsageIn*1 + tracedUsageOut*2) / 1e6
)

// A run started by a JSON request that carries a traceparent is traced
// under the caller's span: its model calls and tool calls are children of
// its invoke_agent span, and the helper's run is a child of the tool
// call that ran it, with every GenAI attribute the conventions ask for.
func TestRunIsTracedUnderTheCallersSpanWithItsCallsAndHelper(t *testing.T) {
	rules := bossScript()
	for i := range rules.Rules {
		rules.Rules[i].Reply.Usage = fakellm.Usage{PromptTokens: tracedUsageIn, CompletionTokens: tracedUsageOut}
	}
	opt, tr := withMemoryTraces(t, false)
	e := start(t, rules, opt, withRunner(func(o *runner.Options) {
		o.Budgets.Prices = map[string]session.Price{tracedModelName: {InputPerMTok: 1, OutputPerMTok: 2}}
	}))

	status, _, body := e.do(http.MethodPost, "/v1/sessions", `{"agent": "boss", "message": {"text": "go"}}`, "traceparent", callerParent)
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/sessions = %d %s", status, body)
	}
	var created agentsv1.CreateSessionResponse
	if err := readAnswer(body, &created); err != nil {
		t.Fatalf("POST /v1/sessions answered %s: %v", body, err)
	}
	id := created.GetSession().GetMeta().GetId()
	s := e.wait(id)
	turns := s.GetTurns()
	if len(turns) != 6 {
		t.Fatalf("got %d turns, want 6", len(turns))
	}
	echoCall := turns[1].GetLlm().GetToolCalls()[0]
	helperCall := turns[3].GetLlm().GetToolCalls()[0]
	childID := turns[4].GetUser().GetToolResults()[0].GetChildSessionId()

	spans := tr.await(t, "invoke_agent boss", "invoke_agent helper",
		"chat "+tracedModelName, "chat "+tracedModelName, "chat "+tracedModelName, "chat "+tracedModelName,
		"execute_tool bash_echo", "execute_tool prompt_agent_helper")

	for _, sp := range spans {
		if got := sp.SpanContext.TraceID().String(); got != callerTrace {
			t.Errorf("%s is in trace %s, want the caller's %s", sp.Name, got, callerTrace)
		}
		if _, ok := attrs(sp)["gen_ai.input.messages"]; ok {
			t.Errorf("%s records the messages without the opt-in", sp.Name)
		}
	}

	runs := find(spans, "invoke_agent boss", id)
	if len(runs) != 1 {
		t.Fatalf("invoke_agent spans of the session: %d, want 1", len(runs))
	}
	run := runs[0]
	if run.Parent.SpanID().String() != callerSpan || !run.Parent.IsRemote() {
		t.Errorf("run's parent = %v, want the caller's remote span %s", run.Parent.SpanID(), callerSpan)
	}
	wantAttrs(t, run, map[string]any{
		"gen_ai.operation.name":    "invoke_agent",
		"gen_ai.agent.name":        "boss",
		"gen_ai.agent.description": "Uses tools and a helper.",
		"gen_ai.provider.name":     "openai",
		"gen_ai.request.model":     tracedModelName,
		"gen_ai.conversation.id":   id,
		"agents.run.stop_reason":   "done",
		// The run's own three calls (the helper's run counts its own).
		"gen_ai.usage.input_tokens":  int64(3 * tracedUsageIn),
		"gen_ai.usage.output_tokens": int64(3 * tracedUsageOut),
		"agents.usage.cost_usd":      3 * tracedCost,
	})
	if _, ok := attrs(run)["gen_ai.agent.version"]; ok {
		t.Errorf("a file agent's run names a version")
	}
	if run.Status.Code == codes.Error {
		t.Errorf("run's status = %v, want no error", run.Status)
	}

	chats := find(spans, "chat "+tracedModelName, id)
	if len(chats) != 3 {
		t.Fatalf("chat spans of the session: %d, want 3", len(chats))
	}
	finishes := map[string]int{}
	responseIDs := map[string]bool{}
	for _, c := range chats {
		if c.Parent.SpanID() != run.SpanContext.SpanID() {
			t.Errorf("chat's parent = %v, want the run %v", c.Parent.SpanID(), run.SpanContext.SpanID())
		}
		if c.SpanKind != trace.SpanKindClient {
			t.Errorf("chat's kind = %v, want client", c.SpanKind)
		}
		wantAttrs(t, c, map[string]any{
			"gen_ai.operation.name":      "chat",
			"gen_ai.provider.name":       "openai",
			"gen_ai.request.model":       tracedModelName,
			"gen_ai.response.model":      tracedModelName,
			"gen_ai.usage.input_tokens":  int64(tracedUsageIn),
			"gen_ai.usage.output_tokens": int64(tracedUsageOut),
			"gen_ai.conversation.id":     id,
			"server.address":             "127.0.0.1",
			"agents.usage.cost_usd":      tracedCost,
		})
		if rid := attrs(c)["gen_ai.response.id"].AsString(); !strings.HasPrefix(rid, "chatcmpl-") || responseIDs[rid] {
			t.Errorf("chat's gen_ai.response.id = %q, want the offline model's id for its answer", rid)
		}
		responseIDs[attrs(c)["gen_ai.response.id"].AsString()] = true
		if port := attrs(c)["server.port"].AsInt64(); port <= 0 {
			t.Errorf("chat's server.port = %d", port)
		}
		finishes[strings.Join(attrs(c)["gen_ai.response.finish_reasons"].AsStringSlice(), ",")]++
	}
	if finishes["tool_calls"] != 2 || finishes["stop"] != 1 {
		t.Errorf("finish reasons = %v, want tool_calls twice and stop once", finishes)
	}

	tools := map[string]tracetest.SpanStub{}
	for _, name := range []string{"execute_tool bash_echo", "execute_tool prompt_agent_helper"} {
		got := find(spans, name, id)
		if len(got) != 1 {
			t.Fatalf("%s spans: %d, want 1", name, len(got))
		}
		tools[name] = got[0]
		if got[0].Parent.SpanID() != run.SpanContext.SpanID() {
			t.Errorf("%s's parent = %v, want the run %v", name, got[0].Parent.SpanID(), run.SpanContext.SpanID())
		}
	}
	wantAttrs(t, tools["execute_tool bash_echo"], map[string]any{
		"gen_ai.operation.name": "execute_tool",
		"gen_ai.tool.name":      "bash_echo",
		"gen_ai.tool.call.id":   echoCall.GetId(),
	})
	wantAttrs(t, tools["execute_tool prompt_agent_helper"], map[string]any{
		"gen_ai.operation.name":        "execute_tool",
		"gen_ai.tool.name":             "prompt_agent_helper",
		"gen_ai.tool.call.id":          helperCall.GetId(),
		"agents.tool.child_session.id": childID,
	})

	helperRuns := find(spans, "invoke_agent helper", childID)
	if len(helperRuns) != 1 {
		t.Fatalf("invoke_agent spans of the helper's session: %d, want 1", len(helperRuns))
	}
	helperRun := helperRuns[0]
	if want := tools["execute_tool prompt_agent_helper"].SpanContext.SpanID(); helperRun.Parent.SpanID() != want {
		t.Errorf("helper run's parent = %v, want the tool call that ran it, %v", helperRun.Parent.SpanID(), want)
	}
	wantAttrs(t, helperRun, map[string]any{"gen_ai.agent.name": "helper", "gen_ai.conversation.id": childID})
	helperChats := find(spans, "chat "+tracedModelName, childID)
	if len(helperChats) != 1 || helperChats[0].Parent.SpanID() != helperRun.SpanContext.SpanID() {
		t.Errorf("helper's chat spans = %d, want 1 under the helper's run", len(helperChats))
	}
}

// A message posted over Connect with a traceparent header makes the run
// it starts a child of the caller's span; with the opt-in, the chat span
// records the messages.
func TestPostedMessageOverConnectTracesItsRunUnderTheCaller(t *testing.T) {
	opt, tr := withMemoryTraces(t, true)
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "hello back"}}, opt)
	created, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{Agent: "boss"}))
	if err != nil {
		t.Fatal(err)
	}
	id := created.Msg.GetSession().GetMeta().GetId()

	req := connect.NewRequest(&agentsv1.PostMessageRequest{SessionId: id, Message: &agentsv1.Message{Text: "hello there"}})
	req.Header().Set("traceparent", callerParent)
	if _, err := e.sessions.PostMessage(ctxFor(t), req); err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	spans := tr.await(t, "invoke_agent boss", "chat "+tracedModelName)
	run := find(spans, "invoke_agent boss", id)[0]
	if run.SpanContext.TraceID().String() != callerTrace || run.Parent.SpanID().String() != callerSpan {
		t.Errorf("run in trace %s under %s, want the caller's %s under %s", run.SpanContext.TraceID(), run.Parent.SpanID(), callerTrace, callerSpan)
	}
	wantAttrs(t, run, map[string]any{"agents.run.trigger": "message"})
	chat := find(spans, "chat "+tracedModelName, id)[0]
	in := attrs(chat)["gen_ai.input.messages"].AsString()
	out := attrs(chat)["gen_ai.output.messages"].AsString()
	if !strings.Contains(in, `"role":"user","parts":[{"type":"text","content":"hello there"}]`) {
		t.Errorf("gen_ai.input.messages = %s, want the user's message", in)
	}
	if !strings.Contains(attrs(chat)["gen_ai.system_instructions"].AsString(), bossPrompt) {
		t.Errorf("gen_ai.system_instructions = %s, want the system prompt", attrs(chat)["gen_ai.system_instructions"].AsString())
	}
	if !strings.Contains(out, `"role":"assistant","parts":[{"type":"text","content":"hello back"}],"finish_reason":"stop"`) {
		t.Errorf("gen_ai.output.messages = %s, want the answer", out)
	}
}

// A request without a traceparent starts a trace of its own; a failed
// run's span says so.
func TestFailedRunWithoutCallerIsARootSpanWithAnError(t *testing.T) {
	opt, tr := withMemoryTraces(t, false)
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Error: &fakellm.HTTPError{Status: http.StatusBadRequest, Message: "no"}}}, opt)
	id := e.create("boss", "go").GetMeta().GetId()
	e.wait(id)
	spans := tr.await(t, "invoke_agent boss", "chat "+tracedModelName)
	run := find(spans, "invoke_agent boss", id)[0]
	if run.Parent.IsValid() {
		t.Errorf("run's parent = %v, want none", run.Parent)
	}
	if run.Status.Code != codes.Error {
		t.Errorf("failed run's status = %v, want an error", run.Status)
	}
	wantAttrs(t, run, map[string]any{"error.type": "model_error"})
	chat := find(spans, "chat "+tracedModelName, id)[0]
	if chat.Status.Code != codes.Error {
		t.Errorf("failed chat's status = %v, want an error", chat.Status)
	}
	wantAttrs(t, chat, map[string]any{"error.type": "400"})
}

// A run its budget stopped says so on its span, naming the budget.
func TestARunStoppedByItsBudgetSaysWhichOnItsSpan(t *testing.T) {
	opt, tr := withMemoryTraces(t, false)
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "hi"}}, opt)
	status, _, body := e.do(http.MethodPost, "/v1/sessions?wait=true", `{"agent": "boss", "message": {"text": "go"}, "budget": {"tokens": 1}}`)
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/sessions = %d %s", status, body)
	}
	var created agentsv1.CreateSessionResponse
	if err := readAnswer(body, &created); err != nil {
		t.Fatal(err)
	}
	id := created.GetSession().GetMeta().GetId()
	spans := tr.await(t, "invoke_agent boss")
	run := find(spans, "invoke_agent boss", id)[0]
	wantAttrs(t, run, map[string]any{
		"agents.run.stop_reason":     "budget_exceeded",
		"agents.run.budget":          "session",
		"gen_ai.usage.input_tokens":  int64(0),
		"gen_ai.usage.output_tokens": int64(0),
	})
	// Paused, not failed: the run did what its budget allows.
	if run.Status.Code == codes.Error {
		t.Errorf("a run its budget stopped has status %v, want no error", run.Status)
	}
	if _, ok := attrs(run)["agents.usage.cost_usd"]; ok {
		t.Errorf("a run of a model without a price names a cost")
	}
}
