package agentfile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The builtin toolbox kinds agent files may declare in "builtinToolboxes",
// as agents-exe tags them.
const (
	SqliteToolboxKind    = "SqliteToolbox"
	SystemToolboxKind    = "SystemToolbox"
	DeveloperToolboxKind = "DeveloperToolbox"
	LuaToolboxKind       = "LuaToolbox"
)

// The tool names agents-exe gives a builtin toolbox's tools, around the
// toolbox's name: sqlite_<name>_query, system_<name>_system_info, ….
const (
	SqliteToolPrefix    = "sqlite_"
	SqliteQuerySuffix   = "_query"
	SqlitePromoteSuffix = "_promote"
	SystemToolPrefix    = "system_"
	SystemToolSuffix    = "_system_info"
	DeveloperToolPrefix = "developer_"
	DeveloperToolSuffix = "_developer_tools"
	LuaToolPrefix       = "lua_"
	LuaToolSuffix       = "_execute"
)

// The limits of a LuaToolbox that leaves them out.
const (
	DefaultLuaTimeout     = 30 * time.Second
	DefaultLuaMaxMemoryMB = 256
)

// BuiltinToolbox is one entry of "builtinToolboxes": tools the server
// itself runs, named after the toolbox.
type BuiltinToolbox struct {
	Kind        string // SqliteToolboxKind, SystemToolboxKind, DeveloperToolboxKind or LuaToolboxKind
	Name        string
	Description string

	// Sqlite is the database of a SqliteToolbox.
	Sqlite SqliteDatabase

	// Capabilities are those of a SystemToolbox or DeveloperToolbox that
	// this server offers, in the file's order, each once.
	Capabilities []string
	// CommandFilter, for a SystemToolbox's execute-command, is a shell
	// command every requested command is passed to on stdin first; it
	// prints {"acceptance": "allowed"|"refused", "note": …}.
	CommandFilter string
	// Sandbox confines a DeveloperToolbox's file access, and a
	// LuaToolbox's fs module.
	Sandbox FileSandbox
	// Lua is what a LuaToolbox's scripts may use besides files.
	Lua LuaLimits

	// Toolgroup, when set, is the group of an on-demand toolbox, as for
	// a bash toolbox.
	Toolgroup string
}

// LuaLimits bound a LuaToolbox's scripts.
type LuaLimits struct {
	// MaxMemoryMB bounds what one script may allocate.
	MaxMemoryMB int
	// Timeout bounds one script's run ("maxExecutionTimeSeconds").
	Timeout time.Duration
	// AllowedTools are the agent's tools a script may call; AllowedHosts
	// the hosts its http module may reach. Empty: none.
	AllowedTools []string
	AllowedHosts []string
}

// SqliteAccess is how a SqliteToolbox reaches its database.
type SqliteAccess string

// The access modes, after agents-exe's versioning tags.
const (
	// SqliteReadOnly queries the file and refuses every write.
	SqliteReadOnly SqliteAccess = "SqliteReadOnly"
	// SqliteReadWrite queries the file itself, writes included.
	SqliteReadWrite SqliteAccess = "SqliteReadWrite"
	// SqliteVersioned gives each session a copy of the file, which a
	// promote tool writes back.
	SqliteVersioned SqliteAccess = "SqliteVersioned"
)

// SqliteDatabase says which database a SqliteToolbox queries and how.
type SqliteDatabase struct {
	Access SqliteAccess
	Path   string // absolute: the file, or a versioned toolbox's base
	// StorageRoot, for SqliteVersioned, is where the sessions' copies
	// live; "" is the server's data directory.
	StorageRoot string
}

// FileSandbox is agents-exe's FileSandboxConfig: the paths a toolbox may
// touch and the largest file it may read or write.
type FileSandbox struct {
	Name      string
	Predicate PathPredicate
	// MaxFileSize is the largest file in bytes; 0 is no limit.
	MaxFileSize int64
}

