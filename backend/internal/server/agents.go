package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
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

// CreateAgent validates a definition and stores it as a new agent.
func (h *agentService) CreateAgent(ctx context.Context, req *connect.Request[agentsv1.CreateAgentRequest]) (*connect.Response[agentsv1.CreateAgentResponse], error) {
	if err := h.mayWrite(ctx); err != nil {
		return nil, err
	}
	def := req.Msg.GetDefinition()
	slug, err := h.s.catalog.Validate(ctx, "", []byte(def), false)
	if err != nil {
		return nil, err
	}
	stored, err := h.s.store.CreateStoredAgent(ctx, store.StoredAgent{Slug: slug, Definition: def, Author: owner(ctx), Updated: time.Now()})
	if err != nil {
		return nil, err
	}
	agent, err := h.changed(ctx, stored, false)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.CreateAgentResponse{Agent: agent}), nil
}

// UpdateAgent validates a definition and stores it as the agent's next
// version.
func (h *agentService) UpdateAgent(ctx context.Context, req *connect.Request[agentsv1.UpdateAgentRequest]) (*connect.Response[agentsv1.UpdateAgentResponse], error) {
	if err := h.mayWrite(ctx); err != nil {
		return nil, err
	}
	slug, def := req.Msg.GetSlug(), req.Msg.GetDefinition()
	if slug == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "slug is required")
	}
	if _, err := h.s.catalog.Validate(ctx, slug, []byte(def), true); err != nil {
		return nil, err
	}
	stored, err := h.s.store.UpdateStoredAgent(ctx, store.StoredAgent{Slug: slug, Definition: def, Author: owner(ctx), Updated: time.Now()}, req.Msg.GetExpectedVersion())
	if err != nil {
		return nil, err
	}
	agent, err := h.changed(ctx, stored, false)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.UpdateAgentResponse{Agent: agent}), nil
}

// DeleteAgent deletes a stored agent; its sessions stay. An agent that
// other stored agents name as a helper is not deleted.
func (h *agentService) DeleteAgent(ctx context.Context, req *connect.Request[agentsv1.DeleteAgentRequest]) (*connect.Response[agentsv1.DeleteAgentResponse], error) {
	if err := h.mayWrite(ctx); err != nil {
		return nil, err
	}
	slug := req.Msg.GetSlug()
	if slug == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "slug is required")
	}
	snap := h.s.catalog.Snapshot()
	if err := snap.Writable(slug); err != nil {
		return nil, err
	}
	if deps := snap.Dependents(slug); len(deps) > 0 {
		// Deleting it would silently stop them loading.
		return nil, errs.FailedPrecondition(errs.CodeAgentInUse, "agent %q is a helper of %s: update them to name it no more, then delete it", slug, strings.Join(deps, ", ")).
			With("dependents", strings.Join(deps, ","))
	}
	stored, err := h.s.store.DeleteStoredAgent(ctx, slug, req.Msg.GetExpectedVersion(), time.Now())
	if err != nil {
		return nil, err
	}
	if _, err := h.changed(ctx, stored, true); err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.DeleteAgentResponse{Slug: slug, Version: stored.Version}), nil
}

// ListAgentVersions lists a stored agent's versions; a file agent has
// none.
func (h *agentService) ListAgentVersions(ctx context.Context, req *connect.Request[agentsv1.ListAgentVersionsRequest]) (*connect.Response[agentsv1.ListAgentVersionsResponse], error) {
	slug := req.Msg.GetSlug()
	if slug == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "slug is required")
	}
	if a, err := h.s.catalog.Get(slug); err == nil && a.Source == catalog.SourceFile {
		return connect.NewResponse(&agentsv1.ListAgentVersionsResponse{}), nil
	}
	versions, err := h.s.store.StoredAgentVersions(ctx, slug)
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

// RollbackAgent makes an earlier version current again, as a new
// version holding its definition (restored_from names it): the history
// keeps the rollback as a change of its own.
func (h *agentService) RollbackAgent(ctx context.Context, req *connect.Request[agentsv1.RollbackAgentRequest]) (*connect.Response[agentsv1.RollbackAgentResponse], error) {
	if err := h.mayWrite(ctx); err != nil {
		return nil, err
	}
	slug, version := req.Msg.GetSlug(), req.Msg.GetVersion()
	if slug == "" {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "slug is required")
	}
	if version <= 0 {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "version: %d is not a version (versions start at 1)", version)
	}
	if err := h.s.catalog.Snapshot().Writable(slug); err != nil {
		return nil, err
	}
	old, err := h.s.store.StoredAgentVersion(ctx, slug, version)
	if err != nil {
		return nil, err
	}
	// It must load as it is now: a helper it names may be gone.
	if _, err := h.s.catalog.Validate(ctx, slug, []byte(old.Definition), true); err != nil {
		return nil, err
	}
	stored, err := h.s.store.UpdateStoredAgent(ctx, store.StoredAgent{Slug: slug, Definition: old.Definition, Author: owner(ctx), Updated: time.Now(), RestoredFrom: version}, req.Msg.GetExpectedVersion())
	if err != nil {
		return nil, err
	}
	agent, err := h.changed(ctx, stored, false)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&agentsv1.RollbackAgentResponse{Agent: agent}), nil
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

// changed makes a stored agent's change seen: the catalog reads the
// stored agents again (the next step of each session uses the change),
// clients hear agents.changed, and the other servers on the database
// read them too. It returns the agent as now served.
func (h *agentService) changed(ctx context.Context, a store.StoredAgent, deleted bool) (*agentsv1.AgentDescriptor, error) {
	// The change is stored: reading it back must not stop with the
	// request.
	snap := h.s.catalog.ReloadStored(context.WithoutCancel(ctx))
	if err := h.s.runner.Announce(ctx, wire.StoredAgentChanged(snap, a.Slug, a.Version, deleted)); err != nil {
		return nil, err
	}
	if err := h.s.runner.StoredAgentsChanged(ctx); err != nil {
		h.s.log.Warn("tell the other servers of a changed agent", "agent", a.Slug, "error", err.Error())
	}
	if deleted {
		return nil, nil
	}
	served, err := snap.Get(a.Slug)
	if err != nil {
		// Stored, but refused on reading it back (a helper deleted
		// meanwhile): the load errors say why.
		return nil, fmt.Errorf("agent %q was stored at version %d but does not load: %w", a.Slug, a.Version, err)
	}
	return wire.Agent(served, served.Known(), served.MCPStatus(nil)), nil
}
