package tool

import (
	"encoding/json"
	"testing"
)

func TestCheckSchema(t *testing.T) {
	for _, tc := range []struct {
		schema string
		ok     bool
	}{
		{``, true},
		{`{}`, true},
		{`{"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": true}, "required": ["a"], "additionalProperties": false}`, true},
		{`{"type": "object", "properties": {"list": {"type": "array", "items": {"type": "integer"}}}, "additionalProperties": {"type": "string"}}`, true},
		{`"an object"`, false},
		{`{"type": 5}`, false},
		{`{"properties": []}`, false},
		{`{"properties": {"cmd": "string"}}`, false},
		{`{"required": "cmd"}`, false},
		{`{"additionalProperties": "no"}`, false},
		{`{"properties": {"list": {"items": 3}}}`, false},
		{`true`, false},
	} {
		err := CheckSchema(json.RawMessage(tc.schema))
		if (err == nil) != tc.ok {
			t.Errorf("CheckSchema(%s) = %v, want ok %v", tc.schema, err, tc.ok)
		}
	}
}
