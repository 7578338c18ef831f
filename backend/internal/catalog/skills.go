package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/confine"
	"github.com/agents-os/agents/backend/internal/disclosure"
	"github.com/agents-os/agents/backend/internal/skills"
	"github.com/agents-os/agents/backend/internal/tool"
)

// addSkills offers the agent's Agent Skills: each valid skill of its
// skill sources is the toolgroup skill:<name>, whose tools (see
// disclosure.SkillTools) are offered once the group is active. A skill
// that breaks a rule of the specification is a problem naming its
// SKILL.md and the rule, and is not offered; the agent's other tools
// are.
func (a *Agent) addSkills(ctx context.Context, file *agentfile.Agent, runtime tool.BashRuntime, within []string, report func(string, error)) {
	from := map[string]string{} // skill name → its SKILL.md
	for _, src := range file.SkillSources {
		if len(within) > 0 {
			// A stored agent's skills hold programs, and files a model
			// reads: only where the server allows its programs.
			if why := confine.Outside(src.Path, within); why != "" {
				report(src.Field, errors.New(why))
				continue
			}
		}
		found, err := skills.Find(src.Path)
		if err != nil {
			report(src.Field, fmt.Errorf("skills: %w", err))
			continue
		}
		for _, path := range found {
			s, warnings, err := skills.Load(path)
			for _, w := range warnings {
				a.groups.warnings = append(a.groups.warnings, &agentfile.Error{File: file.Shown, Agent: a.storedSlug(), Field: src.Field, Reason: w})
			}
			if err != nil {
				report(src.Field, fmt.Errorf("skill not offered: %w", err))
				continue
			}
			if prev, dup := from[s.Name]; dup {
				report(src.Field, fmt.Errorf("skill not offered: %s: the name %q is taken by %s", s.File, s.Name, prev))
				continue
			}
			from[s.Name] = s.File
			scripts, errs := describeScripts(ctx, s, within)
			for _, err := range errs {
				report(src.Field, fmt.Errorf("skill %s: %w", s.Name, err))
			}
			tools, errs := disclosure.SkillTools(s, scripts, runtime)
			for _, err := range errs {
				report(src.Field, err)
			}
			group := disclosure.SkillGroup(s.Name)
			a.groups.declare(disclosure.Group{Name: group, Skill: s.Name, Description: s.Description})
			for _, t := range tools {
				a.addIn(group, t, report)
			}
		}
	}
	for i, name := range file.AutoEnableSkills {
		if _, ok := from[name]; !ok {
			a.groups.warnings = append(a.groups.warnings, &agentfile.Error{File: file.Shown, Agent: a.storedSlug(),
				Field: fmt.Sprintf("contents.autoEnableSkills[%d]", i), Reason: fmt.Sprintf("no skill %q is offered; ignored", name)})
			continue
		}
		a.groups.auto = append(a.groups.auto, disclosure.SkillGroup(name))
	}
}

// describeScripts describes the executables of a skill's scripts/
// folder, as a bash toolbox's are; a skill without one has none.
func describeScripts(ctx context.Context, s *skills.Skill, within []string) ([]bashtool.Tool, []error) {
	dir := filepath.Join(s.Dir, "scripts")
	if _, err := filepath.EvalSymlinks(dir); err != nil {
		return nil, nil
	}
	return bashtool.DescribeDir(ctx, dir, within...)
}

// withBuildWarnings gives the agent the warnings its build found, with
// those of its file, so its descriptor carries them; the file's agent is
// shared, so it is copied, not changed.
func (a *Agent) withBuildWarnings() {
	if len(a.groups.warnings) == 0 {
		return
	}
	own := *a.Agent
	own.Warnings = append(append([]*agentfile.Error(nil), a.Agent.Warnings...), a.groups.warnings...)
	a.Agent = &own
}
