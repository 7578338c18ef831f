package agentfile

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// lifecycleField reports the agents-exe toolbox fields about resource
// lifetime and progressive disclosure, which this server does not
// implement. Both the capitalised keys agents-exe decodes and the
// lower-case ones its documentation shows are recognised.
func lifecycleField(key string) bool {
	switch key {
	case "Lifetime", "Activation", "lifetime", "activation":
		return true
	}
	return false
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
	d.warnUnread(c, lifecycleField)
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
	var written, pathField string
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
		d.warnUnread(c, lifecycleField)
	}
	if d.failed() {
		return BashToolbox{}
	}
	path, info := d.toolPath(pathField, written, where)
	if info != nil && info.IsDir() {
		d.warnf(pathField, "%q is a directory; a SingleTool is one executable", written)
	}
	return BashToolbox{Kind: SingleTool, Path: path}
}

// mcpServers reads "mcpServers":
//
//	{"tag": "McpSimpleBinary", "contents": {"name": "x", "executable": "npx", "args": ["..."]}}
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
		if !d.failed() && kind != MCPKindSimpleBinary {
			d.failf(entry.field("tag"), "unknown MCP server kind %q (want %s)", kind, MCPKindSimpleBinary)
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
		server.Executable = d.requiredString(body, "executable")
		if args, ok := body.get("args"); ok {
			server.Args = d.strings(body.field("args"), args)
		}
		if !d.failed() && seen[server.Name] {
			d.failf(body.field("name"), "duplicate MCP server name %q", server.Name)
		}
		seen[server.Name] = true
		d.warnUnread(body, lifecycleField)
		d.warnUnread(entry, noIgnoredFields)
		servers = append(servers, server)
	}
	return servers
}

// extraAgents reads "extraAgents": [{"slug": "x", "path": "./x.json"}].
// Paths are relative to the agent file's directory, as in agents-exe.
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
		ref.written = d.requiredString(entry, "path")
		d.warnUnread(entry, noIgnoredFields)
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

func (d *decoder) nonEmptyString(field string, raw json.RawMessage) string {
	s := d.str(field, raw)
	if !d.failed() && strings.TrimSpace(s) == "" {
		d.failf(field, "must not be empty")
	}
	return s
}
