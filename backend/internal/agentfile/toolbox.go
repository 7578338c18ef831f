package agentfile

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// lifetimeFields are agents-exe's "Lifetime" toolbox key, capitalised
// as its records would decode it and in lower case as its examples write
// it. Its decoder reads neither (the examples write "conversation"), and
// here how long a toolbox lives is its kind's: each is warned of, and
// ignored. See warnLifetime.
func lifetimeFields() []unsupportedField {
	const cost = "how long a toolbox lives is its kind's here: " +
		"a bash, Lua, system or developer tool and an HTTP API keep nothing between calls, " +
		"a versioned SQLite database is a copy per session, " +
		"an MCP server one process or connection shared by the sessions"
	return []unsupportedField{{name: "Lifetime", cost: cost}, {name: "lifetime", cost: cost}}
}

// warnLifetime warns of a toolbox's lifetime, then of every other key
// of o nobody read: call it once the toolbox's known keys are read.
func (d *decoder) warnLifetime(o *object) {
	if o == nil {
		return
	}
	d.warnUnsupported(o, lifetimeFields())
	d.warnUnread(o, noIgnoredFields)
}

// bashToolboxes reads "bashToolboxes": a list of tagged entries,
//
//	{"tag": "FileSystemDirectory", "contents": {"Path": "tools", "BasenameFilter": ".sh"}}
//	{"tag": "SingleTool", "contents": {"Path": "bin/tool.sh"}}
//
// It also returns the FileSystemDirectory directories that exist, whose
// agent files are helpers.
func (d *decoder) bashToolboxes(c *object, where places) ([]BashToolbox, []scanDir) {
	raw, ok := c.get("bashToolboxes")
	if !ok {
		return nil, nil
	}
	var boxes []BashToolbox
	var dirs []scanDir
	for i, item := range d.list(c.field("bashToolboxes"), raw) {
		entry := d.object(index(c.field("bashToolboxes"), i), item)
		if d.failed() {
			break
		}
		kind := BashToolboxKind(d.requiredString(entry, "tag"))
		contents, ok := entry.get("contents")
		if !ok {
			d.failf(entry.field("contents"), "required field is missing")
		}
		if d.failed() {
			break
		}
		switch kind {
		case FileSystemDirectory:
			box, dir := d.directoryToolbox(entry.field("contents"), contents, where)
			boxes = append(boxes, box)
			if dir != nil {
				dirs = append(dirs, *dir)
			}
		case SingleTool:
			boxes = append(boxes, d.singleTool(entry.field("contents"), contents, where))
		default:
			d.failf(entry.field("tag"), "unknown bash toolbox %q (want %s or %s)", kind, FileSystemDirectory, SingleTool)
		}
		d.warnUnread(entry, noIgnoredFields)
	}
	return boxes, dirs
}

func (d *decoder) directoryToolbox(field string, raw json.RawMessage, where places) (BashToolbox, *scanDir) {
	c := d.object(field, raw)
	if d.failed() {
		return BashToolbox{}, nil
	}
	key, pathRaw, ok := c.getFirst("Path", "path")
	if !ok {
		d.failf(c.field(key), "required field is missing")
		return BashToolbox{}, nil
	}
	written := d.nonEmptyString(c.field(key), pathRaw)
	filterKey, filterRaw, hasFilter := c.getFirst("BasenameFilter", "basenameFilter")
	box := BashToolbox{Kind: FileSystemDirectory}
	if hasFilter {
		box.BasenameFilter = d.str(c.field(filterKey), filterRaw)
	}
	// "Root" is a legacy agents-exe field kept there for old tool
	// definitions; it has no effect, so it is read and dropped quietly.
	c.get("Root")
	c.get("root")
	box.Toolgroup = d.activation(c)
	d.warnLifetime(c)
	if d.failed() {
		return BashToolbox{}, nil
	}
	path, info := d.toolPath(c.field(key), written, where)
	box.Path = path
	switch {
	case info == nil:
		return box, nil
	case !info.IsDir():
		d.warnf(c.field(key), "%q is not a directory", written)
		return box, nil
	}
	return box, &scanDir{field: c.field(key), dir: path}
}

// singleTool reads a SingleTool's contents: an object with "Path", or the
// path alone as a string, a shape agents-exe's documentation shows.
func (d *decoder) singleTool(field string, raw json.RawMessage, where places) BashToolbox {
	var written, pathField, group string
	if kindOf(raw) == "string" {
		pathField = field
		written = d.nonEmptyString(field, raw)
	} else {
		c := d.object(field, raw)
		if d.failed() {
			return BashToolbox{}
		}
		key, pathRaw, ok := c.getFirst("Path", "path")
		pathField = c.field(key)
		if !ok {
			d.failf(pathField, "required field is missing")
			return BashToolbox{}
		}
		written = d.nonEmptyString(pathField, pathRaw)
		group = d.activation(c)
		d.warnLifetime(c)
	}
	if d.failed() {
		return BashToolbox{}
	}
	path, info := d.toolPath(pathField, written, where)
	if info != nil && info.IsDir() {
		d.warnf(pathField, "%q is a directory; a SingleTool is one executable", written)
	}
	return BashToolbox{Kind: SingleTool, Path: path, Toolgroup: group}
}

