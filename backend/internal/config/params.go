package config

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/agents-os/agents/backend/internal/agentfile"
)

// LoadParams reads a params file: a JSON object from parameter name to
// value, given to sessions as their params.
//
//	{"github_token": "ghp_…", "tenant": "acme"}
//
// A value may also be {"value": "…", "pinned": true}, the form agents-exe
// uses; the value is taken and "pinned" ignored. Values must be strings.
// Params are often secrets: errors never show a value.
func LoadParams(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("params file %s: %w", path, err)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, redactedJSONError(path, data, err, `must be a JSON object {"name": "value", …}`)
	}
	params := make(map[string]string, len(entries))
	for name, raw := range entries {
		value, ok := paramValue(raw)
		if !ok {
			return nil, &agentfile.Error{File: path, Field: name, Reason: `must be a string, or {"value": "…"}`}
		}
		params[name] = value
	}
	return params, nil
}

func paramValue(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var wrapped struct {
		Value *string `json:"value"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && wrapped.Value != nil {
		return *wrapped.Value, true
	}
	return "", false
}
