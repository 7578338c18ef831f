package tracing

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// Attributes of ours, beside the semantic conventions' (the agents.
// namespace is the product's).
const (
	attrStopReason = attribute.Key("agents.run.stop_reason")
	attrBudget     = attribute.Key("agents.run.budget")
	attrTrigger    = attribute.Key("agents.run.trigger")
	attrChild      = attribute.Key("agents.tool.child_session.id")
	attrSuspended  = attribute.Key("agents.tool.suspended")
	// attrCost is what model calls cost in US dollars, priced as the
	// session's usage is: the conventions name no cost.
	attrCost = attribute.Key("agents.usage.cost_usd")
)

// Tracer records the spans of runs. Its methods are cheap when it
// records nothing: attributes are only built for a recording span.
type Tracer struct {
	tracer trace.Tracer
	// off says nothing is recorded (no exporter): a span started is then
	// the context's own, which ending does nothing to, so a server that
	// traces nothing builds no span names, options or attributes.
	off bool
	// capture records message contents, tool arguments and results
	// (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true).
	capture bool
}

// StartRun starts the invoke_agent span of a run of agent in the
// session conversation, under parent when it is valid (the request that
// started the run, or the tool call of the parent session that runs a
// helper), else as the root of a trace. ctx must carry no span of its
// own; the returned context carries the run's.
func (t *Tracer) StartRun(ctx context.Context, parent trace.SpanContext, agent, conversation, trigger string) (context.Context, trace.Span) {
	if parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	}
	if t.off {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, "invoke_agent "+agent, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		semconv.GenAIOperationNameInvokeAgent,
		semconv.GenAIAgentName(agent),
		semconv.GenAIConversationID(conversation),
		attrTrigger.String(trigger),
	))
}

// RunAgent notes, on a run's span, the agent that runs: its description,
// the provider and model it asks, and its version (a stored agent's; 0,
// a file agent's, names none).
func RunAgent(span trace.Span, flavor agentfile.Flavor, model, description string, version int64) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(
		semconv.GenAIProviderNameKey.String(Provider(flavor)),
		semconv.GenAIRequestModel(model),
	)
	if description != "" {
		span.SetAttributes(semconv.GenAIAgentDescription(description))
	}
	if version > 0 {
		span.SetAttributes(semconv.GenAIAgentVersion(strconv.FormatInt(version, 10)))
	}
}

// RunStopped notes how a run ended (done, paused, waiting, …) and, for a
// run its budget stopped, which budget (session or owner).
func RunStopped(span trace.Span, reason, budget string) {
	span.SetAttributes(attrStopReason.String(reason))
	if budget != "" {
		span.SetAttributes(attrBudget.String(budget))
	}
}

// RunSpent notes, on a run's span, what the run's own model calls spent
// (its helpers' runs note theirs): tokens, and their cost when a price
// is known.
func RunSpent(span trace.Span, u session.Usage) {
	span.SetAttributes(
		semconv.GenAIUsageInputTokens(int(u.Prompt)),
		semconv.GenAIUsageOutputTokens(int(u.Completion)),
	)
	if u.Cost != nil {
		span.SetAttributes(attrCost.Float64(u.Cost.Dollars()))
	}
}

// RunFailed marks a run's span as failed with the failure's code.
func RunFailed(span trace.Span, code, reason string) {
	span.SetAttributes(semconv.ErrorTypeKey.String(code))
	span.SetStatus(codes.Error, reason)
}

// StartChat starts the chat span of one model call of agent's model
// (of flavor, at the endpoint's URL) in the session conversation.
func (t *Tracer) StartChat(ctx context.Context, flavor agentfile.Flavor, endpoint, conversation string, req llm.Request) (context.Context, trace.Span) {
	if t.off {
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx, span := t.tracer.Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		return ctx, span
	}
	span.SetAttributes(
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(Provider(flavor)),
		semconv.GenAIRequestModel(req.Model),
		semconv.GenAIConversationID(conversation),
	)
	if host, port, ok := hostPort(endpoint); ok {
		span.SetAttributes(semconv.ServerAddress(host), semconv.ServerPort(port))
	}
	if req.MaxTokens > 0 {
		span.SetAttributes(semconv.GenAIRequestMaxTokens(req.MaxTokens))
	}
	if req.Temperature != nil {
		span.SetAttributes(semconv.GenAIRequestTemperature(*req.Temperature))
	}
	if t.capture {
		system, input := inputMessages(req.Messages)
		if system != "" {
			span.SetAttributes(semconv.GenAISystemInstructionsKey.String(system))
		}
		span.SetAttributes(semconv.GenAIInputMessagesKey.String(input))
	}
	return ctx, span
}

