package catalog

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/tool"
)

// files is the file half of a snapshot: the agent files as loaded and
// built. A change of the stored agents keeps it as it is.
type files struct {
	set      *agentfile.Set
	agents   []*Agent
	errors   []*agentfile.Error
	warnings []*agentfile.Error
}

// buildFiles turns a loaded set into catalog agents.
func buildFiles(ctx context.Context, set *agentfile.Set, opts Options) *files {
	f := &files{
		set:      set,
		errors:   append([]*agentfile.Error(nil), set.Errors...),
		warnings: append([]*agentfile.Error(nil), set.Warnings...),
	}
	agents, problems := buildAll(ctx, set.List(), set.Get, opts)
	for i, a := range agents {
		f.errors = append(f.errors, problems[i]...)
		if a != nil {
			a.Source = SourceFile
			f.agents = append(f.agents, a)
		}
	}
	return f
}

// buildAll builds agents, describing their scripts concurrently (a
// describe may take a while); an agent whose tools fail to describe keeps
// the others, and each failure is one load error. A nil agent was refused:
// its problems say why. lookup finds the helpers the agents name.
func buildAll(ctx context.Context, list []*agentfile.Agent, lookup func(string) *agentfile.Agent, opts Options) ([]*Agent, [][]*agentfile.Error) {
	agents := make([]*Agent, len(list))
	problems := make([][]*agentfile.Error, len(list))
	var wg sync.WaitGroup
	for i, a := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agents[i], problems[i] = buildAgent(ctx, lookup, a, opts)
		}()
	}
	wg.Wait()
	return agents, problems
}

// assemble makes a snapshot of the file agents and the stored ones.
func assemble(f *files, stored []*Agent, storedErrors []*agentfile.Error) *Snapshot {
	snap := &Snapshot{
		bySlug:   map[string]*Agent{},
		files:    f,
		Errors:   append(append([]*agentfile.Error(nil), f.errors...), storedErrors...),
		Warnings: append([]*agentfile.Error(nil), f.warnings...),
	}
	snap.every = snap.bySlug
	for _, a := range append(append([]*Agent(nil), f.agents...), stored...) {
		snap.bySlug[a.Slug] = a
		snap.sorted = append(snap.sorted, a)
		if a.Source == SourceStored {
			snap.Warnings = append(snap.Warnings, a.Warnings...)
		} else {
			snap.Warnings = append(snap.Warnings, a.groups.warnings...)
		}
	}
	sort.Slice(snap.sorted, func(i, j int) bool { return snap.sorted[i].Slug < snap.sorted[j].Slug })
	sortErrors(snap.Errors)
	sortErrors(snap.Warnings)
	return snap
}

func buildAgent(ctx context.Context, lookup func(string) *agentfile.Agent, file *agentfile.Agent, opts Options) (*Agent, []*agentfile.Error) {
	a := &Agent{Agent: file, Model: resolveModel(file, opts), byName: map[string]tool.Tool{}}
	a.resolveCompaction(opts.Compaction)
	var problems []*agentfile.Error
	report := func(field string, err error) {
		e := toLoadError(file.Shown, field, err)
		if file.File == "" {
			e.Agent = file.Slug
		}
		problems = append(problems, e)
	}

	bash := opts.Bash
	bash.Within = opts.within
	policy, err := sandboxPolicy(file, bash.Sandbox)
	if err != nil {
		// Rather than run its tools unconfined, describe included.
		report("contents.sandbox.required", err)
		return nil, problems
	}
	bash.Policy = policy
	describe := bash.Describer()
	var scripts []bashtool.Tool
	var scriptGroups []string // the toolgroup of each script
	for i, box := range file.BashToolboxes {
		field := fmt.Sprintf("contents.bashToolboxes[%d]", i)
		var tools []bashtool.Tool
		var errs []error
		switch box.Kind {
		case agentfile.FileSystemDirectory:
			tools, errs = describe.Dir(ctx, box.Path, box.BasenameFilter)
		case agentfile.SingleTool:
			tools, errs = describe.File(ctx, box.Path)
		}
		for _, err := range errs {
			report(field, err)
		}
		scripts = append(scripts, tools...)
		for range tools {
			scriptGroups = append(scriptGroups, box.Toolgroup)
		}
	}
	if file.ToolDirectory != "" {
		tools, errs := describe.Dir(ctx, file.ToolDirectory, "")
		for _, err := range errs {
			report("contents.toolDirectory", err)
		}
		scripts = append(scripts, tools...)
	}
	for i, s := range scripts {
		s.PassEnv = file.PassEnv
		group := ""
		if i < len(scriptGroups) {
			group = scriptGroups[i]
		}
		a.addIn(group, tool.NewBash(s, bash), report)
	}
	for _, h := range file.HelperTools {
		helper := lookup(h.Slug)
		if helper == nil {
			continue // its file did not load; that error is already reported
		}
		a.add(tool.NewHelper(tool.HelperConfig{
			Agent: h.Slug, Name: h.Name, Description: helperDescription(helper),
			Context: h.With, Bindings: h.Bindings,
		}), report)
	}
	for _, name := range file.OSTools {
		t, ok := tool.System(name)
		if !ok {
			report("contents.osTools", fmt.Errorf("no operating system tool %q here", name))
			continue
		}
		a.add(t, report)
	}
	a.addBuiltin(file, opts, bash, report)
	for _, ct := range file.ClientTools {
		a.add(tool.NewClient(ct.Name, ct.Description, ct.Parameters), report)
	}
	for i, server := range file.MCPServers {
		if opts.MCP == nil {
			report(fmt.Sprintf("contents.mcpServers[%d]", i), fmt.Errorf("MCP server %s: MCP servers are not available here", server.Name))
			continue
		}
		box := opts.MCP.Toolbox(server, file).Within(opts.within).Confined(policy)
		a.mcp = append(a.mcp, box)
		a.mcpIn(server.Toolgroup, box.Name())
	}
	a.addAPIToolboxes(ctx, file, opts, report)
	a.addSkills(ctx, file, bash, opts.within, report)
	a.finishGroups()
	a.checkScriptTools(file)
	a.withBuildWarnings()
	if unknown := a.checkApprovals(); len(unknown) > 0 {
		// A policy on a tool the agent lacks is most likely a misspelt
		// name: the calls it meant to hold would run unchecked.
		return nil, append(problems, unknown...)
	}
	a.own = a.staticSet()
	return a, problems
}

