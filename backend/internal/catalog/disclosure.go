package catalog

import (
	"slices"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/disclosure"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// groups is what an agent declares of progressive disclosure: which of
// its tools belong to a toolgroup, offered only while a session has the
// group active (see the disclosure package).
type groups struct {
	// list is every group, in the order the file declares them.
	list []disclosure.Group
	// of maps the name of a tool of an on-demand toolbox to its group;
	// bySource the Source of the tools of an on-demand MCP server.
	of       map[string]string
	bySource map[string]string
	// auto are the groups active from a session's start.
	auto []string
	// meta are the meta tools as checks by name see them.
	meta map[string]tool.Tool
	// warnings are the problems found while building the agent's tools
	// that do not stop them (a skill's unknown front matter field).
	warnings []*agentfile.Error
}

// declare adds a group, once.
func (g *groups) declare(group disclosure.Group) {
	if !slices.ContainsFunc(g.list, func(x disclosure.Group) bool { return x.Name == group.Name }) {
		g.list = append(g.list, group)
	}
}

// addIn offers t as part of group ("" for a tool always offered).
func (a *Agent) addIn(group string, t tool.Tool, report func(string, error)) {
	a.add(t, report)
	if group == "" {
		return
	}
	a.groups.declare(disclosure.Group{Name: group})
	if name := t.Spec().Name; a.byName[name] == t {
		if a.groups.of == nil {
			a.groups.of = map[string]string{}
		}
		a.groups.of[name] = group
	}
}

// mcpIn puts every tool of the MCP server in group: an on-demand
// server's tools are known only once it runs, by their Source, which
// mcptools sets to "mcp:<server>".
func (a *Agent) mcpIn(group, server string) {
	source := "mcp:" + server
	if group == "" {
		return
	}
	a.groups.declare(disclosure.Group{Name: group})
	if a.groups.bySource == nil {
		a.groups.bySource = map[string]string{}
	}
	a.groups.bySource[source] = group
}

// groupOf is the toolgroup of a tool, "" for one always offered.
func (a *Agent) groupOf(t tool.Tool) string {
	spec := t.Spec()
	if g, ok := a.groups.of[spec.Name]; ok {
		return g
	}
	return a.groups.bySource[spec.Source]
}

// finishGroups readies the meta tools once every group is declared.
func (a *Agent) finishGroups() {
	if len(a.groups.list) == 0 {
		return
	}
	a.groups.meta = map[string]tool.Tool{}
	for _, t := range disclosure.Prototypes(a.groups.list) {
		a.groups.meta[t.Spec().Name] = t
	}
}

// Toolgroups returns the agent's toolgroups, in declaration order.
func (a *Agent) Toolgroups() []disclosure.Group { return a.groups.list }

// ActiveGroups returns the toolgroups active after a session's turns
// (see disclosure.Active); nil for an agent without groups.
func (a *Agent) ActiveGroups(turns []session.Turn) map[string]bool {
	if len(a.groups.list) == 0 {
		return nil
	}
	return disclosure.Active(turns, a.groups.auto)
}

// Disclose returns the tools of set a session with these active groups
// is offered: the meta tools first, as agents-exe offers them, then
// every tool of set in no group or in an active one. An agent without
// groups offers set as it is.
func (a *Agent) Disclose(set *Toolset, active map[string]bool) *Toolset {
	if len(a.groups.list) == 0 {
		return set
	}
	out := &Toolset{byName: make(map[string]tool.Tool, len(set.list)+3)}
	for _, t := range disclosure.MetaTools(a.groups.list, active) {
		out.add(t)
	}
	for _, t := range set.list {
		if g := a.groupOf(t); g == "" || active[g] {
			out.add(t)
		}
	}
	return out
}

// metaTool returns a meta tool by name, for checks by name.
func (a *Agent) metaTool(name string) (tool.Tool, bool) {
	t, ok := a.groups.meta[name]
	return t, ok
}
