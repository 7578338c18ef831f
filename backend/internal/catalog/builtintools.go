package catalog

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/devtools"
	"github.com/agents-os/agents/backend/internal/luatool"
	"github.com/agents-os/agents/backend/internal/sqlitetool"
	"github.com/agents-os/agents/backend/internal/systools"
	"github.com/agents-os/agents/backend/internal/tool"
)

// addBuiltin offers the tools of the agent's builtin toolboxes, those of
// an on-demand one in its toolgroup (see disclosure.go); bash is
// what the agent's bash tools run with, and so do its commands (the
// sandbox's policy included).
func (a *Agent) addBuiltin(file *agentfile.Agent, opts Options, bash tool.BashRuntime, report func(string, error)) {
	workDir := opts.WorkDir
	if workDir == "" {
		workDir, _ = os.Getwd()
	}
	for i, box := range file.BuiltinToolboxes {
		field := fmt.Sprintf("contents.builtinToolboxes[%d]", i)
		if (box.Kind == agentfile.SystemToolboxKind || box.Kind == agentfile.DeveloperToolboxKind) && len(box.Capabilities) == 0 {
			continue // nothing to offer; the file's warning says so
		}
		switch box.Kind {
		case agentfile.SqliteToolboxKind:
			tools, err := sqlitetool.Tools(box, opts.SQLite)
			if err != nil {
				report(field, err)
				continue
			}
			for _, t := range tools {
				a.addIn(box.Toolgroup, t, report)
			}
		case agentfile.SystemToolboxKind:
			a.addIn(box.Toolgroup, systools.New(box, systools.Runtime{WorkDir: workDir, PassEnv: file.PassEnv, Reaper: bash.Reaper, Sandbox: bash.Sandbox, Policy: bash.Policy}), report)
		case agentfile.DeveloperToolboxKind:
			a.addIn(box.Toolgroup, devtools.New(box, workDir), report)
		case agentfile.LuaToolboxKind:
			a.addIn(box.Toolgroup, luatool.New(box, workDir, a.toolForScript), report)
		}
	}
}

// toolForScript finds the tool a Lua script calls among the agent's own
// (its MCP servers' included). A tool an approval policy holds is not
// callable from a script: the script cannot wait for the approval, and
// the call must not run unchecked.
func (a *Agent) toolForScript(ctx context.Context, call tool.Call, name string) (tool.Tool, error) {
	for _, p := range a.Approvals {
		if p.Tool == name {
			return nil, errors.New("calls of it wait for approval, which a script cannot wait for")
		}
	}
	if t, ok := a.byName[name]; ok {
		return t, nil
	}
	if t, ok := a.Toolset(ctx, call.Session.Params).Get(name); ok {
		return t, nil
	}
	return nil, luatool.ErrNoSuchTool
}

// checkBuiltin refuses a stored agent whose builtin toolboxes would
// reach past what the operator allows: an API call must not be a way to
// run a command or read and write any file. A SQLite database must lie
// under a directory allowed for stored agents' programs; a command, a
// directory listing and a developer toolbox are not for stored agents.
func (c *Catalog) checkBuiltin(a *agentfile.Agent) *agentfile.Error {
	for i, box := range a.BuiltinToolboxes {
		field := fmt.Sprintf("contents.builtinToolboxes[%d]", i)
		switch box.Kind {
		case agentfile.SqliteToolboxKind:
			if why := c.outside(box.Sqlite.Path); why != "" {
				return &agentfile.Error{Field: field, Reason: why}
			}
			if root := box.Sqlite.StorageRoot; root != "" {
				if why := c.outside(root); why != "" {
					return &agentfile.Error{Field: field, Reason: why}
				}
			}
		case agentfile.SystemToolboxKind:
			for _, capability := range box.Capabilities {
				if capability == "execute-command" || capability == "list-directory" {
					return &agentfile.Error{Field: field, Reason: fmt.Sprintf("a stored agent may not have the %s capability: it reaches past the directories this server allows", capability)}
				}
			}
		case agentfile.DeveloperToolboxKind:
			return &agentfile.Error{Field: field, Reason: "a stored agent may not have a DeveloperToolbox: it reads and writes files past the directories this server allows"}
		case agentfile.LuaToolboxKind:
			if box.Sandbox.Predicate.Kind != agentfile.PredAlwaysDeny {
				return &agentfile.Error{Field: field, Reason: "a stored agent's LuaToolbox may not have a file sandbox: its scripts would read and write files past the directories this server allows"}
			}
		}
	}
	return nil
}
