package agentfile

import (
	"encoding/json"
	"strings"

	"github.com/agents-os/agents/backend/internal/session"
)

// emptyParameters is the schema of a client tool that takes no arguments,
// a new slice each time since callers get to keep it.
func emptyParameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

// clientTools reads "clientTools": [{"name", "description", "parameters"}],
// tools the server defers to a client. "parameters" is the JSON Schema of
// the arguments; model APIs require it to describe an object.
func (d *decoder) clientTools(c *object) []ClientTool {
	raw, ok := c.get("clientTools")
	if !ok {
		return nil
	}
	var tools []ClientTool
	seen := map[string]bool{}
	for i, item := range d.list(c.field("clientTools"), raw) {
		entry := d.object(index(c.field("clientTools"), i), item)
		if d.failed() {
			break
		}
		tool := ClientTool{Name: d.requiredString(entry, "name")}
		switch {
		case d.failed():
		case !isToolName(tool.Name):
			d.failf(entry.field("name"), "%q: use 1 to 64 letters, digits, \"-\" or \"_\"", tool.Name)
		case seen[tool.Name]:
			d.failf(entry.field("name"), "duplicate client tool %q", tool.Name)
		}
		seen[tool.Name] = true
		tool.Description = d.optionalString(entry, "description")
		tool.Parameters = d.parametersSchema(entry)
		d.warnUnread(entry, noIgnoredFields)
		tools = append(tools, tool)
	}
	return tools
}

// parametersSchema checks the shape model APIs insist on: an object schema,
// with "properties" an object and "required" a list of names. It does not
// validate the rest of JSON Schema; the model provider does.
func (d *decoder) parametersSchema(entry *object) json.RawMessage {
	raw, ok := entry.get("parameters")
	if !ok {
		return emptyParameters()
	}
	schema := d.object(entry.field("parameters"), raw)
	if d.failed() {
		return nil
	}
	if t, ok := schema.get("type"); ok {
		if kind := d.str(schema.field("type"), t); !d.failed() && kind != "object" {
			d.failf(schema.field("type"), "must be \"object\" (tool arguments are an object), got %q", kind)
		}
	}
	if props, ok := schema.get("properties"); ok {
		d.object(schema.field("properties"), props)
	}
	if required, ok := schema.get("required"); ok {
		d.strings(schema.field("required"), required)
	}
	return raw
}

func (d *decoder) maxSteps(c *object) int {
	raw, ok := c.get("maxSteps")
	if !ok {
		return 0
	}
	n := d.integer(c.field("maxSteps"), raw)
	switch {
	case d.failed():
	case n <= 0:
		d.failf(c.field("maxSteps"), "must be greater than 0, got %d", n)
	case n > MaxStepsLimit:
		d.failf(c.field("maxSteps"), "must be from 1 to %d, got %d", MaxStepsLimit, n)
	}
	return n
}

// budget reads "budget": {tokens, costUsd, autoResume}, the budget a
// root session of the agent starts with when its client sets none. It
// sets a limit: tokens, costUsd or both, each greater than 0.
func (d *decoder) budget(c *object) *session.Budget {
	raw, ok := c.get("budget")
	if !ok {
		return nil
	}
	o := d.object(c.field("budget"), raw)
	if d.failed() {
		return nil
	}
	b := &session.Budget{AutoResume: d.optionalBool(o, "autoResume", false)}
	if _, ok := o.get("tokens"); ok {
		n := d.tokens(o, "tokens", 1)
		b.Tokens = &n
	}
	if raw, ok := o.get("costUsd"); ok {
		dollars := d.number(o.field("costUsd"), raw)
		if err := session.CheckDollars(dollars); !d.failed() && (err != nil || dollars == 0) {
			d.failf(o.field("costUsd"), "must be a number of US dollars greater than 0 and at most %.0f, got %v", float64(session.MaxDollars), dollars)
		}
		cost := session.DollarsToNanos(dollars)
		b.Cost = &cost
	}
	d.warnUnread(o, noIgnoredFields)
	if !d.failed() && !b.Limited() {
		d.failf(c.field("budget"), "sets no limit: give tokens, costUsd or both")
	}
	if d.failed() {
		return nil
	}
	return b
}

// paramFieldNotSupported reports the agents-exe parameter fields this
// server does not implement: who may set the value, and a default taken
// from a secret source.
func paramFieldNotSupported(key string) bool {
	return key == "scope" || key == "default"
}

