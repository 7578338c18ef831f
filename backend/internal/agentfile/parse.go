package agentfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"

	"github.com/agents-os/agents/backend/internal/jsoncheck"
)

// AgentTag is the "tag" every agent file carries.
const AgentTag = "OpenAIAgentDescription"

// maxSlugLength keeps "prompt_agent_<slug>", the tool a parent calls its
// helper by, within the 64 characters model APIs allow for a tool name.
const maxSlugLength = 64 - len("prompt_agent_")

var (
	slugPattern    = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// maxToolName is the longest tool name model APIs accept.
const maxToolName = 64

// isToolName says whether name is 1 to 64 letters, digits, "-" or "_".
// (The pattern `^[A-Za-z0-9_-]{1,64}$` compiles to 64 copies of the class,
// 60 KB allocated at every start of the program.)
func isToolName(name string) bool {
	return len(name) <= maxToolName && slugPattern.MatchString(name)
}

// agentsExeOnlyFields are the fields of the agents-exe agent format this
// server does not implement. Files using them still load; each one that
// carries something is a warning saying what the agent goes without.
func agentsExeOnlyFields() []unsupportedField {
	const policy = `no call is held or deferred by it (write approval rules in "approvals")`
	return []unsupportedField{
		{name: "fileSandboxes"},
		{name: "executionMode"},
		{name: "toolCallPolicy", cost: policy},
		{name: "toolCallPolicyConfig", cost: policy},
		{name: "asyncYieldStrategy"},
		{name: "maxConcurrency"},
		{name: "asyncCallTimeoutSeconds"},
		{name: "bindings"},
		{name: "pauseCancelsCalls"},
		{name: "resumeOnAnyMail"},
		{name: "interruptCompletions"},
		{name: "mailScope"},
		{name: "interruptScope"},
		{name: "wakeOn"},
	}
}

// parsed is one agent file read on its own, before its helpers are found.
type parsed struct {
	agent    *Agent
	extras   []extraRef
	scanDirs []scanDir
}

// extraRef is one extraAgents entry.
type extraRef struct {
	index   int
	slug    string // the slug the entry expects the file to have
	written string // the path as written
	path    string // absolute

	// The narrowing of the helper tool the entry declares.
	as       string
	with     []string
	bindings map[string]string
}

func (r extraRef) field(key string) string {
	return fmt.Sprintf("contents.extraAgents[%d].%s", r.index, key)
}

// tool is the helper tool the entry declares for the helper with slug.
func (r extraRef) tool(slug string) HelperTool {
	name := r.as
	if name == "" {
		name = slug
	}
	return HelperTool{Slug: slug, Name: name, With: r.with, Bindings: r.bindings}
}

func (r extraRef) pathField() string { return r.field("path") }

func (r extraRef) slugField() string { return r.field("slug") }

// scanDir is a directory whose agent files are helpers of the agent
// (toolDirectory and FileSystemDirectory toolboxes, as in agents-exe).
type scanDir struct {
	field string
	dir   string
}

// places says where relative paths in one agent file are resolved.
type places struct {
	fileDir string // the agent file's directory: the rule
	workDir string // the working directory: agents-exe's rule for tool paths
	// stored is set for a definition that is no file (a stored agent):
	// fileDir is the working directory, and helpers are named by slug.
	stored bool
}

// ParseFile reads one agent file on its own, without loading its helpers
// (Helpers stays empty). Relative tool paths that exist only under the
// process working directory are resolved there; see Loader for details.
func ParseFile(path string) (*Agent, []*Error, error) {
	return Loader{}.ParseFile(path)
}

// ParseFile reads one agent file on its own; see the package function.
// Warnings do not prevent loading; err is an *Error when the file is bad.
func (l Loader) ParseFile(path string) (*Agent, []*Error, error) {
	work := l.workDir()
	abs := absolute(work, path)
	shown := displayPath(work, abs)
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, nil, &Error{File: shown, Reason: readReason(err)}
	}
	p, warnings, perr, _ := parse(data, abs, work)
	for _, w := range warnings {
		w.File = shown
	}
	if perr != nil {
		perr.File = shown
		return nil, warnings, perr
	}
	return p.agent, warnings, nil
}

