package server

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
)

// Every label a metric takes from an event comes from a fixed set: a
// value outside it is counted as other.
func TestMetricsLabelsComeFromFixedSets(t *testing.T) {
	m := NewMetrics(nil, events.New(events.Options{}))
	for _, ev := range []*agentsv1.Event{
		{Kind: "run.stopped", Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Reason: "done"}}},
		{Kind: "run.stopped", Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Reason: "because I said so"}}},
		{Kind: "session.failed", Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Code: "model_error"}}},
		{Kind: "session.failed", Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Code: "made_up_code"}}},
		{Kind: "made.up"},
	} {
		m.countEvent(ev)
	}
	for _, c := range []struct {
		what string
		got  float64
	}{
		{`runs_stopped{reason="done"}`, testutil.ToFloat64(m.runsStopped.WithLabelValues("done"))},
		{`runs_stopped{reason="other"}`, testutil.ToFloat64(m.runsStopped.WithLabelValues("other"))},
		{`runs_failed{code="model_error"}`, testutil.ToFloat64(m.runsFailed.WithLabelValues("model_error"))},
		{`runs_failed{code="other"}`, testutil.ToFloat64(m.runsFailed.WithLabelValues("other"))},
		{`events{kind="other"}`, testutil.ToFloat64(m.eventsByKind.WithLabelValues("other"))},
	} {
		if c.got != 1 {
			t.Errorf("%s = %v, want 1", c.what, c.got)
		}
	}
	// No other series: the made-up values made none of their own.
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"runs_stopped", testutil.CollectAndCount(m.runsStopped), 2},
		{"runs_failed", testutil.CollectAndCount(m.runsFailed), 2},
		{"events", testutil.CollectAndCount(m.eventsByKind), 3},
	} {
		if c.got != c.want {
			t.Errorf("%s has %d series, want %d", c.what, c.got, c.want)
		}
	}
	// Every kind the server publishes is in the set of kinds.
	for _, kind := range []string{"session.created", "text.delta", "thinking.delta", "tool_call.delta", "tool.progressed", "calls.deferred", "subcall.failed", "mail.rejected", "agents.changed"} {
		if got := m.kinds.of(kind); got != kind {
			t.Errorf("kind %s is counted as %s", kind, got)
		}
	}
}
