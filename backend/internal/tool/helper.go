package tool

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/agents-os/agents/backend/internal/session"
)

// HelperPrefix names the tool that runs a helper agent as a child
// session: prompt_agent_<slug>, or prompt_agent_<as> for a helper an
// agent file renames.
const HelperPrefix = "prompt_agent_"

// promptArgument is the helper tool's one argument, which a binding may
// fix.
const promptArgument = "prompt"

// helperSchema is the parameters of a prompt_agent_* tool; noArguments
// those of one whose prompt is bound. Both are closed: a key they do not
// declare is refused, not ignored.
var (
	helperSchema = json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"What to ask the helper agent."}},"required":["prompt"],"additionalProperties":false}`)
	noArguments  = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
)

// HelperConfig says how a helper agent is offered.
type HelperConfig struct {
	// Agent is the helper's slug; Name, when set, names the tool instead
	// (prompt_agent_<Name>).
	Agent, Name string
	Description string
	// Context are lines added to the system prompt of each child.
	Context []string
	// Bindings are fixed arguments: "prompt", which the model then no
	// longer gives, and params of the helper, set for the child over the
	// caller's.
	Bindings map[string]string
}

// Helper offers a helper agent: a call runs it as a child session of the
// caller and returns its final answer.
type Helper struct {
	cfg HelperConfig
}

// NewHelper offers a helper agent.
func NewHelper(cfg HelperConfig) *Helper {
	if cfg.Name == "" {
		cfg.Name = cfg.Agent
	}
	return &Helper{cfg: cfg}
}

// Spec implements Tool. A bound argument is not in the schema: the model
// cannot give what the agent file fixed.
func (h *Helper) Spec() Spec {
	params := helperSchema
	if _, bound := h.cfg.Bindings[promptArgument]; bound {
		params = noArguments
	}
	return Spec{Name: HelperPrefix + h.cfg.Name, Description: h.cfg.Description, Parameters: params, Kind: session.ToolHelper, Source: h.cfg.Agent}
}

// Mode implements Tool: the server runs the child.
func (h *Helper) Mode() session.CallMode { return session.CallAttached }

// Execute runs the helper, or waits for its child again after a restart
// (the child keeps its narrowing: it is stored with its first turn).
func (h *Helper) Execute(ctx context.Context, call Call) Result {
	if call.Resume != "" {
		return call.Host.Helper(ctx, call, HelperRun{Agent: h.cfg.Agent})
	}
	prompt, bound := h.cfg.Bindings[promptArgument]
	if !bound {
		if prompt = call.Args.String(promptArgument); prompt == "" {
			return Failed(`the helper needs {"prompt": "…"}: a non-empty prompt string`)
		}
	}
	return call.Host.Helper(ctx, call, HelperRun{Agent: h.cfg.Agent, Prompt: prompt, Narrowing: h.narrowing()})
}

// narrowing is what the tool gives each child besides its prompt; nil
// for a helper offered as it is.
func (h *Helper) narrowing() *session.Narrowing {
	params := maps.Clone(h.cfg.Bindings)
	delete(params, promptArgument)
	if len(params) == 0 && len(h.cfg.Context) == 0 {
		return nil
	}
	if len(params) == 0 {
		params = nil
	}
	return &session.Narrowing{Context: h.cfg.Context, Params: params}
}

// Rejoin implements Resumable: the child session goes on across a
// restart, and so does the call waiting for it.
func (h *Helper) Rejoin(ctx context.Context, host Host, callID string) (string, error) {
	return host.HelperChild(ctx, callID)
}

var _ Resumable = (*Helper)(nil)