// The path predicate kinds, as agents-exe tags them.
const (
	PredFileExactly        = "FileExactly"
	PredDirectoryExactly   = "DirectoryExactly"
	PredDirectoryRecursive = "DirectoryRecursive"
	PredDirectoryShallow   = "DirectoryShallow"
	PredChildOf            = "ChildOf"
	PredFilePattern        = "FilePattern"
	PredFileExtension      = "FileExtension"
	PredFileSizeLessThan   = "FileSizeLessThan"
	PredAnd                = "And"
	PredOr                 = "Or"
	PredNot                = "Not"
	PredAny                = "Any"
	PredAll                = "All"
	PredAlwaysAllow        = "AlwaysAllow"
	PredAlwaysDeny         = "AlwaysDeny"
)

// PathPredicate is one node of agents-exe's PathPredicate language. Only
// the fields of its Kind are set.
type PathPredicate struct {
	Kind       string
	Path       string   // the path kinds: absolute
	Pattern    string   // FilePattern
	Extensions []string // FileExtension, without the dot
	Size       int64    // FileSizeLessThan
	Operands   []PathPredicate
}

// systemCapabilities are the SystemToolbox capabilities this server
// offers; systemCapabilitiesLeftOut are those of agents-exe it does not,
// with why.
func systemCapabilities() []string {
	return []string{"date", "operating-system", "running-user", "hostname", "working-directory", "process-info", "uptime", "list-directory", "execute-command"}
}

func systemCapabilitiesLeftOut() map[string]string {
	const sessions = `not offered by this server (the operating system tools of "osTools", such as read_session, read sessions)`
	return map[string]string{
		"env-vars":          "not offered by this server: the server's environment holds its API keys (pass variables to commands with passEnv)",
		"attach-file":       "not offered by this server",
		"list-sessions":     sessions,
		"search-sessions":   sessions,
		"read-session":      sessions,
		"get-session-stats": sessions,
	}
}

func developerCapabilities() []string {
	return []string{"read-file-range", "write-file-range", "patch-file", "list-directory", "help"}
}

func developerCapabilitiesLeftOut() []string {
	return []string{"validate-tool", "scaffold-agent", "scaffold-tool", "show-spec", "validate-agent", "create-agent", "create-tool", "snapshot", "restore-file", "traverse-directory"}
}

// builtinToolboxes reads "builtinToolboxes": a list of tagged entries,
//
//	{"tag": "SqliteToolbox", "contents": {"Name": "notes", "Description": "…", "Versioning": {"tag": "SqliteReadWrite", "path": "notes.db"}}}
//	{"tag": "SystemToolbox", "contents": {"Name": "sys", "Capabilities": ["date", "hostname"]}}
//	{"tag": "DeveloperToolbox", "contents": {"Name": "dev", "Capabilities": ["read-file-range"], "FileSandbox": {…}}}
//
// Keys are read capitalised, as agents-exe decodes them, or in lower
// case, as its documentation writes them.
func (d *decoder) builtinToolboxes(c *object, where places) []BuiltinToolbox {
	raw, ok := c.get("builtinToolboxes")
	if !ok {
		return nil
	}
	var boxes []BuiltinToolbox
	seen := map[string]string{} // tool name prefix → field
	for i, item := range d.list(c.field("builtinToolboxes"), raw) {
		entry := d.object(index(c.field("builtinToolboxes"), i), item)
		if d.failed() {
			break
		}
		kind := d.requiredString(entry, "tag")
		contents, ok := entry.get("contents")
		if !ok {
			d.failf(entry.field("contents"), "required field is missing")
		}
		if d.failed() {
			break
		}
		field := entry.field("contents")
		var box BuiltinToolbox
		switch kind {
		case SqliteToolboxKind, SystemToolboxKind, DeveloperToolboxKind, LuaToolboxKind:
			box = d.builtinToolbox(kind, field, contents, where)
		default:
			d.failf(entry.field("tag"), "unknown builtin toolbox %q (want %s, %s, %s or %s)", kind, SqliteToolboxKind, SystemToolboxKind, DeveloperToolboxKind, LuaToolboxKind)
		}
		d.warnUnread(entry, noIgnoredFields)
		if d.failed() {
			break
		}
		key := box.Kind + "/" + box.Name
		if prev, dup := seen[key]; dup {
			d.failf(field, "a %s named %q is declared twice (first at %s): its tools would have the same names", box.Kind, box.Name, prev)
			break
		}
		seen[key] = field
		boxes = append(boxes, box)
	}
	return boxes
}