// mcpServers reads "mcpServers":
//
//	{"tag": "McpSimpleBinary", "contents": {"name": "x", "executable": "npx", "args": ["..."], "env": {"K": "v"}}}
//	{"tag": "McpStreamableHttp", "contents": {"name": "x", "url": "https://…/mcp", "headers": {"Authorization": "Bearer {{param:TOKEN}}"}}}
//
// Header values may name session params; checkParamRefs checks them once
// the params are read.
func (d *decoder) mcpServers(c *object) []MCPServer {
	raw, ok := c.get("mcpServers")
	if !ok {
		return nil
	}
	var servers []MCPServer
	seen := map[string]bool{}
	for i, item := range d.list(c.field("mcpServers"), raw) {
		entry := d.object(index(c.field("mcpServers"), i), item)
		if d.failed() {
			break
		}
		kind := d.requiredString(entry, "tag")
		if !d.failed() && kind != MCPKindSimpleBinary && kind != MCPKindStreamableHTTP {
			d.failf(entry.field("tag"), "unknown MCP server kind %q (want %s or %s)", kind, MCPKindSimpleBinary, MCPKindStreamableHTTP)
		}
		contents, ok := entry.get("contents")
		if !ok {
			d.failf(entry.field("contents"), "required field is missing")
		}
		body := d.object(entry.field("contents"), contents)
		if d.failed() {
			break
		}
		server := MCPServer{Kind: kind}
		server.Name = d.requiredString(body, "name")
		if !d.failed() && !validServerName(server.Name) {
			d.failf(body.field("name"), "%q must be letters, digits, - and _ only: it is part of the tool names (mcp_<name>_<tool>)", server.Name)
		}
		switch kind {
		case MCPKindSimpleBinary:
			server.Executable = d.requiredString(body, "executable")
			if args, ok := body.get("args"); ok {
				server.Args = d.strings(body.field("args"), args)
			}
			server.Env = d.stringMap(body, "env")
		case MCPKindStreamableHTTP:
			server.URL = d.requiredString(body, "url")
			if !d.failed() && !strings.HasPrefix(server.URL, "http://") && !strings.HasPrefix(server.URL, "https://") {
				d.failf(body.field("url"), "%q is not an http:// or https:// URL", server.URL)
			}
			server.Headers = d.stringMap(body, "headers")
		}
		if !d.failed() && seen[server.Name] {
			d.failf(body.field("name"), "duplicate MCP server name %q", server.Name)
		}
		seen[server.Name] = true
		server.Toolgroup = d.activation(body)
		d.warnLifetime(body)
		d.warnUnread(entry, noIgnoredFields)
		servers = append(servers, server)
	}
	return servers
}

// checkParamRefs refuses header values that name params the agent does
// not declare: such a header could never be sent as meant.
func (d *decoder) checkParamRefs(c *object, a *Agent) {
	declared := map[string]bool{}
	for _, p := range a.Params {
		declared[p.Name] = true
	}
	for i, s := range a.MCPServers {
		for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
			for _, ref := range ParamRefs(s.Headers[name]) {
				if !declared[ref] {
					d.failf(index(c.field("mcpServers"), i)+".contents.headers."+name, "{{param:%s}} names a param the agent does not declare in \"params\"", ref)
				}
			}
		}
	}
}

// validServerName reports whether an MCP server name can be part of a
// tool name as models accept them.
func validServerName(name string) bool {
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return name != ""
}

// stringMap reads an optional object of string values.
func (d *decoder) stringMap(o *object, key string) map[string]string {
	raw, ok := o.get(key)
	if !ok {
		return nil
	}
	m := d.object(o.field(key), raw)
	if d.failed() {
		return nil
	}
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(m.values)) {
		out[k] = d.str(m.field(k), m.values[k])
		m.read[k] = true
	}
	return out
}

