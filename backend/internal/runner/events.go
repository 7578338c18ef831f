package runner

import (
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/wire"
)

func statusWire(s session.Status) agentsv1.SessionStatus { return wire.Status(s) }

// stoppedEvent announces the end of a run that was not in flight (paused
// or waiting for clients).
func stoppedEvent(status session.Status, reason string) *agentsv1.Event {
	return events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{
		Status: statusWire(status), Reason: reason,
	}}})
}
