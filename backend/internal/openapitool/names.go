package openapitool

import (
	"net/url"
	"strings"

	"github.com/agents-os/agents/backend/internal/agentfile"
)

// normalize makes text fit in a tool name as agents-exe does: every
// character other than a letter, a digit, "-" or "_" becomes "_", a name
// that does not start with a letter gets a "t" in front ("tool" for an
// empty one), and runs of "_" collapse to one, none left at either end.
// Letters are ASCII letters only: model APIs accept no others in a name.
func normalize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !nameChar(c) {
			b[i] = '_'
		}
	}
	s = string(b)
	switch {
	case s == "":
		s = "tool"
	case !letter(s[0]):
		s = "t" + s
	}
	var parts []string
	for _, p := range strings.Split(s, "_") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "_")
}

func letter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func nameChar(c byte) bool { return letter(c) || c >= '0' && c <= '9' || c == '-' || c == '_' }

// boxName is the toolbox's part of its tool names: the file's Name, else
// the host and port of the description's URL run together
// (http://localhost:8765/openapi.json gives localhost8765), else, for a
// description read from a file, the kind ("openapi", "postgrest").
func boxName(box agentfile.APIToolbox) string {
	if box.Name != "" {
		return normalize(box.Name)
	}
	if !box.SpecIsFile {
		if u, err := url.Parse(box.SpecURL); err == nil && u.Hostname() != "" {
			return normalize(u.Hostname() + u.Port())
		}
	}
	return string(box.Kind)
}

// openAPIToolName is openapi_<box>_<operationId>; an operation without
// an id is named by its method and path (GET /pets/{id}: the operation
// part is openapi_get_pets_id), as agents-exe names it.
func openAPIToolName(box string, op *operation) string {
	id := op.OperationID
	if id == "" {
		id = "openapi_" + strings.ToLower(op.Method) + "_" + strings.TrimLeft(op.Path, "/")
	}
	return "openapi_" + box + "_" + normalize(id)
}

// postgrestToolName is postgrest_<box>_<method>_<table>, the table being
// the path without its leading "/" (/tasks/{id} gives tasks_id).
func postgrestToolName(box string, op *operation) string {
	return "postgrest_" + box + "_" + strings.ToLower(op.Method) + "_" + normalize(tableName(op.Path))
}

// tableName is a PostgREST path's table: the path without its leading
// "/".
func tableName(path string) string { return strings.TrimLeft(path, "/") }
