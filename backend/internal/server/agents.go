package server

import (
	"context"
	"strings"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/wire"
)

type agentService struct{ s *Server }

func (h *agentService) ListAgents(_ context.Context, _ *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	snap := h.s.catalog.Snapshot()
	list := descriptors(snap)
	for i, a := range snap.Agents() {
		h.s.applied(list[i].GetModel(), a)
	}
	return connect.NewResponse(&agentsv1.ListAgentsResponse{Agents: list, Errors: wire.LoadErrors(snap.Errors)}), nil
}

// GetAgent describes one agent with every tool it offers: its MCP servers
// start if they are not running yet, so a server that cannot start shows
// here with the reason.
func (h *agentService) GetAgent(ctx context.Context, req *connect.Request[agentsv1.GetAgentRequest]) (*connect.Response[agentsv1.GetAgentResponse], error) {
	if req.Msg.GetSlug() == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "slug is required")
	}
	a, err := h.s.catalog.Get(req.Msg.GetSlug())
	if err != nil {
		return nil, err
	}
	d := wire.Agent(a, a.Toolset(ctx, nil), a.MCPStatus(nil))
	h.s.applied(d.GetModel(), a)
	return connect.NewResponse(&agentsv1.GetAgentResponse{Agent: d}), nil
}

// applied sets a model's limits to those the server applies: a window a
// provider stated (in its context_length_exceeded answer) when it is
// smaller than the agent's.
func (s *Server) applied(m *agentsv1.ModelDescriptor, a *catalog.Agent) {
	lim, settings := s.runner.ModelLimits(a)
	m.ContextWindow, m.MaxOutputTokens, m.LimitsSource = lim.ContextWindow, lim.MaxOutputTokens, lim.Source
	m.CompactThreshold = settings.Threshold
}

// ReloadAgents re-reads the agent files for every owner, so with auth on
// it needs an admin token.
func (h *agentService) ReloadAgents(ctx context.Context, _ *connect.Request[agentsv1.ReloadAgentsRequest]) (*connect.Response[agentsv1.ReloadAgentsResponse], error) {
	if !isAdmin(ctx) {
		return nil, errs.PermissionDenied(errs.CodePermissionDenied, "reloading the agents needs an admin token")
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

// CreateAgent stores a definition as a new agent.
func (h *agentService) CreateAgent(ctx context.Context, req *connect.Request[agentsv1.CreateAgentRequest]) (*connect.Response[agentsv1.CreateAgentResponse], error) {
	if err := h.mayWrite(ctx); err != nil {
		return nil, err
	}
	a, err := h.s.agents.Create(ctx, owner(ctx), req.Msg.GetDefinition())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.CreateAgentResponse{Agent: served(a)}), nil
}

// UpdateAgent stores a definition as the agent's next version.
func (h *agentService) UpdateAgent(ctx context.Context, req *connect.Request[agentsv1.UpdateAgentRequest]) (*connect.Response[agentsv1.UpdateAgentResponse], error) {
	if err := h.mayWrite(ctx); err != nil {
		return nil, err
	}
	a, err := h.s.agents.Update(ctx, owner(ctx), req.Msg.GetSlug(), req.Msg.GetDefinition(), req.Msg.GetExpectedVersion())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.UpdateAgentResponse{Agent: served(a)}), nil
}

// DeleteAgent deletes a stored agent; its sessions stay.
func (h *agentService) DeleteAgent(ctx context.Context, req *connect.Request[agentsv1.DeleteAgentRequest]) (*connect.Response[agentsv1.DeleteAgentResponse], error) {
	if err := h.mayWrite(ctx); err != nil {
		return nil, err
	}
	version, err := h.s.agents.Delete(ctx, req.Msg.GetSlug(), req.Msg.GetExpectedVersion())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.DeleteAgentResponse{Slug: req.Msg.GetSlug(), Version: version}), nil
}

// ListAgentVersions lists a stored agent's versions.
func (h *agentService) ListAgentVersions(ctx context.Context, req *connect.Request[agentsv1.ListAgentVersionsRequest]) (*connect.Response[agentsv1.ListAgentVersionsResponse], error) {
	versions, err := h.s.agents.Versions(ctx, req.Msg.GetSlug())
	if err != nil {
		return nil, err
	}
	out := &agentsv1.ListAgentVersionsResponse{}
	for _, v := range versions {
		out.Versions = append(out.Versions, &agentsv1.AgentVersion{
			Slug: utf8Text(v.Slug), Version: v.Version, Definition: utf8Text(v.Definition),
			CreateTime: wire.Timestamp(v.Created), Author: utf8Text(v.Author), Current: v.Current, RestoredFrom: v.RestoredFrom,
		})
	}
	return connect.NewResponse(out), nil
}

// RollbackAgent makes an earlier version current again, as a new version.
func (h *agentService) RollbackAgent(ctx context.Context, req *connect.Request[agentsv1.RollbackAgentRequest]) (*connect.Response[agentsv1.RollbackAgentResponse], error) {
	if err := h.mayWrite(ctx); err != nil {
		return nil, err
	}
	a, err := h.s.agents.Rollback(ctx, owner(ctx), req.Msg.GetSlug(), req.Msg.GetVersion(), req.Msg.GetExpectedVersion())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.RollbackAgentResponse{Agent: served(a)}), nil
}

// served describes an agent as a change left it, with the tools known so
// far.
func served(a *catalog.Agent) *agentsv1.AgentDescriptor {
	return wire.Agent(a, a.Known(), a.MCPStatus(nil))
}

// utf8Text is stored text as an answer can carry it. A version an older
// server stored without checking may not be UTF-8, and an answer holding
// it would not encode at all; with its bad bytes shown as U+FFFD the
// history still reads, and is how such an agent is mended.
func utf8Text(s string) string {
	return strings.ToValidUTF8(s, "\uFFFD")
}

// mayWrite refuses a caller that may not change agents: with auth on,
// agents are every owner's, so only an admin may.
func (h *agentService) mayWrite(ctx context.Context) error {
	if !isAdmin(ctx) {
		return errs.PermissionDenied(errs.CodePermissionDenied, "changing the agents needs an admin token")
	}
	return nil
}