// EndChat ends a chat span with the model's answer and what it cost (nil
// when no price is known), or its error.
func (t *Tracer) EndChat(span trace.Span, resp llm.Response, cost *session.Nanos, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	if resp.Model != "" {
		span.SetAttributes(semconv.GenAIResponseModel(resp.Model))
	}
	if resp.ID != "" {
		span.SetAttributes(semconv.GenAIResponseID(resp.ID))
	}
	if cost != nil {
		span.SetAttributes(attrCost.Float64(cost.Dollars()))
	}
	u := resp.Usage
	span.SetAttributes(
		semconv.GenAIUsageInputTokens(u.PromptTokens),
		semconv.GenAIUsageOutputTokens(u.CompletionTokens),
	)
	if u.CachedTokens > 0 {
		span.SetAttributes(semconv.GenAIUsageCacheReadInputTokens(u.CachedTokens))
	}
	if u.ReasoningTokens > 0 {
		span.SetAttributes(semconv.GenAIUsageReasoningOutputTokens(u.ReasoningTokens))
	}
	if resp.FinishReason != "" {
		span.SetAttributes(semconv.GenAIResponseFinishReasons(resp.FinishReason))
	}
	if t.capture && err == nil {
		span.SetAttributes(semconv.GenAIOutputMessagesKey.String(outputMessages(resp)))
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		// A call cut short on purpose (an interrupt, a cancel) is not a
		// failure of the model.
		span.SetAttributes(semconv.ErrorTypeKey.String(modelErrorType(err)))
		span.SetStatus(codes.Error, err.Error())
	}
}

// StartTool starts the execute_tool span of one tool call of the session
// conversation. A helper's run started under the returned context is a
// child of the span.
func (t *Tracer) StartTool(ctx context.Context, call session.ToolCall, conversation string) (context.Context, trace.Span) {
	if t.off {
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx, span := t.tracer.Start(ctx, "execute_tool "+call.Name, trace.WithSpanKind(trace.SpanKindInternal))
	if !span.IsRecording() {
		return ctx, span
	}
	span.SetAttributes(
		semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(call.Name),
		semconv.GenAIToolCallID(call.ID),
		semconv.GenAIToolType("function"),
		semconv.GenAIConversationID(conversation),
	)
	if t.capture {
		span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(string(call.Arguments)))
	}
	return ctx, span
}

// EndTool ends an execute_tool span with the call's result; stopped says
// the call did not finish here (the server stops, or the helper's child
// waits for a client) and is taken up again later.
func (t *Tracer) EndTool(span trace.Span, res session.ToolResult, stopped bool) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	if res.ChildSessionID != "" {
		span.SetAttributes(attrChild.String(res.ChildSessionID))
	}
	if stopped {
		span.SetAttributes(attrSuspended.Bool(true))
		return
	}
	if t.capture {
		span.SetAttributes(semconv.GenAIToolCallResultKey.String(res.Text))
	}
	if res.Status == session.ResultError {
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		// The result's text may hold what the call saw: it is recorded
		// only with the contents.
		span.SetStatus(codes.Error, "the tool call failed")
	}
}

// LogAttrs are the trace_id and span_id attributes of span's context for
// a logger's With; none for a span of no trace.
func LogAttrs(span trace.Span) []any {
	sc := span.SpanContext()
	if !sc.IsValid() {
		return nil
	}
	return []any{"trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String()}
}

// Provider is the gen_ai.provider.name of a flavor of model API.
// Moonshot has no name in the conventions yet; moonshot_ai follows
// theirs (mistral_ai, x_ai).
func Provider(f agentfile.Flavor) string {
	switch f {
	case agentfile.FlavorMistralV1:
		return semconv.GenAIProviderNameMistralAI.Value.AsString()
	case agentfile.FlavorClaudeV1:
		return semconv.GenAIProviderNameAnthropic.Value.AsString()
	case agentfile.FlavorKimiV1:
		return "moonshot_ai"
	}
	return semconv.GenAIProviderNameOpenAI.Value.AsString()
}

// modelErrorType is the error.type of a failed model call: few values,
// so traces can be grouped by them.
func modelErrorType(err error) string {
	var api *llm.APIError
	switch {
	case errors.As(err, &api):
		return strconv.Itoa(api.Status)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, llm.ErrCallTooLong):
		return "timeout"
	case errors.Is(err, llm.ErrIdleTimeout):
		return "idle_timeout"
	case errors.Is(err, llm.ErrOutputTooLarge):
		return "output_too_large"
	case errors.Is(err, llm.ErrTruncated), errors.Is(err, llm.ErrInterrupted):
		return "stream_broken"
	}
	return semconv.ErrorTypeOther.Value.AsString()
}

// Attributes of a compaction's span.
const (
	attrCompactReason = attribute.Key("agents.compaction.reason")
	attrTokensBefore  = attribute.Key("agents.compaction.tokens_before")
)

// StartCompaction starts the span of a compaction of the session
// conversation (under the run's span that ctx carries): the summary's
// chat span goes under it.
func (t *Tracer) StartCompaction(ctx context.Context, conversation, reason string, tokens int64) (context.Context, trace.Span) {
	if t.off {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, "compact "+conversation, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		semconv.GenAIConversationID(conversation),
		attrCompactReason.String(reason),
		attrTokensBefore.Int64(tokens),
	))
}

// EndCompaction ends a compaction's span once its summary call answered,
// or failed.
func EndCompaction(span trace.Span, err error) {
	defer span.End()
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, err.Error())
	}
}

// hostPort is the server an endpoint's URL names, with the scheme's port
// when it gives none.
func hostPort(endpoint string) (string, int, bool) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return "", 0, false
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		switch u.Scheme {
		case "https":
			port = 443
		case "http":
			port = 80
		default:
			return u.Hostname(), 0, false
		}
	}
	return u.Hostname(), port, true
}
