package agentfile

import (
	"time"
)

// maxLuaTimeout bounds "maxExecutionTimeSeconds": a script holds its
// step's tool call, and so the session, for that long.
const maxLuaTimeout = time.Hour

// luaToolbox reads what a LuaToolbox entry adds to a builtin toolbox's
// name and description,
//
//	{"name": "lua", "description": "…", "maxMemoryMB": 128, "maxExecutionTimeSeconds": 60,
//	 "allowedTools": ["sqlite_notes_query"], "allowedHosts": ["api.example.com"],
//	 "fileSandbox": {"predicate": {…}, "maxFileSize": …}}
//
// with keys in lower case, as agents-exe documents them, or capitalised,
// as its test agents write them. The deprecated "allowedPaths" are read
// as a sandbox of DirectoryRecursive entries when there is no
// "fileSandbox".
func (d *decoder) luaToolbox(c *object, box *BuiltinToolbox, nameField string, where places) {
	d.checkBuiltinName(nameField, box.Name, LuaToolPrefix, LuaToolSuffix)
	box.Lua = LuaLimits{MaxMemoryMB: DefaultLuaMaxMemoryMB, Timeout: DefaultLuaTimeout}
	if key, raw, ok := c.getFirst("maxMemoryMB", "MaxMemoryMB"); ok {
		n := d.integer(c.field(key), raw)
		if n < 1 && !d.failed() {
			d.failf(c.field(key), "must be a number of megabytes of at least 1, got %d", n)
		}
		box.Lua.MaxMemoryMB = n
	}
	if key, raw, ok := c.getFirst("maxExecutionTimeSeconds", "MaxExecutionTimeSeconds"); ok {
		n := d.integer(c.field(key), raw)
		if (n < 1 || time.Duration(n)*time.Second > maxLuaTimeout) && !d.failed() {
			d.failf(c.field(key), "must be a number of seconds from 1 to %d, got %d", int(maxLuaTimeout.Seconds()), n)
		}
		box.Lua.Timeout = time.Duration(n) * time.Second
	}
	if key, raw, ok := c.getFirst("allowedTools", "AllowedTools"); ok {
		box.Lua.AllowedTools = d.strings(c.field(key), raw)
	}
	if key, raw, ok := c.getFirst("allowedHosts", "AllowedHosts"); ok {
		box.Lua.AllowedHosts = d.strings(c.field(key), raw)
	}
	pathsKey, pathsRaw, hasPaths := c.getFirst("allowedPaths", "AllowedPaths")
	var paths []string
	if hasPaths {
		paths = d.strings(c.field(pathsKey), pathsRaw)
	}
	_, _, hasSandbox := c.getFirst("fileSandbox", "FileSandbox")
	switch {
	case hasSandbox:
		box.Sandbox = d.fileSandbox(c, where)
		if hasPaths {
			d.warnf(c.field(pathsKey), "deprecated and ignored: the toolbox's fileSandbox says which paths its scripts may touch")
		}
	case len(paths) > 0:
		box.Sandbox = d.allowedPaths(c.field(pathsKey), paths, where)
	default:
		box.Sandbox = FileSandbox{Predicate: PathPredicate{Kind: PredAlwaysDeny}}
	}
}

// allowedPaths is the sandbox agents-exe's deprecated "allowedPaths"
// stand for: any path under one of them.
func (d *decoder) allowedPaths(field string, paths []string, where places) FileSandbox {
	any := PathPredicate{Kind: PredAny}
	for i, written := range paths {
		if written == "" {
			d.failf(index(field, i), "must not be empty")
			return FileSandbox{}
		}
		path, _ := d.toolPath(index(field, i), written, where)
		any.Operands = append(any.Operands, PathPredicate{Kind: PredDirectoryRecursive, Path: path})
	}
	return FileSandbox{Predicate: any}
}
