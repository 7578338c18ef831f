package catalog

import (
	"context"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/tool"
)

// Source says where an agent comes from.
type Source int

// The sources of agents.
const (
	// SourceFile is an agent file (or a helper one names): read-only to
	// the API.
	SourceFile Source = iota + 1
	// SourceStored is an agent stored in the database.
	SourceStored
)

// Agent is an agent definition plus everything derived from it.
type Agent struct {
	*agentfile.Agent
	// Source says where the definition comes from.
	Source Source
	// Version, Definition, Created and Updated are a stored agent's (see
	// Stored); zero for a file agent.
	Version          int64
	Definition       string
	Created, Updated time.Time
	// Generation is a stored agent's (see Stored); 0 for a file agent.
	Generation int64
	// Model is the endpoint the agent really talks to (the offline model
	// when its key is missing and one is configured).
	Model Model
	// Compaction is how the agent's sessions are compacted, every number
	// set for the model's limits; ThresholdSource says where its
	// Threshold comes from (LimitsAgent, LimitsConfig or
	// ThresholdComputed).
	Compaction      Compaction
	ThresholdSource string
	// compaction is the agent's settings over the server's, before
	// Complete: what CompactionFor completes for other limits.
	compaction Compaction
	// static is every tool known from the files alone (scripts, helpers,
	// system and client tools), in offering order.
	static []tool.Tool
	byName map[string]tool.Tool
	// own is static as a Toolset, built once (see buildAgent): every step of
	// an agent without MCP servers is offered this one.
	own *Toolset
	// mcp are the agent's MCP servers, whose tools are known once the
	// server runs.
	mcp []*mcptools.Toolbox
	// groups are its toolgroups, for progressive disclosure.
	groups groups
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
	// Limits are the model's, as configured for this agent (an offline
	// agent keeps those of the model it names).
	Limits Limits
}

// CompactionFor returns the agent's compaction settings completed for
// other limits of its model, such as a window learned from a provider's
// answer: the agent's and the server's settings still apply, and what
// they leave out follows the new window.
func (a *Agent) CompactionFor(l Limits) Compaction {
	return a.compaction.Complete(l)
}

// Toolset returns the tools a step offers its model, for a session with
// these params: the agent's own, then those of its MCP servers, which
// start on this first need. A server that cannot start offers nothing;
// its status says why, and the other tools are offered.
func (a *Agent) Toolset(ctx context.Context, params map[string]string) *Toolset {
	if len(a.mcp) == 0 && a.own != nil {
		return a.own
	}
	set := a.staticSet()
	for _, box := range a.mcp {
		tools, _ := box.Tools(ctx, params)
		for _, t := range tools {
			set.add(t)
		}
	}
	return set
}

// Known is Toolset without starting any server: what clients are shown
// of an agent nobody uses yet.
func (a *Agent) Known() *Toolset {
	set := a.staticSet()
	for _, box := range a.mcp {
		for _, t := range box.Known(nil) {
			set.add(t)
		}
	}
	return set
}

// MCPStatus reports each MCP server of the agent, in declaration order,
// for a session with these params (nil: none).
func (a *Agent) MCPStatus(params map[string]string) []mcptools.Status {
	out := make([]mcptools.Status, len(a.mcp))
	for i, box := range a.mcp {
		out[i] = box.Status(params)
	}
	return out
}

// staticSet returns a new Toolset of the agent's static tools.
func (a *Agent) staticSet() *Toolset {
	set := &Toolset{byName: make(map[string]tool.Tool, len(a.static))}
	for _, t := range a.static {
		set.add(t)
	}
	return set
}

// Toolset is the tools offered at one step, by name. It is not changed
// once it is returned: steps share one.
type Toolset struct {
	list   []tool.Tool
	byName map[string]tool.Tool
}

// add offers t unless a tool of its name is offered already (a clash the
// catalog reported for the agent's own tools).
func (s *Toolset) add(t tool.Tool) {
	name := t.Spec().Name
	if _, dup := s.byName[name]; dup {
		return
	}
	s.byName[name] = t
	s.list = append(s.list, t)
}

// List returns the tools in offering order.
func (s *Toolset) List() []tool.Tool { return s.list }

// Get returns the tool with this name.
func (s *Toolset) Get(name string) (tool.Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// storedSlug is the slug a stored agent's problems name it by; "" for a
// file agent, whose problems name its file.
func (a *Agent) storedSlug() string {
	if a.File == "" {
		return a.Slug
	}
	return ""
}
