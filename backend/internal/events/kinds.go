package events

import agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"

// The kinds of event, one per member of the event's body: the member's
// name with its last underscore a dot (run_stopped is run.stopped,
// tool_call_delta tool_call.delta), as apijson writes the body. A kind is
// an SSE event's name and an event's JSON "kind": clients depend on them.
const (
	KindSessionCreated    = "session.created"
	KindSessionUpdated    = "session.updated"
	KindSessionDeleted    = "session.deleted"
	KindRunStarted        = "run.started"
	KindRunStopped        = "run.stopped"
	KindSessionFailed     = "session.failed"
	KindTextDelta         = "text.delta"
	KindThinkingDelta     = "thinking.delta"
	KindToolStarted       = "tool.started"
	KindToolProgressed    = "tool.progressed"
	KindToolCompleted     = "tool.completed"
	KindCallsDeferred     = "calls.deferred"
	KindSubcallStarted    = "subcall.started"
	KindSubcallCompleted  = "subcall.completed"
	KindSubcallFailed     = "subcall.failed"
	KindMailAccepted      = "mail.accepted"
	KindMailRejected      = "mail.rejected"
	KindAgentsChanged     = "agents.changed"
	KindToolCallDelta     = "tool_call.delta"
	KindCompactionStarted = "compaction.started"
	KindSessionCompacted  = "session.compacted"
	KindScheduleFired     = "schedule.fired"
	KindScheduleChanged   = "schedule.changed"
)

// deltaKinds are the kinds published as deltas (Hub.PublishDelta): not
// logged, placed by the hub's delta counter.
var deltaKinds = [...]string{KindTextDelta, KindThinkingDelta, KindToolCallDelta}

// WithKind sets ev's kind from its body and returns it. Events are built
// through it and never name their kind, so none can carry a kind its body
// disagrees with.
func WithKind(ev *agentsv1.Event) *agentsv1.Event {
	ev.Kind = KindOf(ev)
	return ev
}

// KindOf is the kind of ev's body; "" when it has none.
func KindOf(ev *agentsv1.Event) string {
	switch ev.GetBody().(type) {
	case *agentsv1.Event_SessionCreated:
		return KindSessionCreated
	case *agentsv1.Event_SessionUpdated:
		return KindSessionUpdated
	case *agentsv1.Event_SessionDeleted:
		return KindSessionDeleted
	case *agentsv1.Event_RunStarted:
		return KindRunStarted
	case *agentsv1.Event_RunStopped:
		return KindRunStopped
	case *agentsv1.Event_SessionFailed:
		return KindSessionFailed
	case *agentsv1.Event_TextDelta:
		return KindTextDelta
	case *agentsv1.Event_ThinkingDelta:
		return KindThinkingDelta
	case *agentsv1.Event_ToolStarted:
		return KindToolStarted
	case *agentsv1.Event_ToolProgressed:
		return KindToolProgressed
	case *agentsv1.Event_ToolCompleted:
		return KindToolCompleted
	case *agentsv1.Event_CallsDeferred:
		return KindCallsDeferred
	case *agentsv1.Event_SubcallStarted:
		return KindSubcallStarted
	case *agentsv1.Event_SubcallCompleted:
		return KindSubcallCompleted
	case *agentsv1.Event_SubcallFailed:
		return KindSubcallFailed
	case *agentsv1.Event_MailAccepted:
		return KindMailAccepted
	case *agentsv1.Event_MailRejected:
		return KindMailRejected
	case *agentsv1.Event_AgentsChanged:
		return KindAgentsChanged
	case *agentsv1.Event_ToolCallDelta:
		return KindToolCallDelta
	case *agentsv1.Event_CompactionStarted:
		return KindCompactionStarted
	case *agentsv1.Event_SessionCompacted:
		return KindSessionCompacted
	case *agentsv1.Event_ScheduleFired:
		return KindScheduleFired
	case *agentsv1.Event_ScheduleChanged:
		return KindScheduleChanged
	}
	return ""
}

// Kinds lists every kind, in the order of the body's members.
func Kinds() []string {
	ev := &agentsv1.Event{}
	m := ev.ProtoReflect()
	fields := m.Descriptor().Oneofs().ByName("body").Fields()
	kinds := make([]string, fields.Len())
	for i := range fields.Len() {
		f := fields.Get(i)
		m.Set(f, m.NewField(f))
		kinds[i] = KindOf(ev)
	}
	return kinds
}
