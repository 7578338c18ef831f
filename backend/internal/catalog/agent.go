package catalog

import (
	"encoding/json"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/session"
)

// HelperToolPrefix names the tool that runs a helper agent as a child
// session: prompt_agent_<slug>.
const HelperToolPrefix = "prompt_agent_"

// Agent is an agent file plus everything derived from it.
type Agent struct {
	*agentfile.Agent
	// Model is the endpoint the agent really talks to (the offline model
	// when its key is missing and one is configured).
	Model Model
	// Tools is every tool offered to the model, in offering order.
	Tools  []*Tool
	byName map[string]*Tool
}

// Model is the resolved model endpoint of an agent.
type Model struct {
	Flavor   agentfile.Flavor
	URL      string
	Name     string
	APIKeyID string
	// KeyPresent says whether the server holds the key; false with Offline
	// set means the agent was pointed at the offline model.
	KeyPresent bool
	Offline    bool
}

// Tool returns the tool with this name.
func (a *Agent) Tool(name string) (*Tool, bool) {
	t, ok := a.byName[name]
	return t, ok
}

// Tool is one tool as offered to a model.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments object.
	Parameters json.RawMessage
	Kind       session.ToolKind
	// Source is where the tool comes from: a script path, a helper slug.
	Source string
	// Bash is the described script, for bash tools.
	Bash *bashtool.Tool
	// Helper is the helper agent's slug, for helper tools.
	Helper string
}

// Mode is where calls to the tool run.
func (t *Tool) Mode() session.CallMode {
	if t.Kind == session.ToolClient {
		return session.CallDeferred
	}
	return session.CallAttached
}
