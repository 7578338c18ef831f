package tool

import (
	"context"
	"encoding/json"

	"github.com/agents-os/agents/backend/internal/session"
)

// HelperPrefix names the tool that runs a helper agent as a child
// session: prompt_agent_<slug>.
const HelperPrefix = "prompt_agent_"

// helperSchema is the parameters of every prompt_agent_<slug> tool.
var helperSchema = json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"What to ask the helper agent."}},"required":["prompt"]}`)

// Helper offers a helper agent: a call runs it as a child session of the
// caller and returns its final answer.
type Helper struct {
	agent       string
	description string
}

// NewHelper offers the helper agent with this slug.
func NewHelper(agent, description string) *Helper {
	return &Helper{agent: agent, description: description}
}

// Spec implements Tool.
func (h *Helper) Spec() Spec {
	return Spec{Name: HelperPrefix + h.agent, Description: h.description, Parameters: helperSchema, Kind: session.ToolHelper, Source: h.agent}
}

// Mode implements Tool: the server runs the child.
func (h *Helper) Mode() session.CallMode { return session.CallAttached }

// Execute runs the helper, or waits for its child again after a restart.
func (h *Helper) Execute(ctx context.Context, call Call) Result {
	if call.Resume != "" {
		return call.Host.Helper(ctx, call, h.agent, "")
	}
	var args struct {
		Prompt string `json:"prompt"`
	}
	if err := call.DecodeArguments(&args); err != nil || args.Prompt == "" {
		return Failed(`the helper needs {"prompt": "…"}: a non-empty prompt string`)
	}
	return call.Host.Helper(ctx, call, h.agent, args.Prompt)
}

// Rejoin implements Resumable: the child session goes on across a
// restart, and so does the call waiting for it.
func (h *Helper) Rejoin(ctx context.Context, host Host, callID string) (string, error) {
	return host.HelperChild(ctx, callID)
}

var _ Resumable = (*Helper)(nil)