// parse reads the agent file at file (absolute) whose content is data.
// notAgent is set, along with the error, when data is a JSON object with
// neither "tag" nor "contents": some other kind of JSON file. Errors and
// warnings come back without File; the caller knows how to show it.
func parse(data []byte, file, workDir string) (p *parsed, warnings []*Error, err *Error, notAgent bool) {
	p, warnings, err, notAgent = parseIn(data, places{fileDir: filepath.Dir(file), workDir: workDir})
	// agents-exe takes a key given twice at its last value, so a file may
	// hold one and still load; the API refuses such a definition, so the
	// file says so before it is stored.
	if field, twice := jsoncheck.RepeatedKey(data); twice && !notAgent {
		warnings = append(warnings, &Error{Field: field, Reason: "is given twice; the last value is used (give each key once: the API refuses to store it so)"})
	}
	if p != nil {
		p.agent.File, p.agent.Shown = file, displayPath(workDir, file)
	}
	return p, warnings, err, notAgent
}

// parseIn reads an agent definition whose relative paths resolve as
// where says.
func parseIn(data []byte, where places) (p *parsed, warnings []*Error, err *Error, notAgent bool) {
	var top map[string]json.RawMessage
	if jerr := json.Unmarshal(data, &top); jerr != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(jerr, &typ) {
			return nil, nil, &Error{Reason: fmt.Sprintf("must be a JSON object with \"tag\" and \"contents\", got %s", typ.Value)}, true
		}
		return nil, nil, JSONError("", data, jerr), false
	}
	root := &object{values: top, read: map[string]bool{}}
	if !root.has("tag") && !root.has("contents") {
		return nil, nil, &Error{Field: "tag", Reason: fmt.Sprintf("required field is missing: not an agent file (want \"tag\": %q)", AgentTag)}, true
	}

	d := &decoder{}
	tag := d.requiredString(root, "tag")
	if !d.failed() && tag != AgentTag {
		d.failf("tag", "unknown tag %q (want %q)", tag, AgentTag)
	}
	raw, ok := root.get("contents")
	if !ok {
		d.failf("contents", "required field is missing")
	}
	d.warnUnread(root, noIgnoredFields)
	p = d.contents(raw, where)
	if d.failed() {
		return nil, d.warnings, d.err, false
	}
	return p, d.warnings, nil, false
}

// contents reads the "contents" object: the agent itself.
func (d *decoder) contents(raw json.RawMessage, where places) *parsed {
	c := d.object("contents", raw)
	if d.failed() {
		return nil
	}
	a := &Agent{}
	p := &parsed{agent: a}

	a.Slug = d.requiredString(c, "slug")
	d.checkSlug(c.field("slug"), a.Slug)

	flavor := d.requiredString(c, "flavor")
	if !d.failed() {
		f, ok := ParseFlavor(flavor)
		if !ok {
			d.failf(c.field("flavor"), "unknown flavor %q (want one of %s)", flavor, flavorList())
		}
		a.Flavor = f
	}

	a.ModelURL = d.requiredString(c, "modelUrl")
	d.checkModelURL(c.field("modelUrl"), a.ModelURL)
	a.ModelName = d.requiredString(c, "modelName")
	a.APIKeyID = d.optionalString(c, "apiKeyId")
	a.Announce = d.optionalString(c, "announce")
	a.SystemPrompt = d.systemPrompt(c)

	if written := d.optionalString(c, "toolDirectory"); written != "" {
		path, info := d.toolPath(c.field("toolDirectory"), written, where)
		a.ToolDirectory = path
		if info != nil && info.IsDir() {
			p.scanDirs = append(p.scanDirs, scanDir{field: c.field("toolDirectory"), dir: path})
		} else if info != nil {
			d.warnf(c.field("toolDirectory"), "%q is not a directory", written)
		}
	}

	var toolboxDirs []scanDir
	a.BashToolboxes, toolboxDirs = d.bashToolboxes(c, where)
	p.scanDirs = append(p.scanDirs, toolboxDirs...)
	a.MCPServers = d.mcpServers(c)
	d.skills(c, where, a)
	a.BuiltinToolboxes = d.builtinToolboxes(c, where)
	p.extras = d.extraAgents(c, where)

	a.ClientTools = d.clientTools(c)
	a.MailInToolResult = d.optionalBool(c, "mailInToolResult", false)
	a.MaxSteps = d.maxSteps(c)
	d.limits(c, a)
	a.Compaction = d.compaction(c, a.ContextWindow)
	a.Params = d.params(c)
	a.APIToolboxes = d.apiToolboxes(c, where, a.Params)
	a.PassEnv = d.passEnv(c)
	a.Approvals = d.approvals(c)
	a.Budget = d.budget(c)
	a.OSTools = d.osTools(c)
	a.Sandbox = d.sandbox(c, where)
	d.checkParamRefs(c, a)

	d.warnUnsupported(c, agentsExeOnlyFields())
	d.warnUnread(c, noIgnoredFields)
	if d.failed() {
		return nil
	}
	return p
}