// params reads the declared session parameters from "params" and from
// "parameters", agents-exe's name for the same list. Both default to
// secret: false, required: true, as agents-exe does.
func (d *decoder) params(c *object) []Param {
	var params []Param
	seen := map[string]bool{}
	for _, key := range []string{"params", "parameters"} {
		raw, ok := c.get(key)
		if !ok {
			continue
		}
		for i, item := range d.list(c.field(key), raw) {
			entry := d.object(index(c.field(key), i), item)
			if d.failed() {
				return nil
			}
			p := Param{Name: d.requiredString(entry, "name")}
			switch {
			case d.failed():
			case strings.ContainsAny(p.Name, " \t\r\n"):
				d.failf(entry.field("name"), "%q must not contain spaces", p.Name)
			case seen[p.Name]:
				d.failf(entry.field("name"), "duplicate parameter %q", p.Name)
			}
			seen[p.Name] = true
			p.Description = d.optionalString(entry, "description")
			p.Secret = d.optionalBool(entry, "secret", false)
			p.Required = d.optionalBool(entry, "required", true)
			d.warnUnread(entry, paramFieldNotSupported)
			params = append(params, p)
		}
	}
	return params
}

// passEnv reads "passEnv": names of variables of the server's environment
// passed on to the agent's bash tools.
func (d *decoder) passEnv(c *object) []string {
	raw, ok := c.get("passEnv")
	if !ok {
		return nil
	}
	names := d.strings(c.field("passEnv"), raw)
	seen := map[string]bool{}
	for i, name := range names {
		if d.failed() {
			return nil
		}
		switch {
		case !envNamePattern.MatchString(name):
			d.failf(index(c.field("passEnv"), i), "%q is not a variable name: use letters, digits and \"_\", not starting with a digit", name)
		case seen[name]:
			d.failf(index(c.field("passEnv"), i), "duplicate variable %q", name)
		}
		seen[name] = true
	}
	if d.failed() {
		return nil
	}
	return names
}

// limits reads "contextWindow" and "maxOutputTokens", the limits of the
// agent's model where the server's table and the config have none or
// the wrong ones.
func (d *decoder) limits(c *object, a *Agent) {
	a.ContextWindow = d.tokens(c, "contextWindow", 1)
	a.MaxOutputTokens = d.tokens(c, "maxOutputTokens", 1)
	if !d.failed() && a.ContextWindow != 0 && a.MaxOutputTokens > a.ContextWindow {
		d.failf(c.field("maxOutputTokens"), "%d is more than the contextWindow, %d, which holds the output too", a.MaxOutputTokens, a.ContextWindow)
	}
}

// compaction reads "compaction": {threshold, outputReserve, margin,
// pruneOver, keepRecent, model, prompt}, each over the server's setting.
// With the agent's own window, the numbers must fit in it.
func (d *decoder) compaction(c *object, window int64) Compaction {
	raw, ok := c.get("compaction")
	if !ok {
		return Compaction{}
	}
	o := d.object(c.field("compaction"), raw)
	if d.failed() {
		return Compaction{}
	}
	out := Compaction{
		Threshold:     d.tokens(o, "threshold", 0),
		OutputReserve: d.tokens(o, "outputReserve", 0),
		Margin:        d.tokens(o, "margin", 0),
		PruneOver:     d.tokens(o, "pruneOver", 0),
		KeepRecent:    d.tokens(o, "keepRecent", 0),
		Model:         d.optionalString(o, "model"),
	}
	if prompt, ok := o.get("prompt"); ok {
		out.Prompt = d.lines(o.field("prompt"), prompt)
	}
	d.warnUnread(o, noIgnoredFields)
	switch {
	case d.failed() || window == 0:
	case out.Threshold >= window:
		d.failf(o.field("threshold"), "%d is not below the contextWindow, %d", out.Threshold, window)
	case out.OutputReserve+out.Margin >= window:
		d.failf(o.field("outputReserve"), "%d and the margin, %d, leave nothing of the contextWindow, %d", out.OutputReserve, out.Margin, window)
	}
	return out
}

// tokens reads a number of tokens that is at least least (1: the field,
// when present, must say something; 0: 0 means the server's).
func (d *decoder) tokens(o *object, key string, least int) int64 {
	raw, ok := o.get(key)
	if !ok {
		return 0
	}
	n := d.integer(o.field(key), raw)
	if !d.failed() && n < least {
		if least == 1 {
			d.failf(o.field(key), "must be greater than 0, got %d", n)
		} else {
			d.failf(o.field(key), "must not be negative, got %d", n)
		}
	}
	return int64(n)
}
