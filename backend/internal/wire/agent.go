// Package wire converts between the domain types of the backend and the
// protobuf messages of api/agents/v1. The server and the runner's event
// publishing share it, so a domain value has exactly one wire form.
package wire

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tokens"
)

// Agent converts a catalog agent to its descriptor, with the tools it
// offers and the state of its MCP servers. API key values never leave the
// server; only the key id and whether it is present do.
func Agent(a *catalog.Agent, tools *catalog.Toolset, servers []mcptools.Status) *agentsv1.AgentDescriptor {
	d := &agentsv1.AgentDescriptor{
		Slug:     a.Slug,
		Announce: a.Announce,
		Model: &agentsv1.ModelDescriptor{
			Flavor:           string(a.Model.Flavor),
			Url:              a.Model.URL,
			Name:             a.Model.Name,
			ApiKeyId:         a.Model.APIKeyID,
			ApiKeyPresent:    a.Model.KeyPresent,
			Offline:          a.Model.Offline,
			ContextWindow:    a.Model.Limits.ContextWindow,
			MaxOutputTokens:  a.Model.Limits.MaxOutputTokens,
			LimitsSource:     a.Model.Limits.Source,
			CompactThreshold: a.Compaction.Threshold,
			TokenCounting:    tokens.ForModel(a.Model.Name).Method(),
		},
		SystemPrompt:     a.SystemPrompt,
		Helpers:          a.Helpers,
		File:             a.File,
		Parent:           a.Parent,
		MailInToolResult: a.MailInToolResult,
		MaxSteps:         int32(a.MaxSteps),
		Warnings:         LoadErrors(a.Warnings),
		Source:           agentsv1.AgentSource_AGENT_SOURCE_FILE,
	}
	if b := a.Budget; b.Limited() {
		d.Budget = &agentsv1.AgentBudget{Tokens: b.Tokens, AutoResume: b.AutoResume}
		if b.Cost != nil {
			d.Budget.CostUsd = proto.Float64(b.Cost.Dollars())
		}
	}
	if a.Source == catalog.SourceStored {
		d.Source = agentsv1.AgentSource_AGENT_SOURCE_STORED
		d.Version, d.Definition, d.Generation = a.Version, a.Definition, a.Generation
		d.CreateTime, d.UpdateTime = Timestamp(a.Created), Timestamp(a.Updated)
	}
	for _, t := range tools.List() {
		spec := t.Spec()
		d.Tools = append(d.Tools, &agentsv1.ToolDescriptor{
			Name:        spec.Name,
			Description: spec.Description,
			Parameters:  schemaStruct(spec.Parameters),
			Kind:        ToolKind(spec.Kind),
			Source:      spec.Source,
		})
	}
	for _, p := range a.Params {
		d.Params = append(d.Params, &agentsv1.ParamDescriptor{Name: p.Name, Description: p.Description, Secret: p.Secret, Required: p.Required})
	}
	for _, m := range servers {
		d.McpServers = append(d.McpServers, &agentsv1.McpServerDescriptor{
			Name: m.Name, Transport: m.Transport, Target: m.Target,
			State: string(m.State), Error: m.Error, ToolCount: int32(m.Tools),
		})
	}
	return d
}

// AgentsChanged is the agents.changed event for a catalog snapshot.
func AgentsChanged(snap *catalog.Snapshot) *agentsv1.Event {
	changed := &agentsv1.AgentsChanged{Errors: LoadErrors(snap.Errors)}
	for _, a := range snap.Agents() {
		changed.Slugs = append(changed.Slugs, a.Slug)
	}
	return events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_AgentsChanged{AgentsChanged: changed}})
}

// StoredAgentChanged is the agents.changed event after a stored agent was
// created, updated (at version) or deleted.
func StoredAgentChanged(snap *catalog.Snapshot, slug string, version int64, deleted bool) *agentsv1.Event {
	ev := AgentsChanged(snap)
	changed := ev.GetAgentsChanged()
	changed.Agent, changed.Version, changed.Deleted = slug, version, deleted
	return ev
}

// LoadErrors converts load problems.
func LoadErrors(list []*agentfile.Error) []*agentsv1.AgentLoadError {
	out := make([]*agentsv1.AgentLoadError, 0, len(list))
	for _, e := range list {
		reason := e.Reason
		if e.Line > 0 {
			reason = fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Reason)
		}
		out = append(out, &agentsv1.AgentLoadError{File: e.File, Agent: e.Agent, Field: e.Field, Reason: reason})
	}
	return out
}

// ToolKind converts a tool kind.
func ToolKind(k session.ToolKind) agentsv1.ToolKind {
	switch k {
	case session.ToolBash:
		return agentsv1.ToolKind_TOOL_KIND_BASH
	case session.ToolHelper:
		return agentsv1.ToolKind_TOOL_KIND_HELPER
	case session.ToolClient:
		return agentsv1.ToolKind_TOOL_KIND_CLIENT
	case session.ToolMCP:
		return agentsv1.ToolKind_TOOL_KIND_MCP
	case session.ToolSystem:
		return agentsv1.ToolKind_TOOL_KIND_SYSTEM
	case session.ToolHTTP:
		return agentsv1.ToolKind_TOOL_KIND_HTTP
	}
	return agentsv1.ToolKind_TOOL_KIND_UNSPECIFIED
}

// schemaStruct decodes a JSON schema into a Struct; a schema that is not a
// JSON object (the loaders reject those) becomes an empty one.
func schemaStruct(raw []byte) *structpb.Struct {
	s := &structpb.Struct{}
	if len(raw) > 0 {
		if err := s.UnmarshalJSON(raw); err != nil {
			return &structpb.Struct{}
		}
	}
	return s
}