// builtinToolbox reads the contents of one entry of a known kind.
func (d *decoder) builtinToolbox(kind, field string, raw json.RawMessage, where places) BuiltinToolbox {
	c := d.object(field, raw)
	if d.failed() {
		return BuiltinToolbox{}
	}
	box := BuiltinToolbox{Kind: kind}
	// agents-exe's Lua toolbox documents its keys in lower case, the
	// others capitalised: a missing one is named as its documentation
	// writes it.
	name, desc := [2]string{"Name", "name"}, [2]string{"Description", "description"}
	if kind == LuaToolboxKind {
		name, desc = [2]string{"name", "Name"}, [2]string{"description", "Description"}
	}
	nameKey, nameRaw, ok := c.getFirst(name[0], name[1])
	if !ok {
		d.failf(c.field(nameKey), "required field is missing")
		return box
	}
	box.Name = d.nonEmptyString(c.field(nameKey), nameRaw)
	if descKey, descRaw, ok := c.getFirst(desc[0], desc[1]); ok {
		box.Description = d.str(c.field(descKey), descRaw)
	}
	switch kind {
	case LuaToolboxKind:
		d.luaToolbox(c, &box, c.field(nameKey), where)
	case SqliteToolboxKind:
		// The promote tool has the longest name of a SQLite toolbox.
		d.checkBuiltinName(c.field(nameKey), box.Name, SqliteToolPrefix, SqlitePromoteSuffix)
		box.Sqlite = d.sqliteDatabase(c, where)
	case SystemToolboxKind:
		d.checkBuiltinName(c.field(nameKey), box.Name, SystemToolPrefix, SystemToolSuffix)
		box.Capabilities = d.capabilities(c, systemCapabilities(), systemCapabilitiesLeftOut())
		if key, raw, ok := c.getFirst("CommandFilter", "commandFilter"); ok {
			box.CommandFilter = d.nonEmptyString(c.field(key), raw)
		}
		// Read for the capabilities this server leaves out (env-vars,
		// attach-file, the session ones), which say so themselves.
		for _, key := range []string{"EnvVarFilter", "envVarFilter", "FileSandbox", "fileSandbox",
			"SessionIntrospectionScope", "sessionIntrospectionScope",
			"SessionIntrospectionMaxResults", "sessionIntrospectionMaxResults",
			"SessionIntrospectionIncludeToolOutputs", "sessionIntrospectionIncludeToolOutputs"} {
			c.get(key)
		}
	case DeveloperToolboxKind:
		d.checkBuiltinName(c.field(nameKey), box.Name, DeveloperToolPrefix, DeveloperToolSuffix)
		box.Capabilities = d.capabilities(c, developerCapabilities(), nil)
		box.Sandbox = d.fileSandbox(c, where)
		if box.Sandbox.Predicate.Kind == PredAlwaysDeny && d.touchesFiles(box.Capabilities) {
			d.warnf(c.field("FileSandbox"), "no file sandbox allows any path: every file and directory the toolbox is asked for is refused")
		}
	}
	box.Toolgroup = d.activation(c)
	d.warnLifetime(c)
	return box
}

// touchesFiles reports whether a developer toolbox's capabilities read
// or write files.
func (d *decoder) touchesFiles(caps []string) bool {
	return slices.ContainsFunc(caps, func(c string) bool { return c != "help" })
}

// checkBuiltinName checks that name fits the tools named after it.
func (d *decoder) checkBuiltinName(field, name, prefix, suffix string) {
	if d.failed() {
		return
	}
	if !slugPattern.MatchString(name) {
		d.failf(field, "%q: use only letters, digits, \"-\" and \"_\" (the name is part of the tool %s%s%s)", name, prefix, name, suffix)
		return
	}
	if tool := prefix + name + suffix; len(tool) > maxToolName {
		d.failf(field, "%q is too long: the tool %s would have %d characters, and model APIs accept %d", name, tool, len(tool), maxToolName)
	}
}

