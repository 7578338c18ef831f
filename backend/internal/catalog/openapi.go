package catalog

import (
	"context"
	"fmt"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/openapitool"
)

// addAPIToolboxes offers the operations of the agent's HTTP APIs
// (openApiToolboxes, postgrestToolboxes), those of an on-demand toolbox
// in its toolgroup (see disclosure.go). Each description is read now;
// one that cannot be read is a load problem naming its toolbox, and the
// agent goes without its tools.
func (a *Agent) addAPIToolboxes(ctx context.Context, file *agentfile.Agent, opts Options, report func(string, error)) {
	for _, box := range file.APIToolboxes {
		tools, err := openapitool.Load(ctx, box, openapitool.Options{
			Key: opts.Key, Stored: file.File == "", Within: opts.within,
		})
		if err != nil {
			report(box.Field, fmt.Errorf("the toolbox offers no tools: %w", err))
			continue
		}
		if len(tools) == 0 {
			// Loads, as a builtin toolbox with no capability does, but
			// says so: a misspelt filter would take every tool silently.
			a.groups.warnings = append(a.groups.warnings, &agentfile.Error{File: file.Shown, Agent: a.storedSlug(), Field: box.Field,
				Reason: "the toolbox offers no tool: the description has no operation its filter (and, for PostgREST, its AllowedMethods) keeps"})
			continue
		}
		for _, t := range tools {
			if name := t.Spec().Name; !isToolName(name) {
				report(box.Field, fmt.Errorf("tool %q is not offered: a tool name is at most 64 letters, digits, - and _ (give the toolbox a shorter \"name\", or leave the operation out with a \"filter\")", name))
				continue
			}
			a.addIn(box.Toolgroup, t, report)
		}
	}
}

// isToolName says whether name is 1 to 64 letters, digits, "-" or "_",
// as model APIs take tool names.
func isToolName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
