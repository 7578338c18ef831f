package disclosure

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/skills"
	"github.com/agents-os/agents/backend/internal/tool"
)

// The tools of a skill, named as agents-exe names them:
// skill_describe_<name> gives its instructions, skill_<name>_<script>
// runs one of its scripts. skill_read_<name> (this server's) reads one of
// its other files.
const (
	describePrefix = "skill_describe_"
	readPrefix     = "skill_read_"
)

// maxRead bounds what skill_read_<name> and skill_describe_<name> give
// the model, as a bash tool's output is bounded.
const maxRead = bashtool.DefaultMaxStdout

var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// SkillTools returns the tools of a skill: its describe and read tools,
// then one per script (scripts, described from its scripts/ folder). A
// script runs as a bash tool does, through bashtool, under runtime:
// whatever confines bash tools confines it. A tool whose name a model
// would refuse is left out, with an error saying why.
func SkillTools(s *skills.Skill, scripts []bashtool.Tool, runtime tool.BashRuntime) ([]tool.Tool, []error) {
	var out []tool.Tool
	var errs []error
	for _, t := range []tool.Tool{&describeTool{skill: s}, &readTool{skill: s}} {
		if err := checkName(t.Spec().Name, s); err != nil {
			return nil, []error{err}
		}
		out = append(out, t)
	}
	for _, script := range scripts {
		base := filepath.Base(script.Path)
		name := "skill_" + s.Name + "_" + strings.TrimSuffix(base, filepath.Ext(base))
		if err := checkName(name, s); err != nil {
			errs = append(errs, fmt.Errorf("script %s: %w", script.Path, err))
			continue
		}
		out = append(out, &scriptTool{Bash: tool.NewBash(script, runtime), name: name, skill: s.Name})
	}
	return out, errs
}

func checkName(name string, s *skills.Skill) error {
	switch {
	case len(name) > 64:
		return fmt.Errorf("skill %s: the tool name %q is longer than the 64 characters models accept (shorten the skill's or the script's name)", s.Name, name)
	case !toolNamePattern.MatchString(name):
		return fmt.Errorf("skill %s: %q is no tool name a model accepts (letters, digits, \"_\" and \"-\" only)", s.Name, name)
	}
	return nil
}

// describeTool is skill_describe_<name>: the skill's front matter and
// instructions, and the names of its files.
type describeTool struct{ skill *skills.Skill }

func (d *describeTool) Spec() tool.Spec {
	return tool.Spec{
		Name:        describePrefix + d.skill.Name,
		Description: "Get metadata and instructions for skill: " + d.skill.Description,
		Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		Kind:        session.ToolSystem,
		Source:      d.skill.File,
	}
}

func (d *describeTool) Mode() session.CallMode { return session.CallAttached }

func (d *describeTool) Execute(context.Context, tool.Call) tool.Result {
	s := d.skill
	files, more, err := s.Files()
	if err != nil {
		return tool.Failed(fmt.Sprintf("the skill %s cannot be read: %v", s.Name, err))
	}
	var scripts, references []string
	for _, f := range files {
		switch {
		case strings.HasPrefix(f, "scripts/"):
			scripts = append(scripts, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)))
		case strings.HasPrefix(f, "references/"):
			references = append(references, strings.TrimPrefix(f, "references/"))
		}
	}
	answer := struct {
		Name          string            `json:"name"`
		Description   string            `json:"description"`
		License       string            `json:"license,omitempty"`
		Compatibility string            `json:"compatibility,omitempty"`
		Metadata      map[string]string `json:"metadata,omitempty"`
		AllowedTools  []string          `json:"allowed-tools,omitempty"`
		Instructions  string            `json:"instructions"`
		Scripts       []string          `json:"scripts"`
		References    []string          `json:"references"`
		Files         []string          `json:"files"`
		FilesCut      bool              `json:"files_cut,omitempty"`
		Location      string            `json:"location"`
	}{
		Name: s.Name, Description: s.Description, License: s.License, Compatibility: s.Compatibility,
		Metadata: s.Metadata, AllowedTools: s.AllowedTools, Instructions: bashtool.Cut(s.Body, maxRead),
		Scripts: nonNil(scripts), References: nonNil(references), Files: nonNil(files), FilesCut: more, Location: s.Dir,
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return tool.Failed(err.Error())
	}
	return tool.OK(string(b))
}

func nonNil(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// readTool is skill_read_<name>: one file of the skill, or the list of a
// folder of it, read when called, never from outside its folder.
type readTool struct{ skill *skills.Skill }

func (r *readTool) Spec() tool.Spec {
	return tool.Spec{
		Name:        readPrefix + r.skill.Name,
		Description: fmt.Sprintf("Read a file of the skill %s (such as references/….md), or list one of its folders; the path is relative to the skill's folder.", r.skill.Name),
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"A file or folder of the skill, relative to its folder, such as references/guide.md or ."}},"required":["path"],"additionalProperties":false}`),
		Kind:        session.ToolSystem,
		Source:      r.skill.File,
	}
}

func (r *readTool) Mode() session.CallMode { return session.CallAttached }

func (r *readTool) Execute(_ context.Context, call tool.Call) tool.Result {
	text, err := r.skill.Read(call.Args.String("path"), maxRead)
	if err != nil {
		return tool.Failed(err.Error())
	}
	return tool.OK(text)
}

// scriptTool is skill_<name>_<script>: a bash tool under the skill's
// name. Its calls run through the bash tool's own Execute, the one place
// a script starts.
type scriptTool struct {
	*tool.Bash
	name, skill string
}

func (s *scriptTool) Spec() tool.Spec {
	spec := s.Bash.Spec()
	spec.Name = s.name
	return spec
}