func (d *decoder) checkSlug(field, slug string) {
	if d.failed() {
		return
	}
	if err := CheckSlug(slug); err != nil {
		d.failf(field, "%s", err)
	}
}

// CheckSlug says what keeps slug from being an agent's, nil when nothing
// does: for a request that names an agent it need not find loaded (an
// import binds sessions to it), a slug no agent can have is a mistake.
func CheckSlug(slug string) error {
	switch {
	case !slugPattern.MatchString(slug):
		return fmt.Errorf("%q: use only letters, digits, \"-\" and \"_\" (the slug names the tool prompt_agent_<slug>)", slug)
	case len(slug) > maxSlugLength:
		return fmt.Errorf("%q is %d characters; at most %d fit in the tool name prompt_agent_<slug>", slug, len(slug), maxSlugLength)
	}
	return nil
}

func (d *decoder) checkModelURL(field, raw string) {
	if d.failed() {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.failf(field, "%q is not an http:// or https:// URL", raw)
	}
}

// systemPrompt reads the prompt lines. A single string is accepted as one
// line; agents-exe itself requires a list.
func (d *decoder) systemPrompt(c *object) []string {
	raw, ok := c.get("systemPrompt")
	if !ok {
		return nil
	}
	if kindOf(raw) == "string" {
		return []string{d.str(c.field("systemPrompt"), raw)}
	}
	return d.strings(c.field("systemPrompt"), raw)
}

// toolPath resolves a tool path written in an agent file. The rule is the
// agent file's directory. agents-exe resolves tool paths against the
// working directory instead, and its files rely on that; so a path that
// exists only there is taken from there, with a warning. A path that exists
// nowhere is kept next to the agent file, with a warning: the tools are
// described later, and that is where their absence becomes an error.
func (d *decoder) toolPath(field, written string, where places) (string, os.FileInfo) {
	if filepath.IsAbs(written) {
		info, _ := os.Stat(written)
		if info == nil {
			d.warnf(field, "%q does not exist", written)
		}
		return filepath.Clean(written), info
	}
	nextToFile := filepath.Join(where.fileDir, written)
	if info, err := os.Stat(nextToFile); err == nil {
		return nextToFile, info
	}
	fromWork := filepath.Join(where.workDir, written)
	if info, err := os.Stat(fromWork); err == nil {
		d.warnf(field, "%q is not next to the agent file; using %s, relative to the working directory", written, fromWork)
		return fromWork, info
	}
	if where.stored {
		d.warnf(field, "%q does not exist (looked in %s)", written, where.workDir)
		return nextToFile, nil
	}
	d.warnf(field, "%q does not exist (looked in %s and %s)", written, where.fileDir, where.workDir)
	return nextToFile, nil
}

func readReason(err error) string {
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		if errors.Is(err, os.ErrNotExist) {
			return "file does not exist"
		}
		return pathErr.Err.Error()
	}
	return err.Error()
}
