package webhooks

import (
	"slices"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
)

// The events a webhook may subscribe to, and the event kinds of the
// stream they stand for: a webhook is a client that cares about a run's
// outcome, not its every delta.
const (
	// NameRunStopped: every run.stopped (a run ended without failing,
	// whatever its reason).
	NameRunStopped = events.KindRunStopped
	// NameRunFailed: session.failed (a run failed).
	NameRunFailed = "run.failed"
	// NameCallWaiting: calls.deferred (a run waits for a client tool's
	// answer or an approval).
	NameCallWaiting = "call.waiting"
	// NameBudgetExceeded: run.stopped with reason budget_exceeded.
	NameBudgetExceeded = "budget.exceeded"
	// NameSessionIdle: run.stopped whose session is ready, waiting for
	// input (not waiting for calls, nor paused).
	NameSessionIdle = "session.idle"
	// NameScheduleFired: schedule.fired (a schedule started a session or
	// posted to one).
	NameScheduleFired = events.KindScheduleFired
	// NameAgentChanged: agents.changed (agents reloaded, a stored agent
	// created, updated or deleted).
	NameAgentChanged = "agent.changed"
)

// Names lists every name a webhook may subscribe to.
func Names() []string {
	return []string{NameRunStopped, NameRunFailed, NameCallWaiting, NameBudgetExceeded,
		NameSessionIdle, NameScheduleFired, NameAgentChanged}
}

// namesOf returns the names an event of the log answers to; none for
// the kinds no webhook is sent.
func namesOf(ev store.Event) ([]string, error) {
	switch ev.Kind {
	case events.KindSessionFailed:
		return []string{NameRunFailed}, nil
	case events.KindCallsDeferred:
		return []string{NameCallWaiting}, nil
	case events.KindScheduleFired:
		return []string{NameScheduleFired}, nil
	case events.KindAgentsChanged:
		return []string{NameAgentChanged}, nil
	case events.KindRunStopped:
	default:
		return nil, nil
	}
	var body agentsv1.Event
	if err := proto.Unmarshal(ev.Body, &body); err != nil {
		return nil, err
	}
	names := []string{NameRunStopped}
	stopped := body.GetRunStopped()
	if stopped.GetReason() == "budget_exceeded" {
		names = append(names, NameBudgetExceeded)
	}
	if stopped.GetStatus() == agentsv1.SessionStatus_SESSION_STATUS_READY {
		names = append(names, NameSessionIdle)
	}
	return names, nil
}

// wants says whether w is sent an event of owner (and session) that
// answers to names.
func wants(w store.Webhook, ev store.Event, names []string) bool {
	if ev.Seq <= w.AfterSeq {
		return false
	}
	serverWide := ev.Owner == "" && ev.SessionID == ""
	if !w.ServerWide && ev.Owner != w.Owner && !serverWide {
		return false
	}
	for _, n := range names {
		if slices.Contains(w.Events, n) {
			return true
		}
	}
	return false
}