// sandboxPolicy is what the agent's file allows its tools, or nil when
// they run unconfined: the file turns the sandbox off, or the server
// cannot confine and the file does not require it. Bash tools and MCP
// servers, kinds older than the sandbox, keep the network unless the
// file turns it off.
func sandboxPolicy(file *agentfile.Agent, sb *sandbox.Sandbox) (*sandbox.Policy, error) {
	settings := file.Sandbox
	if settings.Disabled {
		return nil, nil
	}
	if st := sb.Status(); !st.Available {
		if settings.Required {
			return nil, fmt.Errorf("the agent requires the tool sandbox, which is unavailable here (%s); it is not loaded rather than run its tools unconfined", st.Problem)
		}
		return nil, nil
	}
	p := &sandbox.Policy{
		Read:    settings.Readable,
		Write:   settings.Writable,
		Network: settings.Network == nil || *settings.Network,
		Limits: sandbox.Limits{
			CPUSeconds: settings.Limits.CPUSeconds,
			MemoryMB:   settings.Limits.MemoryMB,
			Processes:  settings.Limits.Processes,
			FileSizeMB: settings.Limits.FileSizeMB,
		},
	}
	return p, nil
}

// checkApprovals returns a problem for each approval policy naming a tool
// the agent does not have, or a rule on an argument no call of the tool
// can give. An MCP tool is known only once its server runs, so any name
// under a declared server's prefix is taken.
func (a *Agent) checkApprovals() []*agentfile.Error {
	var out []*agentfile.Error
	for i, p := range a.Approvals {
		t, ok := a.byName[p.Tool]
		if !ok {
			t, ok = a.metaTool(p.Tool)
		}
		if !ok && !a.mcpName(p.Tool) {
			out = append(out, &agentfile.Error{File: a.Shown, Agent: a.storedSlug(), Field: fmt.Sprintf("contents.approvals[%d].tool", i),
				Reason: fmt.Sprintf("the agent has no tool %q; it is not loaded, so that no call meant to wait for approval runs unchecked", p.Tool)})
			continue
		}
		for _, r := range p.When {
			if !ok {
				break
			}
			if why := tool.ArgumentProblem(t.Spec(), r.Arg); why != "" {
				out = append(out, &agentfile.Error{File: a.Shown, Agent: a.storedSlug(), Field: fmt.Sprintf("contents.approvals[%d].when", i),
					Reason: fmt.Sprintf("the rule on %q can never match: %s; the agent is not loaded, so that no call meant to wait for approval runs unchecked", r.Arg, why)})
			}
		}
	}
	return out
}

