package runner

import (
	"strings"
	"sync"

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
	calls     []session.ToolCall
	// stored says the model's turn is in the history now.
	stored bool
}

func (p *progress) add(d llm.Delta) {
	p.text.WriteString(d.Text)
	p.thinking.WriteString(d.Thinking)
	if c := d.ToolCall; c != nil {
		for len(p.calls) <= c.Index {
			p.calls = append(p.calls, session.ToolCall{})
		}
		call := &p.calls[c.Index]
		if c.ID != "" {
			call.ID = c.ID
		}
		if c.Name != "" {
			call.Name = c.Name
		}
		call.Arguments += c.ArgumentsDelta
	}
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
		ToolCalls: append([]session.ToolCall(nil), st.progress.calls...),
	}, pos
}
