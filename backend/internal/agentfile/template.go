package agentfile

import (
	"regexp"
	"slices"
)

// paramRef is a reference to a session param in a value of the agent
// file: {{param:NAME}}.
var paramRef = regexp.MustCompile(`\{\{\s*param:([^}\s]+)\s*\}\}`)

// ParamRefs returns the names of the session params s refers to, in
// order of first use.
func ParamRefs(s string) []string {
	var names []string
	for _, m := range paramRef.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	return names
}

// ExpandParams replaces each {{param:NAME}} of s with the param's value.
// missing names the params s refers to that params lacks; they expand to
// nothing.
func ExpandParams(s string, params map[string]string) (expanded string, missing []string) {
	expanded = paramRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := paramRef.FindStringSubmatch(ref)[1]
		v, ok := params[name]
		if !ok && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v
	})
	return expanded, missing
}
