package runner

import (
	"context"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tracing"
)

// A run is traced as one invoke_agent span, from the start of the run to
// its end (closeRun), with a chat span per model call and an
// execute_tool span per tool call the server runs under it: the run's
// context carries its span, and every step and call derives from it.
//
// The span's parent is the origin of the command that started the run:
// the span context of the request (its traceparent, read by the server),
// or, for a helper's child, the parent's execute_tool span, whose context
// the helper tool creates the child with. Only the command in hand has an
// origin: a run started later (woken by mail when a run slot frees,
// taken up after a restart, taken over from another server) is the root
// of a trace of its own.

// startRunSpan starts the span of a run the command in hand opens under
// ctx, which holds no span.
func (a *actor) startRunSpan(ctx context.Context, trigger agentsv1.RunTrigger) (context.Context, trace.Span) {
	how := strings.ToLower(strings.TrimPrefix(trigger.String(), "RUN_TRIGGER_"))
	ctx, span := a.r.tracer.StartRun(ctx, a.origin, a.st.meta.Agent, a.id, how)
	if a.agent != nil {
		tracing.RunAgent(span, a.agent.Model.Flavor, a.agent.Model.Name, a.agent.Announce, a.agent.Version)
	}
	return ctx, span
}

// log is the runner's logger; during a run that is traced, its lines
// carry the run's trace and span ids.
func (a *actor) log() *slog.Logger {
	if a.run != nil && a.run.span.IsRecording() {
		return a.r.log.With(tracing.LogAttrs(a.run.span)...)
	}
	return a.r.log
}

// chatCost is what a model call's answer cost, priced as the session's
// usage is (see actor.spent), for its chat span: nil when the span
// records nothing or no price is known.
func (b Budgets) chatCost(span trace.Span, resp llm.Response, agentModel string) *session.Nanos {
	if !span.IsRecording() {
		return nil
	}
	return b.priced(usageOf(resp), resp.Model, agentModel).Cost
}

// traceSpent adds what a model call of the run spent to the run's sum,
// which its span notes at its end; nothing when the span records
// nothing.
func (r *run) traceSpent(u session.Usage) {
	if r.span.IsRecording() {
		r.spent = r.spent.Add(u)
	}
}
