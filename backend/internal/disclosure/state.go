// Package disclosure is progressive disclosure, as agents-exe has it: the
// tools of an on-demand toolbox belong to a toolgroup and are offered to
// a session's model only while the group is active; the model turns
// groups on and off with the meta tools (meta_discover_tools,
// meta_activate_tool, meta_deactivate_tool). Each Agent Skill is such a
// group, "skill:<name>", whose tools read the skill and run its scripts.
//
// Which groups are active is what the session's own history says: its
// meta tool calls that succeeded, in order. The history is stored, in
// full (a compaction summarises what later requests send, never what the
// history holds), so the state survives a restart, a move to another
// server, and a compaction, and a fork starts with its source's groups
// at the fork point; no other copy of it exists to drift.
package disclosure

import (
	"encoding/json"
	"strings"

	"github.com/agents-os/agents/backend/internal/session"
)

// The meta tools, named as agents-exe names them.
const (
	DiscoverName   = "meta_discover_tools"
	ActivateName   = "meta_activate_tool"
	DeactivateName = "meta_deactivate_tool"
)

// The names agents-exe gave skills before they became toolgroups; its
// conversations may hold calls of them, read as the meta calls they
// stand for.
const (
	legacyEnable  = "skill_enable_"
	legacyDisable = "skill_disable_"
)

// SkillPrefix begins the toolgroup of every skill.
const SkillPrefix = "skill:"

// SkillGroup is the toolgroup of the skill name.
func SkillGroup(name string) string { return SkillPrefix + name }

// IsMeta reports whether name is a meta tool's.
func IsMeta(name string) bool {
	return name == DiscoverName || name == ActivateName || name == DeactivateName
}

// Active returns the toolgroups active after the turns: those in initial
// (active from a session's start), then each successful call of
// meta_activate_tool or meta_deactivate_tool applied in the order the
// model made them. A call that failed, was refused or has no result yet
// changes nothing.
func Active(turns []session.Turn, initial []string) map[string]bool {
	active := make(map[string]bool, len(initial))
	for _, g := range initial {
		active[g] = true
	}
	var pending []session.ToolCall
	for _, t := range turns {
		switch {
		case t.LLM != nil:
			// Calls are answered in the user turn that follows their
			// own; any left unanswered are gone with a new model turn.
			pending = pending[:0]
			for _, c := range t.LLM.ToolCalls {
				if _, _, ok := change(c); ok {
					pending = append(pending, c)
				}
			}
		case t.User != nil && len(pending) > 0 && len(t.User.ToolResults) > 0:
			ok := make(map[string]bool, len(t.User.ToolResults))
			for _, r := range t.User.ToolResults {
				ok[r.CallID] = r.Status == session.ResultOK
			}
			for _, c := range pending {
				if !ok[c.ID] {
					continue
				}
				group, on, _ := change(c)
				if on {
					active[group] = true
				} else {
					delete(active, group)
				}
			}
			pending = pending[:0]
		}
	}
	return active
}

// change reads a call that turns a group on or off.
func change(c session.ToolCall) (group string, on, ok bool) {
	switch {
	case c.Name == ActivateName || c.Name == DeactivateName:
		group, ok = GroupArgument(c.Arguments)
		return group, c.Name == ActivateName, ok
	case strings.HasPrefix(c.Name, legacyEnable):
		return SkillGroup(strings.TrimPrefix(c.Name, legacyEnable)), true, true
	case strings.HasPrefix(c.Name, legacyDisable):
		return SkillGroup(strings.TrimPrefix(c.Name, legacyDisable)), false, true
	}
	return "", false, false
}

// GroupArgument reads the toolgroup a meta call names: its arguments
// object's "toolgroup". (The call's result says whether the tool took
// it; this reads only what a successful call named.)
func GroupArgument(arguments string) (string, bool) {
	var args struct {
		Toolgroup *string `json:"toolgroup"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil || args.Toolgroup == nil {
		return "", false
	}
	return *args.Toolgroup, true
}
