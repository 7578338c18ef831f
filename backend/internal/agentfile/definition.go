package agentfile

import (
	"fmt"
	"slices"
)

// Definition is an agent read from JSON text that is no file: a stored
// agent's definition, in the agent file format. Its relative tool paths
// resolve against the working directory, and its helpers are named by
// slug alone: an extraAgents entry's path is not read, and a tool
// directory gives tools but no helper agents.
type Definition struct {
	// Agent is the agent read, without helpers until Resolve; its File is
	// empty.
	Agent  *Agent
	extras []extraRef
}

// ParseDefinition reads a definition as ParseFile reads a file: err is
// the first problem, naming its field; warnings did not stop it.
func (l Loader) ParseDefinition(data []byte) (def *Definition, warnings []*Error, err *Error) {
	work := l.workDir()
	p, warnings, err, _ := parseIn(data, places{fileDir: work, workDir: work, stored: true})
	if err != nil {
		return nil, warnings, err
	}
	p.agent.Warnings = warnings
	return &Definition{Agent: p.agent, extras: p.extras}, warnings, nil
}

// Names are the slugs its extraAgents entries name, as written, whether
// or not an agent has them: what deleting an agent would take from it.
func (d *Definition) Names() []string {
	var out []string
	for _, ref := range d.extras {
		if !slices.Contains(out, ref.slug) {
			out = append(out, ref.slug)
		}
	}
	return out
}

// Resolve sets the agent's helpers from its extraAgents entries, looking
// each slug up with lookup (nil: no agent has it). An entry whose slug no
// agent has, whose bindings its helper does not take, or whose tool name
// another entry offers otherwise, is the error; the helpers are then
// unset.
func (d *Definition) Resolve(lookup func(slug string) *Agent) *Error {
	var helpers []string
	var tools []HelperTool
	seen := map[string]HelperTool{}
	d.Agent.Helpers, d.Agent.HelperTools = nil, nil
	for i := range d.extras {
		ref := &d.extras[i]
		helper := lookup(ref.slug)
		if helper == nil {
			return &Error{Field: ref.slugField(), Reason: fmt.Sprintf("no agent has the slug %q (a stored agent names its helpers by slug: a file agent or another stored agent)", ref.slug)}
		}
		if problem := bindingProblem(ref, helper); problem != nil {
			return problem
		}
		t := ref.tool(helper.Slug)
		if prev, taken := seen[t.Name]; taken {
			if t.Narrowed() || prev.Narrowed() || prev.Slug != t.Slug {
				field := ref.slugField()
				if ref.as != "" {
					field = ref.field("as")
				}
				return &Error{Field: field, Reason: fmt.Sprintf("the tool prompt_agent_%s is already offered by another entry; give this entry an \"as\" of its own", t.Name)}
			}
			continue
		}
		seen[t.Name] = t
		tools = append(tools, t)
		if !slices.Contains(helpers, helper.Slug) {
			helpers = append(helpers, helper.Slug)
		}
	}
	d.Agent.Helpers, d.Agent.HelperTools = helpers, tools
	return nil
}
