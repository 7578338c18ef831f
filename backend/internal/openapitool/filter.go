package openapitool

import (
	"slices"
	"strings"

	"github.com/agents-os/agents/backend/internal/agentfile"
)

// matches evaluates an endpoint filter as agents-exe does: paths are
// compared by their segments (/api is a prefix of /api/v1 but not of
// /apikey), methods case aside; table is the PostgREST table ("" for an
// OpenAPI operation, which has none).
func matches(f *agentfile.EndpointFilter, op *operation, table string) bool {
	if f == nil {
		return true
	}
	path := segments(op.Path)
	switch f.Op {
	case "And":
		return len(f.Args) == 2 && matches(f.Args[0], op, table) && matches(f.Args[1], op, table)
	case "Or":
		return len(f.Args) == 2 && (matches(f.Args[0], op, table) || matches(f.Args[1], op, table))
	case "Not":
		return len(f.Args) == 1 && !matches(f.Args[0], op, table)
	case "AlwaysTrue":
		return true
	case "AlwaysFalse":
		return false
	case "PathPrefix":
		p := segments(f.Arg)
		return len(p) <= len(path) && slices.Equal(path[:len(p)], p)
	case "PathSuffix":
		p := segments(f.Arg)
		return len(p) <= len(path) && slices.Equal(path[len(path)-len(p):], p)
	case "PathEqual":
		return slices.Equal(segments(f.Arg), path)
	case "PathContains":
		return strings.Contains("/"+strings.Join(path, "/"), f.Arg)
	case "MethodEquals":
		return strings.EqualFold(f.Arg, op.Method)
	case "OperationIdEquals":
		return op.OperationID != "" && op.OperationID == f.Arg
	case "TableNameEquals":
		return table != "" && table == f.Arg
	}
	return false
}

// segments are a path's non-empty parts: /api//v1/ is [api v1].
func segments(path string) []string {
	var out []string
	for _, s := range strings.Split(path, "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
