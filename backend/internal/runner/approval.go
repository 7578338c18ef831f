package runner

import (
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
)

// decision is how one call the model asked for is carried out.
type decision struct {
	mode session.CallMode
	// reason, for a deferred call, is stored with its row: why a client
	// answers it (reasonClientTool).
	reason string
}

// decide is the one place between the model's request and execution
// where a call is judged: it stamps the call with its tool's kind and says
// whether the server runs it now (attached) or a client answers it first
// (deferred). The decision is stored with the model's turn, so it holds
// across a restart. Today the tool's own mode decides; an approval policy
// decides here too, turning a call that needs approval into a deferred
// call of its own reason.
func (a *actor) decide(st *step, c llm.ToolCall) (session.ToolCall, decision) {
	call := session.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Mode: session.CallAttached}
	t, ok := st.tools.Get(c.Name)
	if !ok {
		// Unknown: answered with an error when the round starts.
		return call, decision{mode: session.CallAttached}
	}
	call.Kind = t.Spec().Kind
	d := decision{mode: t.Mode()}
	if d.mode == session.CallDeferred {
		d.reason = reasonClientTool
	}
	call.Mode = d.mode
	return call, d
}
