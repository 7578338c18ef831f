package fakellm

import (
	"fmt"
	"strings"
)

// RulesError says what is wrong with rules and where: the file (LoadRules
// only), the rule and the field.
type RulesError struct {
	// File is the rules file; empty when the rules did not come from one.
	File string
	// Rule is the 0-based index of the faulty rule, or -1 when the problem
	// is outside the rules list (the top level or the default reply).
	Rule int
	// RuleName is the faulty rule's name, if it has one.
	RuleName string
	// Field is the JSON path of the faulty field inside the rule (or inside
	// the top level), such as "match.user_regexp"; empty when unknown.
	Field string
	// Err is the underlying problem.
	Err error
}

func (e *RulesError) Error() string {
	var parts []string
	if e.File != "" {
		parts = append(parts, e.File)
	}
	if e.Rule >= 0 {
		where := fmt.Sprintf("rule %d", e.Rule)
		if e.RuleName != "" {
			where += fmt.Sprintf(" (%q)", e.RuleName)
		}
		parts = append(parts, where)
	}
	if e.Field != "" {
		parts = append(parts, e.Field)
	}
	parts = append(parts, e.Err.Error())
	return "fakellm rules: " + strings.Join(parts, ": ")
}

func (e *RulesError) Unwrap() error { return e.Err }

// fieldError is a problem found in one field while compiling; the caller
// adds the rule it belongs to.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }

func fieldErrorf(field, format string, args ...any) *fieldError {
	return &fieldError{field: field, err: fmt.Errorf(format, args...)}
}