// extraAgents reads "extraAgents": [{"slug": "x", "path": "./x.json"}],
// each entry optionally narrowing the helper tool it declares with "as"
// (another tool name), "with" (lines for the child's system prompt) and
// "bindings" (fixed arguments; checked against the helper once it is
// loaded, see bindingProblem). Paths are relative to the agent file's
// directory, as in agents-exe. An entry field this server does not know
// is refused: a narrowing silently dropped would hand the helper more
// than its author meant to.
func (d *decoder) extraAgents(c *object, where places) []extraRef {
	raw, ok := c.get("extraAgents")
	if !ok {
		return nil
	}
	var refs []extraRef
	for i, item := range d.list(c.field("extraAgents"), raw) {
		entry := d.object(index(c.field("extraAgents"), i), item)
		if d.failed() {
			break
		}
		ref := extraRef{index: i}
		ref.slug = d.requiredString(entry, "slug")
		if where.stored {
			// A stored agent names its helper by slug; a path, which
			// a file needs, may come along (the definition may be a
			// file's) and is not read.
			d.optionalString(entry, "path")
		} else {
			ref.written = d.requiredString(entry, "path")
		}
		if as, ok := entry.get("as"); ok {
			ref.as = d.nonEmptyString(entry.field("as"), as)
			d.checkToolSuffix(entry.field("as"), ref.as)
		}
		if with, ok := entry.get("with"); ok {
			ref.with = d.lines(entry.field("with"), with)
		}
		if bindings, ok := entry.get("bindings"); ok {
			ref.bindings = d.bindings(entry.field("bindings"), bindings)
		}
		d.refuseUnread(entry)
		if d.failed() {
			break
		}
		ref.path = ref.written
		if !filepath.IsAbs(ref.path) {
			ref.path = filepath.Join(where.fileDir, ref.path)
		}
		refs = append(refs, ref)
	}
	return refs
}

// checkToolSuffix checks a name that ends up in prompt_agent_<name>.
func (d *decoder) checkToolSuffix(field, name string) {
	if d.failed() {
		return
	}
	switch {
	case !slugPattern.MatchString(name):
		d.failf(field, "%q: use only letters, digits, \"-\" and \"_\" (it names the tool prompt_agent_%s)", name, name)
	case len(name) > maxSlugLength:
		d.failf(field, "%q is %d characters; at most %d fit in the tool name prompt_agent_<as>", name, len(name), maxSlugLength)
	}
}

// lines reads text given as one string or a list of lines, none empty
// as a whole.
func (d *decoder) lines(field string, raw json.RawMessage) []string {
	var lines []string
	if kindOf(raw) == "string" {
		lines = []string{d.str(field, raw)}
	} else {
		lines = d.strings(field, raw)
	}
	if !d.failed() && strings.TrimSpace(strings.Join(lines, "")) == "" {
		d.failf(field, "must not be empty")
	}
	return lines
}

// bindings reads an object of fixed helper arguments, each a string.
func (d *decoder) bindings(field string, raw json.RawMessage) map[string]string {
	o := d.object(field, raw)
	if d.failed() {
		return nil
	}
	if len(o.values) == 0 {
		d.failf(field, "must bind at least one argument")
		return nil
	}
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(o.values)) {
		v := d.str(o.field(k), o.values[k])
		if !d.failed() && k == PromptBinding && strings.TrimSpace(v) == "" {
			d.failf(o.field(k), "must not be empty")
		}
		out[k] = v
		o.read[k] = true
	}
	return out
}

// refuseUnread fails on the first key of o nobody read.
func (d *decoder) refuseUnread(o *object) {
	if o == nil {
		return
	}
	if keys := o.unread(); len(keys) > 0 {
		d.failf(o.field(keys[0]), "unknown field (an extraAgents entry takes slug, path, as, with and bindings)")
	}
}

// osTools reads "osTools": true (every operating system tool), false, or
// a list of their names (see OSToolNames).
func (d *decoder) osTools(c *object) []string {
	raw, ok := c.get("osTools")
	if !ok {
		return nil
	}
	known := OSToolNames()
	if kindOf(raw) == "boolean" {
		if d.boolean(c.field("osTools"), raw) {
			return known
		}
		return nil
	}
	if k := kindOf(raw); k != "list" {
		d.failf(c.field("osTools"), "must be true, false or a list of tool names, got %s", k)
		return nil
	}
	asked := map[string]bool{}
	for i, name := range d.strings(c.field("osTools"), raw) {
		switch {
		case d.failed():
		case !slices.Contains(known, name):
			d.failf(index(c.field("osTools"), i), "unknown operating system tool %q (want one of %s)", name, strings.Join(known, ", "))
		case asked[name]:
			d.failf(index(c.field("osTools"), i), "duplicate tool %q", name)
		}
		asked[name] = true
	}
	if d.failed() {
		return nil
	}
	var names []string
	for _, name := range known {
		if asked[name] {
			names = append(names, name)
		}
	}
	return names
}

func (d *decoder) nonEmptyString(field string, raw json.RawMessage) string {
	s := d.str(field, raw)
	if !d.failed() && strings.TrimSpace(s) == "" {
		d.failf(field, "must not be empty")
	}
	return s
}
