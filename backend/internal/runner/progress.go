package runner

import (
	"strings"
	"sync"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// progress is what the model has streamed in the step so far. The model
// call's goroutine writes it and publishes each delta under mu; a view
// reads it and the hub's position under mu too, so the two agree.
type progress struct {
	mu        sync.Mutex
	turnIndex int
	text      strings.Builder
	thinking  strings.Builder
	calls     streamedCalls
	// stored says the model's turn is in the history now.
	stored bool
}

// add takes a delta of the model and returns the event that tells
// clients of it, nil when it adds nothing they could see.
func (p *progress) add(d llm.Delta) *agentsv1.Event {
	p.text.WriteString(d.Text)
	p.thinking.WriteString(d.Thinking)
	turn := int32(p.turnIndex)
	switch c := d.ToolCall; {
	case d.Text != "":
		// The most frequent event of all: its messages are one
		// allocation.
		ev := &struct {
			ev    agentsv1.Event
			body  agentsv1.Event_TextDelta
			delta agentsv1.TextDelta
		}{}
		ev.delta = agentsv1.TextDelta{Text: d.Text, TurnIndex: turn}
		ev.body.TextDelta = &ev.delta
		ev.ev.Body = &ev.body
		return events.WithKind(&ev.ev)
	case d.Thinking != "":
		return events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_ThinkingDelta{ThinkingDelta: &agentsv1.ThinkingDelta{Text: d.Thinking, TurnIndex: turn}}})
	case c != nil:
		id, name, changed := p.calls.add(c.Index, c.ID, c.Name, c.ArgumentsDelta)
		if !changed {
			return nil
		}
		return events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_ToolCallDelta{ToolCallDelta: &agentsv1.ToolCallDelta{
			TurnIndex: turn, CallIndex: int32(c.Index), CallId: id, Name: name, Arguments: c.ArgumentsDelta,
		}}})
	}
	return nil
}

// streamedCalls are the tool calls of a step as the model writes them,
// folded from their pieces the way a client folds tool_call.delta
// events: an id or a name replaces what was known of the call, and its
// arguments grow by each piece. The holder's step (progress) and the
// step another server follows from the deltas (remoteStep) fold them
// alike, so their in_progress agree.
type streamedCalls []*streamedCall

type streamedCall struct {
	id, name  string
	arguments strings.Builder
}

// maxStreamedCalls bounds the calls of a step kept while they are
// written: a piece of a call beyond it (which no model writes, but a
// delta from the network could claim) is dropped rather than grown
// into. The stored turn has every call.
const maxStreamedCalls = 1024

// add folds a piece of the call at index in. It returns the call's id
// and name where the piece changed them (empty where not), and whether
// it changed anything, a call just begun included.
func (cs *streamedCalls) add(index int, id, name, arguments string) (newID, newName string, changed bool) {
	if index < 0 || index >= maxStreamedCalls {
		return "", "", false
	}
	for len(*cs) <= index {
		*cs = append(*cs, &streamedCall{})
		changed = true
	}
	c := (*cs)[index]
	if id != "" && id != c.id {
		c.id, newID, changed = id, id, true
	}
	if name != "" && name != c.name {
		c.name, newName, changed = name, name, true
	}
	if arguments != "" {
		c.arguments.WriteString(arguments)
		changed = true
	}
	return newID, newName, changed
}

// snapshot returns the calls as written so far; nil without any.
func (cs streamedCalls) snapshot() []session.ToolCall {
	if len(cs) == 0 {
		return nil
	}
	out := make([]session.ToolCall, len(cs))
	for i, c := range cs {
		out[i] = session.ToolCall{ID: c.id, Name: c.name, Arguments: c.arguments.String()}
	}
	return out
}

// InProgress is the part of the step in flight that is not stored yet.
type InProgress struct {
	TurnIndex int
	Text      string
	Thinking  string
	ToolCalls []session.ToolCall
	// Results are the round's calls that already finished.
	Results []session.ToolResult
}

// inProgress returns the step in flight with the hub's position, read
// together; without a step only the position.
func (a *actor) inProgress() (*InProgress, events.Position) {
	if a.run == nil || a.run.step == nil {
		return nil, a.r.hub.Position()
	}
	st := a.run.step
	st.progress.mu.Lock()
	defer st.progress.mu.Unlock()
	pos := a.r.hub.Position()
	if st.progress.stored {
		out := &InProgress{TurnIndex: st.turnIndex + 1}
		for _, cs := range st.calls {
			if cs.result != nil {
				out.Results = append(out.Results, *cs.result)
			}
		}
		return out, pos
	}
	return &InProgress{
		TurnIndex: st.turnIndex,
		Text:      st.progress.text.String(),
		Thinking:  st.progress.thinking.String(),
		ToolCalls: st.progress.calls.snapshot(),
	}, pos
}
