package fakellm

import (
	"errors"
	"fmt"
)

// compiledRules is Rules checked and turned into what the server runs:
// regexps compiled, durations parsed, arguments compacted. It is never
// modified after compile, so requests read it without locking.
type compiledRules struct {
	model         string
	contextWindow int
	rules         []compiledRule
	fallback      compiledReply
	// summary answers compaction requests no compaction rule matches.
	summary compiledReply
}

type compiledRule struct {
	name          string
	match         matcher
	times         int
	contextWindow int
	reply         compiledReply
}

// builtinDefaultText answers requests no rule matches when Rules.Default
// is nil.
const builtinDefaultText = `fakellm: no rule matched; last user message: "{{last_user}}"`

// builtinSummaryText answers compaction requests no compaction rule
// matches.
const builtinSummaryText = "{{" + placeholderSummary + "}}"

// Validate reports the first problem in r as a *RulesError, or nil when New
// would accept r.
func (r Rules) Validate() error {
	_, err := compile(r)
	return err
}

func compile(r Rules) (*compiledRules, error) {
	out := &compiledRules{model: r.Model, contextWindow: r.ContextWindow}
	if out.model == "" {
		out.model = DefaultModel
	}
	if r.ContextWindow < 0 {
		return nil, locate(fieldErrorf("context_window", "must not be negative (0 is unlimited), got %d", r.ContextWindow), -1, "")
	}
	var err error
	if out.summary, err = compileReply("compaction summary", Reply{Text: builtinSummaryText}); err != nil {
		return nil, locate(err, -1, "")
	}
	fallback := Reply{Text: builtinDefaultText}
	if r.Default != nil {
		fallback = *r.Default
	}
	if out.fallback, err = compileReply("default", fallback); err != nil {
		return nil, locate(err, -1, "")
	}
	for i, rule := range r.Rules {
		c, err := compileRule(rule)
		if err != nil {
			return nil, locate(err, i, rule.Name)
		}
		out.rules = append(out.rules, c)
	}
	return out, nil
}

func compileRule(r Rule) (compiledRule, error) {
	if r.Times < 0 {
		return compiledRule{}, fieldErrorf("times", "must not be negative, got %d", r.Times)
	}
	if r.ContextWindow < 0 {
		return compiledRule{}, fieldErrorf("context_window", "must not be negative (0 is the file's window), got %d", r.ContextWindow)
	}
	m, err := compileMatch(r.Match)
	if err != nil {
		return compiledRule{}, err
	}
	reply, err := compileReply("reply", r.Reply)
	if err != nil {
		return compiledRule{}, err
	}
	return compiledRule{name: r.Name, match: m, times: r.Times, contextWindow: r.ContextWindow, reply: reply}, nil
}

// locate wraps a compile error into a *RulesError naming its rule.
func locate(err error, rule int, name string) *RulesError {
	re := &RulesError{Rule: rule, RuleName: name, Err: err}
	if fe, ok := errors.AsType[*fieldError](err); ok {
		re.Field, re.Err = fe.field, fe.err
	}
	return re
}

// mustCompile is compile for New, whose callers pass rules they wrote in Go
// or got from ParseRules; invalid rules there are a programming error.
func mustCompile(r Rules) *compiledRules {
	c, err := compile(r)
	if err != nil {
		panic(fmt.Sprintf("fakellm.New: %v", err))
	}
	return c
}
