package server

import (
	"context"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/wire"
)

type agentService struct{ s *Server }

func (h *agentService) ListAgents(_ context.Context, _ *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	snap := h.s.catalog.Snapshot()
	return connect.NewResponse(&agentsv1.ListAgentsResponse{Agents: descriptors(snap), Errors: wire.LoadErrors(snap.Errors)}), nil
}

// GetAgent describes one agent with every tool it offers: its MCP servers
// start if they are not running yet, so a server that cannot start shows
// here with the reason.
func (h *agentService) GetAgent(ctx context.Context, req *connect.Request[agentsv1.GetAgentRequest]) (*connect.Response[agentsv1.GetAgentResponse], error) {
	if req.Msg.GetSlug() == "" {
		return nil, errs.Invalid("invalid_argument", "slug is required")
	}
	a, err := h.s.catalog.Get(req.Msg.GetSlug())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.GetAgentResponse{Agent: wire.Agent(a, a.Toolset(ctx, nil), a.MCPStatus(nil))}), nil
}

// ReloadAgents re-reads the agent files for every owner, so with auth on
// it needs an admin token.
func (h *agentService) ReloadAgents(ctx context.Context, _ *connect.Request[agentsv1.ReloadAgentsRequest]) (*connect.Response[agentsv1.ReloadAgentsResponse], error) {
	if !isAdmin(ctx) {
		return nil, errs.PermissionDenied("permission_denied", "reloading the agents needs an admin token")
	}
	snap := h.s.catalog.Reload(ctx)
	if err := h.s.runner.Announce(ctx, wire.AgentsChanged(snap)); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.ReloadAgentsResponse{Agents: descriptors(snap), Errors: wire.LoadErrors(snap.Errors)}), nil
}

// descriptors lists the agents with the tools known so far: listing every
// agent starts no MCP server.
func descriptors(snap *catalog.Snapshot) []*agentsv1.AgentDescriptor {
	agents := snap.Agents()
	out := make([]*agentsv1.AgentDescriptor, 0, len(agents))
	for _, a := range agents {
		out = append(out, wire.Agent(a, a.Known(), a.MCPStatus(nil)))
	}
	return out
}

func (h *agentService) CreateAgent(context.Context, *connect.Request[agentsv1.CreateAgentRequest]) (*connect.Response[agentsv1.CreateAgentResponse], error) {
	return nil, errs.Unimplemented("unimplemented", "stored agents are not available yet")
}

func (h *agentService) UpdateAgent(context.Context, *connect.Request[agentsv1.UpdateAgentRequest]) (*connect.Response[agentsv1.UpdateAgentResponse], error) {
	return nil, errs.Unimplemented("unimplemented", "stored agents are not available yet")
}

func (h *agentService) DeleteAgent(context.Context, *connect.Request[agentsv1.DeleteAgentRequest]) (*connect.Response[agentsv1.DeleteAgentResponse], error) {
	return nil, errs.Unimplemented("unimplemented", "stored agents are not available yet")
}

func (h *agentService) ListAgentVersions(context.Context, *connect.Request[agentsv1.ListAgentVersionsRequest]) (*connect.Response[agentsv1.ListAgentVersionsResponse], error) {
	return nil, errs.Unimplemented("unimplemented", "stored agents are not available yet")
}
