package openapitool

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// bodyArg is the argument that carries an OpenAPI operation's body, and
// paramPrefix starts those that carry its parameters (p_petId), as
// agents-exe names them.
const (
	bodyArg     = "b"
	paramPrefix = "p_"
)

// Tool is one operation of an HTTP API offered as a tool.
type Tool struct {
	spec tool.Spec
	box  *toolbox
	op   *operation
	// run builds the call's request from its arguments.
	run func(args tool.Args) (request, error)
}

// Spec implements tool.Tool.
func (t *Tool) Spec() tool.Spec { return t.spec }

// Mode implements tool.Tool: the server sends the request.
func (t *Tool) Mode() session.CallMode { return session.CallAttached }

// Execute implements tool.Tool.
func (t *Tool) Execute(ctx context.Context, call tool.Call) tool.Result {
	req, err := t.run(call.Args)
	if err != nil {
		return tool.Failed(t.op.Method + " " + t.op.Path + ": " + err.Error())
	}
	return t.box.send(ctx, call, req)
}

func (b *toolbox) newTool(name, description string, params map[string]any, op *operation, run func(tool.Args) (request, error)) *Tool {
	schema, _ := json.Marshal(params)
	return &Tool{
		spec: tool.Spec{Name: name, Description: description, Parameters: schema, Kind: session.ToolHTTP, Source: b.decl.SpecURL},
		box:  b, op: op, run: run,
	}
}

// openAPITools are one tool per operation the filter keeps: its
// parameters as p_<name>, its body as b.
func (b *toolbox) openAPITools(ops []*operation) []tool.Tool {
	var tools []tool.Tool
	for _, op := range ops {
		if !b.keep(op, "") {
			continue
		}
		props := map[string]any{}
		var required []string
		for _, p := range op.Params {
			name := paramPrefix + p.Name
			props[name] = withDescription(toolSchema(p.Schema), p.Description)
			if p.Required {
				required = append(required, name)
			}
		}
		if op.Body != nil {
			desc := op.Body.Description
			if desc == "" {
				desc = "Request body"
			}
			s := toolSchema(op.Body.Schema)
			if own, _ := s["description"].(string); own != "" && own != desc {
				desc += "\n" + own
			}
			props[bodyArg] = withDescription(s, desc)
			if op.Body.Required {
				required = append(required, bodyArg)
			}
		}
		params := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			params["required"] = required
		}
		var lines []string
		for _, l := range []string{op.Summary, op.Description} {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		tools = append(tools, b.newTool(openAPIToolName(b.name, op), b.describe(op, lines...), params, op, func(args tool.Args) (request, error) {
			return openAPIRequest(op, args)
		}))
	}
	return tools
}

// openAPIRequest builds an operation's request from a call's arguments.
func openAPIRequest(op *operation, args tool.Args) (request, error) {
	req := request{method: op.Method, query: url.Values{}, header: http.Header{}}
	pathValues := map[string]string{}
	for _, p := range op.Params {
		raw, ok := args.Value(paramPrefix + p.Name)
		if !ok || isNull(raw) {
			continue
		}
		switch p.In {
		case "path":
			pathValues[p.Name] = argText(raw)
		case "query":
			for _, v := range queryValues(raw) {
				req.query.Add(p.Name, v)
			}
		case "header":
			req.header.Set(p.Name, argText(raw))
		}
	}
	path, err := fillPath(op.Path, pathValues)
	if err != nil {
		return req, err
	}
	req.path = path
	if raw, ok := args.Value(bodyArg); ok && op.Body != nil && !isNull(raw) {
		req.body = raw
	}
	return req, nil
}
