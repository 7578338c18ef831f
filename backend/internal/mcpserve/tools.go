package mcpserve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"connectrpc.com/connect"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/api/client"
	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// toolPrefix starts the name of every agent's tool.
const toolPrefix = "ask_"

// maxToolName is the longest tool name MCP allows.
const maxToolName = 128

// ToolName is the MCP tool of the agent slug: ask_<slug>, every character
// MCP does not allow in a tool name (letters, digits, _ - .) replaced by
// an underscore, cut to the allowed length.
func ToolName(slug string) string {
	var b strings.Builder
	b.WriteString(toolPrefix)
	for _, r := range slug {
		if b.Len() == maxToolName {
			break
		}
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// toolState is what a registered tool was made from: a tool is replaced
// only when it changes.
type toolState struct {
	slug, description string
	params            string // the declared params, as the schema shows them
}

// askInput is the input of every ask_<slug> tool.
type askInput struct {
	Prompt    string            `json:"prompt" jsonschema:"what to ask the agent"`
	SessionID string            `json:"session_id,omitempty" jsonschema:"continue this session (the session_id an earlier call returned) instead of starting a new one"`
	Params    map[string]string `json:"params,omitempty" jsonschema:"session params, name to value (secrets such as tokens are kept in memory only)"`
}

// askOutput is the structured result of every ask_<slug> tool.
type askOutput struct {
	Answer    string `json:"answer" jsonschema:"the agent's final answer"`
	SessionID string `json:"session_id" jsonschema:"the session that ran the prompt: give it as session_id to continue the conversation"`
}

// sync makes the tools the root agents the server lists now: new agents
// get a tool, changed ones a new description, vanished ones lose theirs.
// The SDK tells the connected clients the list changed.
func (s *Server) sync(ctx context.Context) error {
	res, err := s.client.Agents.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{}))
	if err != nil {
		return fmt.Errorf("list the agents: %w", client.Describe(err))
	}
	want := map[string]*agentsv1.AgentDescriptor{}
	for _, a := range res.Msg.GetAgents() {
		if a.GetParent() != "" {
			continue // a helper only runs for the agent that declares it
		}
		name := ToolName(a.GetSlug())
		if other, dup := want[name]; dup {
			s.log.Warn("two agents make the same MCP tool name; serving the first", "tool", name, "served", other.GetSlug(), "skipped", a.GetSlug())
			continue
		}
		want[name] = a
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []string
	for name := range s.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(s.tools, name)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveTools(gone...)
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		a := want[name]
		state := toolState{slug: a.GetSlug(), description: description(a), params: paramsKey(a)}
		if s.tools[name] == state {
			continue
		}
		tool, err := askTool(name, a)
		if err != nil {
			return fmt.Errorf("agent %s: %w", a.GetSlug(), err)
		}
		mcp.AddTool(s.mcp, tool, s.ask(a.GetSlug()))
		s.tools[name] = state
	}
	return nil
}

// follow syncs the tools whenever the agents change, and whenever it
// cannot be sure they did not (a reconnection, events missed), until ctx
// ends.
func (s *Server) follow(ctx context.Context) {
	updates := s.client.Subscribe(ctx, &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER})
	for u := range updates {
		changed := u.Snapshot != nil ||
			(u.State != nil && u.State.Connected) ||
			(u.Event != nil && u.Event.GetAgentsChanged() != nil)
		if !changed {
			continue
		}
		if err := s.sync(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("MCP tools not updated", "error", err.Error())
		}
	}
}

// description is the tool's description: the agent's announce.
func description(a *agentsv1.AgentDescriptor) string {
	if d := strings.TrimSpace(a.GetAnnounce()); d != "" {
		return d
	}
	return "Ask the agent " + a.GetSlug() + "."
}

// paramsKey sums up the declared params, so a change of them renews the
// tool.
func paramsKey(a *agentsv1.AgentDescriptor) string {
	var b strings.Builder
	for _, p := range a.GetParams() {
		fmt.Fprintf(&b, "%s\x00%s\x00%t\x00%t\x00", p.GetName(), p.GetDescription(), p.GetSecret(), p.GetRequired())
	}
	return b.String()
}

// askTool describes the agent's tool; the params the agent declares are
// named in its input schema.
func askTool(name string, a *agentsv1.AgentDescriptor) (*mcp.Tool, error) {
	schema, err := jsonschema.For[askInput](nil)
	if err != nil {
		return nil, err
	}
	if declared := a.GetParams(); len(declared) > 0 {
		params := schema.Properties["params"]
		params.Properties = map[string]*jsonschema.Schema{}
		for _, p := range declared {
			desc := p.GetDescription()
			if p.GetRequired() {
				desc = strings.TrimSpace(desc + " (required to start a run)")
			}
			if p.GetSecret() {
				desc = strings.TrimSpace(desc + " (secret: kept in memory only)")
			}
			params.Properties[p.GetName()] = &jsonschema.Schema{Type: "string", Description: desc}
		}
	}
	return &mcp.Tool{
		Name:        name,
		Title:       a.GetSlug(),
		Description: description(a),
		InputSchema: schema,
	}, nil
}
