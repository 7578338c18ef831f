package fakellm

import (
	"regexp"
	"slices"
	"strings"
)

// matcher is a compiled Match.
type matcher struct {
	userContains       string
	userRegexp         *regexp.Regexp
	toolResultContains string
	toolResultRegexp   *regexp.Regexp
	lastIsToolResult   *bool
	toolsOffered       []string
	model              string
	systemContains     string
	requestIndex       *int
	assistantMessages  *int
	compaction         bool
}

func compileMatch(m Match) (matcher, error) {
	// Pointers and slices are copied so that later edits to the caller's
	// Rules cannot change a running server.
	c := matcher{
		userContains:       m.UserContains,
		toolResultContains: m.ToolResultContains,
		lastIsToolResult:   clonePtr(m.LastIsToolResult),
		toolsOffered:       slices.Clone(m.ToolsOffered),
		model:              m.Model,
		systemContains:     m.SystemContains,
		requestIndex:       clonePtr(m.RequestIndex),
		assistantMessages:  clonePtr(m.AssistantMessages),
		compaction:         m.Compaction,
	}
	var err error
	if c.userRegexp, err = compileRegexp("match.user_regexp", m.UserRegexp); err != nil {
		return matcher{}, err
	}
	if c.toolResultRegexp, err = compileRegexp("match.tool_result_regexp", m.ToolResultRegexp); err != nil {
		return matcher{}, err
	}
	for i, name := range m.ToolsOffered {
		if name == "" {
			return matcher{}, fieldErrorf("match.tools_offered", "entry %d is empty", i)
		}
	}
	if m.RequestIndex != nil && *m.RequestIndex < 0 {
		return matcher{}, fieldErrorf("match.request_index", "must not be negative, got %d", *m.RequestIndex)
	}
	if m.AssistantMessages != nil && *m.AssistantMessages < 0 {
		return matcher{}, fieldErrorf("match.assistant_messages", "must not be negative, got %d", *m.AssistantMessages)
	}
	return c, nil
}

func compileRegexp(field, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, &fieldError{field: field, err: err}
	}
	return re, nil
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// matches reports whether every condition that is set holds for req.
// Whether req is a compaction request is always checked: a rule answers
// either compaction requests or the others, never both.
func (m matcher) matches(req Request) bool {
	if m.compaction != req.IsCompaction() {
		return false
	}
	user := req.LastUserText()
	if m.userContains != "" && !strings.Contains(user, m.userContains) {
		return false
	}
	if m.userRegexp != nil && !m.userRegexp.MatchString(user) {
		return false
	}
	toolResult, hasToolResult := req.LastToolResult()
	if m.toolResultContains != "" && !(hasToolResult && strings.Contains(toolResult, m.toolResultContains)) {
		return false
	}
	if m.toolResultRegexp != nil && !(hasToolResult && m.toolResultRegexp.MatchString(toolResult)) {
		return false
	}
	if m.lastIsToolResult != nil && *m.lastIsToolResult != req.LastIsToolResult() {
		return false
	}
	offered := req.ToolNames()
	for _, name := range m.toolsOffered {
		if !slices.Contains(offered, name) {
			return false
		}
	}
	if m.model != "" && m.model != req.Model {
		return false
	}
	if m.systemContains != "" && !strings.Contains(req.SystemPrompt(), m.systemContains) {
		return false
	}
	if m.requestIndex != nil && *m.requestIndex != req.Index {
		return false
	}
	if m.assistantMessages != nil && *m.assistantMessages != req.AssistantMessages() {
		return false
	}
	return true
}
