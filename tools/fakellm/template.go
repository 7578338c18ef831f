package fakellm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Reply text can quote the request through placeholders, replaced verbatim
// (no template language: replies are data, not programs).
const (
	placeholderLastUser       = "last_user"
	placeholderLastToolResult = "last_tool_result"
	placeholderModel          = "model"
	placeholderRequestIndex   = "request_index"
	placeholderSummary        = "summary"
)

func isPlaceholderName(name string) bool {
	switch name {
	case placeholderLastUser, placeholderLastToolResult, placeholderModel, placeholderRequestIndex, placeholderSummary:
		return true
	}
	return false
}

// looksLikePlaceholder reports whether the text between "{{" and "}}" is
// meant as a placeholder (lowercase letters and underscores). Anything else,
// such as "{{ .Name }}", is ordinary text a reply may well contain.
func looksLikePlaceholder(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

// checkPlaceholders rejects placeholder-shaped names the server does not
// know, so that a typo fails when the rules load rather than showing up
// literally in a reply.
func checkPlaceholders(field, s string) error {
	for rest := s; ; {
		start := strings.Index(rest, "{{")
		if start < 0 {
			return nil
		}
		rest = rest[start+2:]
		end := strings.Index(rest, "}}")
		if end < 0 {
			return nil
		}
		if name := rest[:end]; looksLikePlaceholder(name) && !isPlaceholderName(name) {
			return fieldErrorf(field, "unknown placeholder {{%s}} (known: {{%s}}, {{%s}}, {{%s}}, {{%s}}, {{%s}})", name,
				placeholderLastUser, placeholderLastToolResult, placeholderModel, placeholderRequestIndex, placeholderSummary)
		}
	}
}

// placeholders fills placeholders for one request.
type placeholders struct {
	text *strings.Replacer
	// inJSONString escapes the values so that a placeholder inside a JSON
	// string literal (tool-call arguments) keeps the JSON valid.
	inJSONString *strings.Replacer
}

func newPlaceholders(req Request) placeholders {
	toolResult, _ := req.LastToolResult()
	values := []string{
		placeholderLastUser, req.LastUserText(),
		placeholderLastToolResult, toolResult,
		placeholderModel, req.Model,
		placeholderRequestIndex, strconv.Itoa(req.Index),
		placeholderSummary, compactionSummary(req),
	}
	var text, inJSON []string
	for i := 0; i < len(values); i += 2 {
		key := fmt.Sprintf("{{%s}}", values[i])
		text = append(text, key, values[i+1])
		inJSON = append(inJSON, key, jsonStringBody(values[i+1]))
	}
	return placeholders{
		text:         strings.NewReplacer(text...),
		inJSONString: strings.NewReplacer(inJSON...),
	}
}

// jsonStringBody is s encoded as a JSON string, without the quotes.
func jsonStringBody(s string) string {
	b, err := json.Marshal(s)
	if err != nil { // cannot happen: every Go string marshals
		return ""
	}
	return string(b[1 : len(b)-1])
}
