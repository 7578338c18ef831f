package openapitool

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/agents-os/agents/backend/internal/tool"
)

// DefaultPostgRESTMethods are the methods a PostgREST toolbox offers
// when its file names none: those that read, as agents-exe chooses.
var DefaultPostgRESTMethods = []string{"GET", "HEAD", "OPTIONS"}

// The argument groups of a PostgREST tool, as agents-exe shapes them.
const (
	filtersArg = "filters"
	subsetArg  = "subset"
	rankingArg = "ranking"
	rowBodyArg = "body"
)

// postgrestSkipped are paths of a PostgREST description that are no
// table: the description itself and its viewers.
var postgrestSkipped = []string{"/", "/api/swagger.json", "/swagger.json", "/api/swagger-ui", "/swagger-ui", "/api/swagger-ui.html"}

// postgrestTools are one tool per table path and allowed method the
// filter keeps. Query parameters become the groups agents-exe offers:
// filters (a column's PostgREST condition, "eq.5"), subset (limit,
// offset, and columns, PostgREST's select) and ranking (order); the row
// is body, for POST, PUT and PATCH. A path parameter (PostgREST has
// none, but descriptions written after its style may) is p_<name>.
func (b *toolbox) postgrestTools(ops []*operation) []tool.Tool {
	allowed := b.decl.AllowedMethods
	if len(allowed) == 0 {
		allowed = DefaultPostgRESTMethods
	}
	var tools []tool.Tool
	for _, method := range allowed {
		for _, op := range ops {
			if op.Method != method || slices.Contains(postgrestSkipped, op.Path) || !b.keep(op, tableName(op.Path)) {
				continue
			}
			tools = append(tools, b.postgrestTool(op))
		}
	}
	return tools
}

// postgrestQuery says which group a query parameter goes in, and under
// which name.
func postgrestQuery(name string) (group, key string) {
	switch name {
	case "limit", "offset":
		return subsetArg, name
	case "select":
		return subsetArg, "columns"
	case "order":
		return rankingArg, "order"
	}
	return filtersArg, name
}

func (b *toolbox) postgrestTool(op *operation) *Tool {
	table := tableName(op.Path)
	groups := map[string]map[string]any{}
	var pathParams []string
	props := map[string]any{}
	for _, p := range op.Params {
		switch p.In {
		case "path":
			props[paramPrefix+p.Name] = withDescription(toolSchema(p.Schema), p.Description)
			pathParams = append(pathParams, paramPrefix+p.Name)
		case "query":
			group, key := postgrestQuery(p.Name)
			if groups[group] == nil {
				groups[group] = map[string]any{}
			}
			groups[group][key] = postgrestProperty(group, key, p)
		}
	}
	descriptions := map[string]string{
		filtersArg: "Row filters on columns. Use PostgREST operators like eq., gt., lt., like., etc.",
		subsetArg:  "Pagination and column selection",
		rankingArg: "Result ordering",
	}
	for group, members := range groups {
		props[group] = map[string]any{"type": "object", "description": descriptions[group], "properties": members, "additionalProperties": false}
	}
	hasBody := op.Body != nil && slices.Contains([]string{"POST", "PUT", "PATCH"}, op.Method)
	if hasBody {
		row := toolSchema(op.Body.Schema)
		// Every column may be left out: a PATCH sets some, a POST leaves
		// defaults to the database.
		delete(row, "required")
		props[rowBodyArg] = withDescription(row, "The row (JSON object) to write to "+table)
	}
	params := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(pathParams) > 0 {
		params["required"] = pathParams
	}
	var lines []string
	switch summary, desc := strings.TrimSpace(op.Summary), strings.TrimSpace(op.Description); {
	case summary != "" && desc != "":
		lines = append(lines, summary+":\n"+desc)
	case summary != "" || desc != "":
		lines = append(lines, summary+desc)
	}
	lines = append(lines, "Table: "+table)
	return b.newTool(postgrestToolName(b.name, op), b.describe(op, lines...), params, op, func(args tool.Args) (request, error) {
		return postgrestRequest(op, args, hasBody)
	})
}

// postgrestProperty is the schema of one member of a group. Filters are
// PostgREST conditions, text whatever the column's type; limit and
// offset are numbers.
func postgrestProperty(group, key string, p param) map[string]any {
	desc := p.Description
	switch {
	case group == filtersArg:
		if desc == "" {
			desc = "Filter on " + key
		}
		return map[string]any{"type": "string", "description": desc + " (a PostgREST condition, e.g. eq.5, gt.3, like.*text*, is.null)"}
	case key == "limit" || key == "offset":
		if desc == "" {
			desc = map[string]string{"limit": "Maximum number of rows to return", "offset": "Number of rows to skip"}[key]
		}
		return map[string]any{"type": "integer", "description": desc}
	case key == "columns":
		return map[string]any{"type": "string", "description": "Comma-separated column names to return (e.g., 'id,name,email')"}
	}
	return map[string]any{"type": "string", "description": "Ordering clause (e.g., 'created_at.desc,name.asc')"}
}

// postgrestRequest builds a PostgREST call's request: the groups'
// members as query parameters, the row as the body.
func postgrestRequest(op *operation, args tool.Args, hasBody bool) (request, error) {
	req := request{method: op.Method, query: url.Values{}, header: http.Header{}}
	pathValues := map[string]string{}
	for _, p := range op.Params {
		if p.In != "path" {
			continue
		}
		if raw, ok := args.Value(paramPrefix + p.Name); ok && !isNull(raw) {
			pathValues[p.Name] = argText(raw)
		}
	}
	for _, group := range []string{filtersArg, subsetArg, rankingArg} {
		raw, ok := args.Value(group)
		if !ok || isNull(raw) {
			continue
		}
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			continue
		}
		for _, key := range sortedRawKeys(members) {
			v := members[key]
			if isNull(v) {
				continue
			}
			name := key
			if group == subsetArg && key == "columns" {
				name = "select"
			}
			req.query.Set(name, argText(v))
		}
	}
	path, err := fillPath(op.Path, pathValues)
	if err != nil {
		return req, err
	}
	req.path = path
	if raw, ok := args.Value(rowBodyArg); ok && hasBody && !isNull(raw) {
		req.body = raw
	}
	return req, nil
}

func sortedRawKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
