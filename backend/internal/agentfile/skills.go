package agentfile

import (
	"github.com/agents-os/agents/backend/internal/skills"
)

// The skill source kinds of "skillSources".
const (
	// SkillDirectory is a folder of skills (or one skill's folder).
	SkillDirectory = "SkillDirectory"
	// SkillGitRepo is a git repository of skills, which agents-exe
	// clones; this server reads skills from folders only.
	SkillGitRepo = "SkillGitRepo"
)

// skills reads "skillSources" and "autoEnableSkills", as agents-exe
// writes them:
//
//	"skillSources": [{"tag": "SkillDirectory", "contents": "./skills"}],
//	"autoEnableSkills": ["code-review"]
//
// A source may also be the folder alone, as a string.
//
// A SkillDirectory's folder is resolved as a tool path is (see toolPath);
// its skills are read when the agent's tools are (see catalog).
func (d *decoder) skills(c *object, where places, a *Agent) {
	if raw, ok := c.get("skillSources"); ok {
		for i, item := range d.list(c.field("skillSources"), raw) {
			if kindOf(item) == "string" {
				// A folder alone: the SkillDirectory it stands for.
				field := index(c.field("skillSources"), i)
				if dir := d.skillDirectory(field, item, where); dir != "" {
					a.SkillSources = append(a.SkillSources, SkillSource{Path: dir, Field: field})
				}
				continue
			}
			entry := d.object(index(c.field("skillSources"), i), item)
			if d.failed() {
				return
			}
			tag := d.requiredString(entry, "tag")
			contents, ok := entry.get("contents")
			if !ok {
				d.failf(entry.field("contents"), "required field is missing")
			}
			if d.failed() {
				return
			}
			switch tag {
			case SkillDirectory:
				if dir := d.skillDirectory(entry.field("contents"), contents, where); dir != "" {
					a.SkillSources = append(a.SkillSources, SkillSource{Path: dir, Field: entry.path})
				}
			case SkillGitRepo:
				d.warnf(entry.field("tag"), "not supported by this server; ignored: skills are read from folders (clone the repository and name its folder in a %s)", SkillDirectory)
			default:
				d.failf(entry.field("tag"), "unknown skill source %q (want %s or %s)", tag, SkillDirectory, SkillGitRepo)
			}
			d.warnUnread(entry, noIgnoredFields)
		}
	}
	if raw, ok := c.get("autoEnableSkills"); ok {
		seen := map[string]bool{}
		for i, name := range d.strings(c.field("autoEnableSkills"), raw) {
			if d.failed() {
				return
			}
			if why := skills.NameProblem(name); why != "" {
				d.failf(index(c.field("autoEnableSkills"), i), "not a skill name: %s", why)
				return
			}
			if !seen[name] {
				a.AutoEnableSkills = append(a.AutoEnableSkills, name)
			}
			seen[name] = true
		}
	}
}

// skillDirectory reads a SkillDirectory's contents: the folder as a
// string, or an object with "Path" (or "path"). A folder that does not
// exist is a warning, as a bash toolbox's is; "" when there is none.
func (d *decoder) skillDirectory(field string, raw []byte, where places) string {
	var written string
	if kindOf(raw) == "string" {
		written = d.nonEmptyString(field, raw)
	} else {
		o := d.object(field, raw)
		if d.failed() {
			return ""
		}
		key, pathRaw, ok := o.getFirst("Path", "path")
		if !ok {
			d.failf(o.field(key), "required field is missing")
			return ""
		}
		field = o.field(key)
		written = d.nonEmptyString(field, pathRaw)
		d.warnUnread(o, noIgnoredFields)
	}
	if d.failed() {
		return ""
	}
	path, info := d.toolPath(field, written, where)
	if info != nil && !info.IsDir() {
		d.warnf(field, "%q is not a folder; it offers no skills", written)
		return ""
	}
	return path
}

// SkillSource is a folder of skills an agent declares.
type SkillSource struct {
	Path  string // absolute
	Field string // the entry in the file, to name in problems
}