// capabilities reads "Capabilities": names this server offers are kept
// (each once); names of agents-exe it leaves out are warnings; any other
// name is an error, as it is for agents-exe.
func (d *decoder) capabilities(c *object, offered []string, leftOut map[string]string) []string {
	key, raw, ok := c.getFirst("Capabilities", "capabilities")
	if !ok {
		d.failf(c.field(key), "required field is missing")
		return nil
	}
	field := c.field(key)
	if leftOut == nil {
		leftOut = map[string]string{}
		for _, name := range developerCapabilitiesLeftOut() {
			leftOut[name] = "not offered by this server"
		}
	}
	var out []string
	defer func() {
		if len(out) == 0 && !d.failed() {
			d.warnf(field, "no capability this server offers is enabled: the toolbox offers no tool")
		}
	}()
	for i, name := range d.strings(field, raw) {
		if d.failed() {
			return nil
		}
		switch why, gone := leftOut[name]; {
		case slices.Contains(out, name):
		case slices.Contains(offered, name):
			out = append(out, name)
		case gone:
			d.warnf(index(field, i), "capability %q is %s; the toolbox is offered without it", name, why)
		default:
			known := append(append([]string(nil), offered...), keysOf(leftOut)...)
			slices.Sort(known)
			d.failf(index(field, i), "unknown capability %q (want one of %s)", name, strings.Join(known, ", "))
		}
	}
	return out
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sqliteDatabase reads a SqliteToolbox's "Versioning", or the older
// "path" and "access" agents-exe still documents.
func (d *decoder) sqliteDatabase(c *object, where places) SqliteDatabase {
	key, raw, ok := c.getFirst("Versioning", "versioning")
	if !ok {
		return d.legacySqlite(c, where)
	}
	v := d.object(c.field(key), raw)
	if d.failed() {
		return SqliteDatabase{}
	}
	tag := d.requiredString(v, "tag")
	var db SqliteDatabase
	pathKey := "path"
	switch tag {
	case string(SqliteReadOnly), string(SqliteReadWrite):
		db.Access = SqliteAccess(tag)
	case "SqliteNoVersioning":
		db.Access = SqliteReadWrite
	case string(SqliteVersioned):
		db.Access = SqliteVersioned
		pathKey = "basePath"
		if shared, ok := v.get("shared"); ok {
			switch s := d.str(v.field("shared"), shared); s {
			case "conversation":
			case "global", "turn", "tool-call":
				d.warnf(v.field("shared"), "%q is not supported by this server: each session has its own copy, as with \"conversation\"", s)
			default:
				if !d.failed() {
					d.failf(v.field("shared"), "unknown sharing %q (want conversation, global, turn or tool-call)", s)
				}
			}
		} else {
			d.failf(v.field("shared"), "required field is missing")
		}
		if root := d.optionalString(v, "storageRoot"); root != "" && !d.failed() {
			db.StorageRoot = absoluteIn(where, root)
		}
	default:
		if !d.failed() {
			d.failf(v.field("tag"), "unknown versioning %q (want SqliteReadOnly, SqliteReadWrite or SqliteVersioned)", tag)
		}
	}
	written := d.requiredString(v, pathKey)
	d.warnUnread(v, noIgnoredFields)
	if d.failed() {
		return SqliteDatabase{}
	}
	db.Path = d.databasePath(v.field(pathKey), written, db.Access, where)
	return db
}

// legacySqlite reads {"path": …, "access": "read-only"|"read-write"|"snapshot"}.
func (d *decoder) legacySqlite(c *object, where places) SqliteDatabase {
	key, raw, ok := c.getFirst("Path", "path")
	if !ok {
		d.failf(c.field("Versioning"), "required field is missing")
		return SqliteDatabase{}
	}
	written := d.nonEmptyString(c.field(key), raw)
	db := SqliteDatabase{Access: SqliteReadWrite}
	if accessKey, accessRaw, ok := c.getFirst("Access", "access"); ok {
		switch a := d.str(c.field(accessKey), accessRaw); a {
		case "read-only":
			db.Access = SqliteReadOnly
		case "read-write":
		case "snapshot":
			db.Access = SqliteVersioned
		default:
			if !d.failed() {
				d.failf(c.field(accessKey), "unknown access %q (want read-only, read-write or snapshot)", a)
			}
		}
	}
	if d.failed() {
		return SqliteDatabase{}
	}
	db.Path = d.databasePath(c.field(key), written, db.Access, where)
	return db
}

// databasePath resolves a database path as tool paths are resolved. A
// read-only database must exist; another is created at its first use,
// so only its folder must exist.
func (d *decoder) databasePath(field, written string, access SqliteAccess, where places) string {
	path, info := d.toolPath(field, written, where)
	switch {
	case info != nil && info.IsDir():
		d.failf(field, "%q is a directory, not a database file", written)
	case info == nil && access == SqliteReadOnly:
		d.failf(field, "%q does not exist: a read-only database must exist when the agent loads (SqliteReadWrite creates a missing one)", written)
	case info == nil:
		if dir, err := statDir(filepath.Dir(path)); err != nil || !dir {
			d.failf(field, "%q cannot be created: its folder %s does not exist", written, filepath.Dir(path))
		}
	}
	return path
}

// absoluteIn is a path of the file made absolute from its directory.
func absoluteIn(where places, written string) string {
	if filepath.IsAbs(written) {
		return filepath.Clean(written)
	}
	return filepath.Join(where.fileDir, written)
}

// fileSandbox reads a DeveloperToolbox's "FileSandbox", agents-exe's
// FileSandboxConfig ({"fsbPredicate", "fsbMaxFileSize", "fsbName"}, or
// "predicate", "maxFileSize", "name" as its documentation writes them).
// Without one every path is refused, as agents-exe does.
func (d *decoder) fileSandbox(c *object, where places) FileSandbox {
	deny := FileSandbox{Predicate: PathPredicate{Kind: PredAlwaysDeny}}
	key, raw, ok := c.getFirst("FileSandbox", "fileSandbox")
	if !ok {
		return deny
	}
	o := d.object(c.field(key), raw)
	if d.failed() {
		return deny
	}
	var box FileSandbox
	if k, r, ok := o.getFirst("fsbName", "name"); ok {
		box.Name = d.str(o.field(k), r)
	}
	predKey, predRaw, ok := o.getFirst("fsbPredicate", "predicate")
	if !ok {
		d.failf(o.field(predKey), "required field is missing")
		return deny
	}
	box.Predicate = d.predicate(o.field(predKey), predRaw, where, 0)
	if k, r, ok := o.getFirst("fsbMaxFileSize", "maxFileSize"); ok {
		box.MaxFileSize = d.size(o.field(k), r)
	}
	d.warnUnread(o, noIgnoredFields)
	return box
}

// size reads a number of bytes, at least 1.
func (d *decoder) size(field string, raw json.RawMessage) int64 {
	n := d.integer(field, raw)
	if !d.failed() && n < 1 {
		d.failf(field, "must be a number of bytes of at least 1, got %d", n)
	}
	return int64(n)
}

// maxPredicateDepth bounds how deep predicates nest, so a hostile file
// cannot exhaust the stack.
const maxPredicateDepth = 32

// predicate reads one PathPredicate, tagged as Aeson encodes it:
// {"tag": "DirectoryRecursive", "contents": "./src"}, {"tag": "And",
// "contents": [p, q]}, {"tag": "AlwaysAllow"}.
func (d *decoder) predicate(field string, raw json.RawMessage, where places, depth int) PathPredicate {
	if depth > maxPredicateDepth {
		d.failf(field, "predicates nest deeper than %d levels", maxPredicateDepth)
		return PathPredicate{}
	}
	o := d.object(field, raw)
	if d.failed() {
		return PathPredicate{}
	}
	p := PathPredicate{Kind: d.requiredString(o, "tag")}
	contents, has := o.get("contents")
	cf := o.field("contents")
	need := func() bool {
		if !has && !d.failed() {
			d.failf(cf, "required field is missing")
		}
		return has && !d.failed()
	}
	switch p.Kind {
	case PredFileExactly, PredDirectoryExactly, PredDirectoryRecursive, PredDirectoryShallow, PredChildOf:
		if need() {
			written := d.nonEmptyString(cf, contents)
			if !d.failed() {
				p.Path, _ = d.toolPath(cf, written, where)
			}
		}
	case PredFilePattern:
		if need() {
			p.Pattern = d.nonEmptyString(cf, contents)
			if _, err := filepath.Match(p.Pattern, ""); err != nil && !d.failed() {
				d.failf(cf, "%q is not a file name pattern: %v", p.Pattern, err)
			}
		}
	case PredFileExtension:
		if need() {
			p.Extensions = d.strings(cf, contents)
		}
	case PredFileSizeLessThan:
		if need() {
			p.Size = d.size(cf, contents)
		}
	case PredAnd, PredOr:
		if need() {
			items := d.list(cf, contents)
			if len(items) != 2 && !d.failed() {
				d.failf(cf, "%s takes two predicates, got %d", p.Kind, len(items))
			}
			for i, item := range items {
				p.Operands = append(p.Operands, d.predicate(index(cf, i), item, where, depth+1))
			}
		}
	case PredNot:
		if need() {
			p.Operands = []PathPredicate{d.predicate(cf, contents, where, depth+1)}
		}
	case PredAny, PredAll:
		if need() {
			for i, item := range d.list(cf, contents) {
				p.Operands = append(p.Operands, d.predicate(index(cf, i), item, where, depth+1))
			}
		}
	case PredAlwaysAllow, PredAlwaysDeny:
	default:
		if !d.failed() {
			d.failf(o.field("tag"), "unknown path predicate %q (want one of %s)", p.Kind, strings.Join(predicateKinds(), ", "))
		}
	}
	d.warnUnread(o, noIgnoredFields)
	return p
}

func predicateKinds() []string {
	return []string{PredFileExactly, PredDirectoryExactly, PredDirectoryRecursive, PredDirectoryShallow, PredChildOf,
		PredFilePattern, PredFileExtension, PredFileSizeLessThan, PredAnd, PredOr, PredNot, PredAny, PredAll,
		PredAlwaysAllow, PredAlwaysDeny}
}

// ToolNames returns the names of the tools a builtin toolbox offers.
func (b BuiltinToolbox) ToolNames() []string {
	switch b.Kind {
	case SqliteToolboxKind:
		names := []string{SqliteToolPrefix + b.Name + SqliteQuerySuffix}
		if b.Sqlite.Access == SqliteVersioned {
			names = append(names, SqliteToolPrefix+b.Name+SqlitePromoteSuffix)
		}
		return names
	case SystemToolboxKind:
		return []string{SystemToolPrefix + b.Name + SystemToolSuffix}
	case DeveloperToolboxKind:
		return []string{DeveloperToolPrefix + b.Name + DeveloperToolSuffix}
	case LuaToolboxKind:
		return []string{LuaToolPrefix + b.Name + LuaToolSuffix}
	}
	return nil
}

// String shows a predicate as agents-exe's documentation writes it, for
// messages that say why a path was refused.
func (p PathPredicate) String() string {
	switch p.Kind {
	case PredFilePattern:
		return fmt.Sprintf("%s %q", p.Kind, p.Pattern)
	case PredFileExtension:
		return fmt.Sprintf("%s %v", p.Kind, p.Extensions)
	case PredFileSizeLessThan:
		return fmt.Sprintf("%s %d", p.Kind, p.Size)
	case PredAnd, PredOr, PredNot, PredAny, PredAll:
		parts := make([]string, len(p.Operands))
		for i, q := range p.Operands {
			parts[i] = q.String()
		}
		return p.Kind + "(" + strings.Join(parts, ", ") + ")"
	case PredAlwaysAllow, PredAlwaysDeny:
		return p.Kind
	}
	return fmt.Sprintf("%s %s", p.Kind, p.Path)
}

// statDir reports whether path is a directory.
func statDir(path string) (bool, error) {
	info, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	return info.IsDir(), nil
}
