package disclosure

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// Group is a toolgroup an agent declares.
type Group struct {
	Name string
	// Skill is the skill the group offers, with its description: what
	// the model reads up front to choose it. Empty for a toolbox's group.
	Skill, Description string
}

// Source is the Spec.Source of the meta tools.
const Source = "disclosure"

// MetaTools returns the meta tools a step offers, given the agent's
// groups and those active now, as agents-exe offers them:
// meta_activate_tool while a group is inactive (its description lists
// them, each skill with its description), meta_deactivate_tool while one
// is active, and meta_discover_tools whenever there are groups.
func MetaTools(groups []Group, active map[string]bool) []tool.Tool {
	if len(groups) == 0 {
		return nil
	}
	var on, off []Group
	for _, g := range groups {
		if active[g.Name] {
			on = append(on, g)
		} else {
			off = append(off, g)
		}
	}
	var out []tool.Tool
	if len(off) > 0 {
		out = append(out, &switchTool{on: true, offered: off, all: groups, active: active})
	}
	if len(on) > 0 {
		out = append(out, &switchTool{on: false, offered: on, all: groups, active: active})
	}
	return append(out, &discoverTool{groups: groups, active: active})
}

// Prototypes are the meta tools as an agent with groups has them, for
// what checks an agent's tools by name (approval policies): every one,
// whatever a session's state.
func Prototypes(groups []Group) []tool.Tool {
	if len(groups) == 0 {
		return nil
	}
	return []tool.Tool{
		&switchTool{on: true, offered: groups, all: groups},
		&switchTool{on: false, offered: groups, all: groups},
		&discoverTool{groups: groups},
	}
}

const toolgroupSchema = `{"type":"object","properties":{"toolgroup":{"type":"string","description":%s}},"required":["toolgroup"],"additionalProperties":false}`

// switchTool is meta_activate_tool (on) or meta_deactivate_tool. Its
// call only answers; the state it changes is the history's (see Active).
type switchTool struct {
	on      bool
	offered []Group
	all     []Group
	active  map[string]bool
}

func (s *switchTool) Spec() tool.Spec {
	name, verb, lead := DeactivateName, "deactivate", "Deactivate a toolgroup to hide its tools."
	if s.on {
		name, verb, lead = ActivateName, "activate", "Activate a toolgroup to access its tools."
	}
	list := describeGroups(s.offered)
	arg, _ := json.Marshal(fmt.Sprintf("Name of the toolgroup to %s. Available: %s", verb, names(s.offered)))
	return tool.Spec{
		Name:        name,
		Description: lead + " Available toolgroups: " + list,
		Parameters:  json.RawMessage(fmt.Sprintf(toolgroupSchema, arg)),
		Kind:        session.ToolSystem,
		Source:      Source,
	}
}

func (s *switchTool) Mode() session.CallMode { return session.CallAttached }

func (s *switchTool) Execute(_ context.Context, call tool.Call) tool.Result {
	group := call.Args.String("toolgroup")
	if !slices.ContainsFunc(s.all, func(g Group) bool { return g.Name == group }) {
		return tool.Failed(fmt.Sprintf("unknown toolgroup %q; available: %s", group, names(s.all)))
	}
	switch {
	case s.on && s.active[group]:
		return tool.OK(fmt.Sprintf("Toolgroup '%s' is already active", group))
	case s.on:
		return tool.OK(fmt.Sprintf("Toolgroup '%s' activated; its tools are offered from the next step", group))
	case !s.active[group]:
		return tool.OK(fmt.Sprintf("Toolgroup '%s' is not active", group))
	}
	return tool.OK(fmt.Sprintf("Toolgroup '%s' deactivated", group))
}

// discoverTool is meta_discover_tools: the groups, which are active, and
// what each skill is for.
type discoverTool struct {
	groups []Group
	active map[string]bool
}

func (d *discoverTool) Spec() tool.Spec {
	return tool.Spec{
		Name:        DiscoverName,
		Description: "List all available toolgroups. Toolgroups: " + names(d.groups),
		Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Kind:        session.ToolSystem,
		Source:      Source,
	}
}

func (d *discoverTool) Mode() session.CallMode { return session.CallAttached }

func (d *discoverTool) Execute(context.Context, tool.Call) tool.Result {
	type skill struct {
		Toolgroup   string `json:"toolgroup"`
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	answer := struct {
		Toolgroups []string `json:"toolgroups"`
		Active     []string `json:"active"`
		Skills     []skill  `json:"skills,omitempty"`
	}{Toolgroups: []string{}, Active: []string{}}
	for _, g := range d.groups {
		answer.Toolgroups = append(answer.Toolgroups, g.Name)
		if d.active[g.Name] {
			answer.Active = append(answer.Active, g.Name)
		}
		if g.Skill != "" {
			answer.Skills = append(answer.Skills, skill{Toolgroup: g.Name, Name: g.Skill, Description: g.Description})
		}
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return tool.Failed(err.Error())
	}
	return tool.OK(string(b))
}

func names(groups []Group) string {
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g.Name
	}
	return strings.Join(out, ", ")
}

// describeGroups lists groups for a description: a skill's with what it
// is for, so the model can choose one without reading it first.
func describeGroups(groups []Group) string {
	var b strings.Builder
	for i, g := range groups {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(g.Name)
		if g.Description != "" {
			b.WriteString(" (")
			b.WriteString(strings.Join(strings.Fields(g.Description), " "))
			b.WriteString(")")
		}
	}
	return b.String()
}
