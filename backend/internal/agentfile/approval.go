package agentfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
)

// ApprovalPolicy says when a call of a tool waits for a person's approval.
type ApprovalPolicy string

// The approval policies.
const (
	// ApproveNever runs every call at once: the default for every tool.
	ApproveNever ApprovalPolicy = "never"
	// ApproveAlways holds every call until a client approves it.
	ApproveAlways ApprovalPolicy = "always"
	// ApproveWhen holds the calls whose arguments match one of the rules.
	ApproveWhen ApprovalPolicy = "when"
)

// Approval is the approval policy of one tool.
type Approval struct {
	Tool   string
	Policy ApprovalPolicy
	// When, for ApproveWhen, are the rules: a call matching any of them
	// needs approval.
	When []ArgRule
}

// ArgRule matches a call whose argument Arg matches the pattern.
type ArgRule struct {
	Arg     string
	Matches *regexp.Regexp
}

// Arguments are a call's arguments as its tool decoded them: the value
// the tool runs on, with no key twice and none in another case, so a rule
// that looks an argument up by its exact name sees what the tool gets.
type Arguments interface {
	// Value is an argument's JSON value in one canonical spelling (every
	// escape in a string resolved), false when the call does not give it.
	Value(name string) (json.RawMessage, bool)
}

// Asks reports whether a call with these arguments waits for approval.
// A rule matches a string argument as its text, any other value as its
// JSON, so a rule on an object or a list sees its strings decoded too.
func (p *Approval) Asks(args Arguments) bool {
	switch p.Policy {
	case ApproveAlways:
		return true
	case ApproveWhen:
	default:
		return false
	}
	for _, r := range p.When {
		raw, ok := args.Value(r.Arg)
		if !ok {
			continue
		}
		text := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			text = s
		}
		if r.Matches.MatchString(text) {
			return true
		}
	}
	return false
}

// ApprovalFor returns the approval policy of a tool, nil when the agent
// file gives it none (never).
func (a *Agent) ApprovalFor(tool string) *Approval {
	for i := range a.Approvals {
		if a.Approvals[i].Tool == tool {
			return &a.Approvals[i]
		}
	}
	return nil
}

// approvals reads "approvals": a list of {"tool", "approval": "always" |
// "never"} or {"tool", "when": rule or [rules]}, a rule being {"arg",
// "matches": a regular expression}. Which tool names exist is known only
// once the tools are described; the catalog refuses unknown ones.
func (d *decoder) approvals(c *object) []Approval {
	raw, ok := c.get("approvals")
	if !ok {
		return nil
	}
	var out []Approval
	seen := map[string]bool{}
	for i, item := range d.list(c.field("approvals"), raw) {
		entry := d.object(index(c.field("approvals"), i), item)
		if d.failed() {
			return nil
		}
		p := Approval{Tool: d.requiredString(entry, "tool")}
		switch {
		case d.failed():
		case !isToolName(p.Tool):
			d.failf(entry.field("tool"), "%q is not a tool name: use 1 to 64 letters, digits, \"-\" or \"_\"", p.Tool)
		case seen[p.Tool]:
			d.failf(entry.field("tool"), "duplicate approval policy for %q: give each tool one entry", p.Tool)
		}
		seen[p.Tool] = true
		policy, hasPolicy := entry.get("approval")
		when, hasWhen := entry.get("when")
		switch {
		case hasPolicy && hasWhen:
			d.failf(entry.field("when"), "set \"approval\" or \"when\", not both")
		case hasWhen:
			p.Policy = ApproveWhen
			p.When = d.argRules(entry.field("when"), when)
		case hasPolicy:
			p.Policy = ApprovalPolicy(d.str(entry.field("approval"), policy))
			if !d.failed() && p.Policy != ApproveNever && p.Policy != ApproveAlways {
				d.failf(entry.field("approval"), "unknown policy %q (want \"never\" or \"always\", or a \"when\" rule instead)", p.Policy)
			}
		default:
			d.failf(entry.field("approval"), "required field is missing: say \"approval\": \"always\" or \"never\", or give a \"when\" rule")
		}
		d.warnUnread(entry, noIgnoredFields)
		out = append(out, p)
	}
	if d.failed() {
		return nil
	}
	return out
}

// argRules reads one rule or a list of them.
func (d *decoder) argRules(field string, raw json.RawMessage) []ArgRule {
	items := []json.RawMessage{raw}
	if kindOf(raw) == "list" {
		items = d.list(field, raw)
		if len(items) == 0 {
			d.failf(field, "must name at least one rule")
		}
	}
	var rules []ArgRule
	for i, item := range items {
		at := field
		if kindOf(raw) == "list" {
			at = index(field, i)
		}
		o := d.object(at, item)
		if d.failed() {
			return nil
		}
		r := ArgRule{Arg: d.requiredString(o, "arg")}
		pattern := d.requiredString(o, "matches")
		if d.failed() {
			return nil
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			d.failf(o.field("matches"), "%q is not a regular expression: %v", pattern, regexpReason(err))
			return nil
		}
		r.Matches = re
		d.warnUnread(o, noIgnoredFields)
		rules = append(rules, r)
	}
	return rules
}

// regexpReason is the part of a regexp error after its "error parsing
// regexp: " preamble, which the message says already.
func regexpReason(err error) string {
	var e *syntax.Error
	if errors.As(err, &e) {
		return fmt.Sprintf("%s in %q", e.Code, e.Expr)
	}
	return err.Error()
}
