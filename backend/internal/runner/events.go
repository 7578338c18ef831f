package runner

import (
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/wire"
)

// emit publishes an event about the actor's session.
func (a *actor) emit(ev *agentsv1.Event) {
	a.r.emitFor(a.id, a.st.meta.Owner, ev)
}

// emitFor publishes an event about a session. Events are published after
// what they report is stored, so a snapshot never misses it.
func (r *Runner) emitFor(sessionID, owner string, ev *agentsv1.Event) {
	ev.SessionId = sessionID
	ev.Owner = owner
	r.hub.Publish(ev)
}

// emitUpdated publishes the session's metadata, with the turn just added.
func (a *actor) emitUpdated(head *session.Turn) {
	body := &agentsv1.SessionUpdated{Meta: wire.Meta(a.st.meta)}
	if head != nil {
		body.HeadTurn = wire.Turn(*head)
	}
	a.emit(&agentsv1.Event{Kind: "session.updated", Body: &agentsv1.Event_SessionUpdated{SessionUpdated: body}})
}

func statusWire(s session.Status) agentsv1.SessionStatus { return wire.Status(s) }

// emitStopped announces the end of a run that was not in flight (paused or
// waiting for clients).
func (a *actor) emitStopped(status session.Status, reason string) {
	a.emit(&agentsv1.Event{Kind: "run.stopped", Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{
		Status: statusWire(status), Reason: reason,
	}}})
}