// checkScriptTools warns of each name a LuaToolbox's allowedTools gives
// that is none of the agent's tools: most likely a misspelt name, whose
// calls from a script could only be not-found. A helper under
// agents-exe's io_ name is the helper's tool; an MCP tool is known only
// once its server runs, so any name under a server's prefix is taken.
func (a *Agent) checkScriptTools(file *agentfile.Agent) {
	for i, box := range file.BuiltinToolboxes {
		if box.Kind != agentfile.LuaToolboxKind {
			continue
		}
		for j, name := range box.Lua.AllowedTools {
			if _, ok := a.byName[name]; ok {
				continue
			}
			if h, ok := strings.CutPrefix(name, "io_"+tool.HelperPrefix); ok {
				if _, ok := a.byName[tool.HelperPrefix+h]; ok {
					continue
				}
			}
			if _, ok := a.metaTool(name); ok || a.mcpName(name) {
				continue
			}
			a.groups.warnings = append(a.groups.warnings, &agentfile.Error{File: file.Shown, Agent: a.storedSlug(),
				Field:  fmt.Sprintf("contents.builtinToolboxes[%d].contents.allowedTools[%d]", i, j),
				Reason: fmt.Sprintf("the agent has no tool %q: a script's call of it is not-found", name)})
		}
	}
}

// mcpName reports whether name is a tool name under the prefix of one of
// the agent's MCP servers: the prefix and something after it (the bare
// prefix names no tool, and an approval of it would hold nothing).
func (a *Agent) mcpName(name string) bool {
	for _, box := range a.mcp {
		if prefix := mcptools.ToolName(box.Name(), ""); len(name) > len(prefix) && strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// add offers a tool unless its name is taken: the model could not tell two
// tools of one name apart.
func (a *Agent) add(t tool.Tool, report func(string, error)) {
	spec := t.Spec()
	if err := tool.CheckSchema(spec.Parameters); err != nil {
		report("contents", fmt.Errorf("tool %q from %s is not offered: its %v, and its calls' arguments could not be checked", spec.Name, spec.Source, err))
		return
	}
	if prev, dup := a.byName[spec.Name]; dup {
		report("contents", fmt.Errorf("tool %q from %s clashes with the one from %s; the second is not offered", spec.Name, spec.Source, prev.Spec().Source))
		return
	}
	a.byName[spec.Name] = t
	a.static = append(a.static, t)
}

func helperDescription(helper *agentfile.Agent) string {
	if helper.Announce != "" {
		return helper.Announce
	}
	return "Ask the helper agent " + helper.Slug + "."
}

func resolveModel(file *agentfile.Agent, opts Options) Model {
	m := Model{Flavor: file.Flavor, URL: file.ModelURL, Name: file.ModelName, APIKeyID: file.APIKeyID}
	m.Limits = resolveLimits(file, opts.Models)
	m.KeyPresent = file.APIKeyID == "" || (opts.HasKey != nil && opts.HasKey(file.APIKeyID))
	if !m.KeyPresent && opts.OfflineModelURL != "" {
		m.URL = opts.OfflineModelURL
		m.Offline = true
	}
	return m
}

// resolveLimits gives the limits of the agent's model (see ModelLimits),
// the config's found by the exact model name. The name is the file's, so
// an agent pointed at the offline model keeps the limits of its own.
func resolveLimits(file *agentfile.Agent, configured map[string]Limits) Limits {
	own := Limits{ContextWindow: file.ContextWindow, MaxOutputTokens: file.MaxOutputTokens}
	return ModelLimits(file.ModelName, configured[file.ModelName], own)
}

// resolveCompaction sets the agent's compaction: its file's settings over
// the server's, completed for its model's limits.
func (a *Agent) resolveCompaction(server Compaction) {
	own := Compaction(a.Agent.Compaction)
	a.compaction = own.Or(server)
	a.Compaction = a.compaction.Complete(a.Model.Limits)
	switch t := a.compaction.Threshold; {
	case t == 0 || t != a.Compaction.Threshold:
		a.ThresholdSource = ThresholdComputed
	case own.Threshold != 0:
		a.ThresholdSource = LimitsAgent
	default:
		a.ThresholdSource = LimitsConfig
	}
}

func toLoadError(file, field string, err error) *agentfile.Error {
	var fe *agentfile.Error
	if errors.As(err, &fe) {
		return fe
	}
	return &agentfile.Error{File: file, Field: field, Reason: err.Error()}
}

// sortErrors orders load errors by file then field so listings are stable.
func sortErrors(list []*agentfile.Error) {
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].File != list[j].File {
			return list[i].File < list[j].File
		}
		if list[i].Agent != list[j].Agent {
			return list[i].Agent < list[j].Agent
		}
		return list[i].Field < list[j].Field
	})
}
