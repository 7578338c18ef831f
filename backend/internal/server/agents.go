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

func (h *agentService) GetAgent(_ context.Context, req *connect.Request[agentsv1.GetAgentRequest]) (*connect.Response[agentsv1.GetAgentResponse], error) {
	if req.Msg.GetSlug() == "" {
		return nil, errs.Invalid("invalid_argument", "slug is required")
	}
	a, err := h.s.catalog.Get(req.Msg.GetSlug())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.GetAgentResponse{Agent: wire.Agent(a)}), nil
}

// ReloadAgents re-reads the agent files for every owner, so with auth on
// it needs an admin token.
func (h *agentService) ReloadAgents(ctx context.Context, _ *connect.Request[agentsv1.ReloadAgentsRequest]) (*connect.Response[agentsv1.ReloadAgentsResponse], error) {
	if !isAdmin(ctx) {
		return nil, errs.PermissionDenied("permission_denied", "reloading the agents needs an admin token")
	}
	snap := h.s.catalog.Reload(ctx)
	changed := &agentsv1.AgentsChanged{Errors: wire.LoadErrors(snap.Errors)}
	for _, a := range snap.Agents() {
		changed.Slugs = append(changed.Slugs, a.Slug)
	}
	if err := h.s.runner.Announce(ctx, &agentsv1.Event{Kind: "agents.changed", Body: &agentsv1.Event_AgentsChanged{AgentsChanged: changed}}); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.ReloadAgentsResponse{Agents: descriptors(snap), Errors: wire.LoadErrors(snap.Errors)}), nil
}

func descriptors(snap *catalog.Snapshot) []*agentsv1.AgentDescriptor {
	agents := snap.Agents()
	out := make([]*agentsv1.AgentDescriptor, 0, len(agents))
	for _, a := range agents {
		out = append(out, wire.Agent(a))
	}
	return out
}
