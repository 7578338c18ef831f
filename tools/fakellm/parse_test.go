package fakellm_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agents-os/agents/tools/fakellm"
)

func TestParseRules(t *testing.T) {
	t.Parallel()
	rules, err := fakellm.ParseRules([]byte(`{
		"model": "m1",
		"context_window": 8000,
		"default": {"error": {"status": 500}},
		"rules": [
			{"name": "a", "times": 2, "match": {"user_regexp": "^x", "assistant_messages": 0, "last_is_tool_result": false},
			 "reply": {"text": "hi", "chunk_delay": "5ms", "tool_calls": [{"name": "f", "arguments": {"k": [1, 2]}}]}},
			{"reply": {}},
			{"match": {"compaction": true}, "context_window": 4000, "reply": {"text": "{{summary}}"}}
		]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	if rules.Model != "m1" || rules.ContextWindow != 8000 || rules.Default == nil || rules.Default.Error.Status != 500 || len(rules.Rules) != 3 {
		t.Fatalf("rules = %+v", rules)
	}
	if c := rules.Rules[2]; !c.Match.Compaction || c.ContextWindow != 4000 || rules.Rules[0].ContextWindow != 0 || rules.Rules[0].Match.Compaction {
		t.Errorf("rules 0 and 2 = %+v, %+v; want the window and compaction on rule 2 only", rules.Rules[0], c)
	}
	a := rules.Rules[0]
	if a.Name != "a" || a.Times != 2 || a.Match.UserRegexp != "^x" || *a.Match.AssistantMessages != 0 ||
		*a.Match.LastIsToolResult != false || a.Reply.Text != "hi" || a.Reply.ChunkDelay != "5ms" ||
		a.Reply.ToolCalls[0].Name != "f" || string(a.Reply.ToolCalls[0].Arguments) != `{"k": [1, 2]}` {
		t.Errorf("rule 0 = %+v", a)
	}
	if b := rules.Rules[1]; b.Match.UserContains != "" || b.Match.RequestIndex != nil || b.Reply.Text != "" {
		t.Errorf("rule 1 = %+v, want an empty match and reply", b)
	}
}

func TestParseRulesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		doc       string
		wantRule  int
		wantName  string
		wantField string
		wantText  string // in the message
	}{
		{"syntax error with its position", "{\n  \"rules\": [\n    {\"reply\": {}},\n  ]\n}", -1, "", "", "line 4, column 3"},
		{"empty document", "  ", -1, "", "", "empty"},
		{"trailing data", `{"rules": []} {}`, -1, "", "", "after the JSON value"},
		{"not an object", `[]`, -1, "", "", "cannot use a JSON array"},
		{"unknown top-level field", `{"rulez": []}`, -1, "", "", `unknown field "rulez"`},
		{"rules of the wrong type", `{"rules": {}}`, -1, "", "rules", "cannot use a JSON object"},
		{"unknown field in a rule", `{"rules": [{"reply": {}}, {"name": "b", "match": {"usr_contains": "x"}, "reply": {}}]}`, 1, "b", "", `unknown field "usr_contains"`},
		{"field of the wrong type", `{"rules": [{"match": {"request_index": "zero"}, "reply": {}}]}`, 0, "", "match.request_index", "cannot use a JSON string"},
		{"missing reply", `{"rules": [{"name": "r", "match": {}}]}`, 0, "r", "reply", "required"},
		{"null reply", `{"rules": [{"reply": null}]}`, 0, "", "reply", "required"},
		{"bad user regexp", `{"rules": [{"name": "re", "match": {"user_regexp": "(abc"}, "reply": {}}]}`, 0, "re", "match.user_regexp", "missing closing )"},
		{"bad tool result regexp", `{"rules": [{"match": {"tool_result_regexp": "*"}, "reply": {}}]}`, 0, "", "match.tool_result_regexp", "missing argument"},
		{"empty tool name", `{"rules": [{"match": {"tools_offered": ["a", ""]}, "reply": {}}]}`, 0, "", "match.tools_offered", "entry 1"},
		{"negative request index", `{"rules": [{"match": {"request_index": -1}, "reply": {}}]}`, 0, "", "match.request_index", "negative"},
		{"negative assistant messages", `{"rules": [{"match": {"assistant_messages": -2}, "reply": {}}]}`, 0, "", "match.assistant_messages", "negative"},
		{"negative times", `{"rules": [{"times": -1, "reply": {}}]}`, 0, "", "times", "negative"},
		{"negative context window", `{"context_window": -1, "rules": []}`, -1, "", "context_window", "negative"},
		{"negative rule context window", `{"rules": [{"context_window": -4000, "reply": {}}]}`, 0, "", "context_window", "negative"},
		{"context window as a string", `{"context_window": "4k", "rules": []}`, -1, "", "context_window", "cannot use a JSON string"},
		{"unknown placeholder lists summary", `{"rules": [{"reply": {"text": "{{sumary}}"}}]}`, 0, "", "reply.text", "{{summary}}"},
		{"bad chunk delay", `{"rules": [{"reply": {"chunk_delay": "fast"}}]}`, 0, "", "reply.chunk_delay", "Go duration"},
		{"delay as a number", `{"rules": [{"reply": {"initial_delay": 20}}]}`, 0, "", "reply.initial_delay", "cannot use a JSON number"},
		{"negative initial delay", `{"rules": [{"reply": {"initial_delay": "-1s"}}]}`, 0, "", "reply.initial_delay", "negative"},
		{"negative chunk size", `{"rules": [{"reply": {"chunk_size": -3}}]}`, 0, "", "reply.chunk_size", "negative"},
		{"negative disconnect", `{"rules": [{"reply": {"disconnect_after_chunks": -1}}]}`, 0, "", "reply.disconnect_after_chunks", "negative"},
		{"negative usage", `{"rules": [{"reply": {"usage": {"cached_tokens": -5}}}]}`, 0, "", "reply.usage.cached_tokens", "negative"},
		{"error status out of range", `{"rules": [{"reply": {"error": {"status": 200}}}]}`, 0, "", "reply.error.status", "400-599"},
		{"error with text", `{"rules": [{"reply": {"text": "x", "error": {"status": 500}}}]}`, 0, "", "reply.error", "cannot also have text"},
		{"tool call without a name", `{"rules": [{"reply": {"tool_calls": [{"arguments": {}}]}}]}`, 0, "", "reply.tool_calls[0].name", "required"},
		{"arguments not an object", `{"rules": [{"reply": {"tool_calls": [{"name": "f"}, {"name": "g", "arguments": [1]}]}}]}`, 0, "", "reply.tool_calls[1].arguments", "JSON object"},
		{"arguments and raw arguments", `{"rules": [{"reply": {"tool_calls": [{"name": "f", "arguments": {}, "raw_arguments": "{"}]}}]}`, 0, "", "reply.tool_calls[0]", "not both"},
		{"unknown placeholder in text", `{"rules": [{"reply": {"text": "hi {{last_usr}}"}}]}`, 0, "", "reply.text", "{{last_usr}}"},
		{"unknown placeholder in arguments", `{"rules": [{"reply": {"tool_calls": [{"name": "f", "arguments": {"a": "{{user}}"}}]}}]}`, 0, "", "reply.tool_calls[0].arguments", "{{user}}"},
		{"unknown field in the default", `{"default": {"txt": "x"}}`, -1, "", "default", `unknown field "txt"`},
		{"invalid default", `{"default": {"chunk_size": -1}}`, -1, "", "default.chunk_size", "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := fakellm.ParseRules([]byte(tt.doc))
			re, ok := errors.AsType[*fakellm.RulesError](err)
			if !ok {
				t.Fatalf("err = %v, want a *RulesError", err)
			}
			if re.Rule != tt.wantRule || re.RuleName != tt.wantName || re.Field != tt.wantField {
				t.Errorf("located at rule %d %q field %q, want rule %d %q field %q", re.Rule, re.RuleName, re.Field, tt.wantRule, tt.wantName, tt.wantField)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("message %q does not mention %q", err, tt.wantText)
			}
			if tt.wantField != "" && !strings.Contains(err.Error(), tt.wantField+": ") {
				t.Errorf("message %q does not name the field %q", err, tt.wantField)
			}
		})
	}
}

func TestLoadRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte(`{"rules": [{"reply": {"text": "ok"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rules, err := fakellm.LoadRules(good)
	if err != nil || len(rules.Rules) != 1 || rules.Rules[0].Reply.Text != "ok" {
		t.Fatalf("LoadRules = %+v, %v", rules, err)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"rules": [{"name": "x", "match": {"user_regexp": "["}, "reply": {}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = fakellm.LoadRules(bad)
	if re, ok := errors.AsType[*fakellm.RulesError](err); !ok || re.File != bad || re.Rule != 0 {
		t.Errorf("err = %v, want a RulesError for rule 0 of %s", err, bad)
	}
	if msg := err.Error(); !strings.Contains(msg, bad+`: rule 0 ("x"): match.user_regexp: `) {
		t.Errorf("message %q does not say file, rule and field", msg)
	}

	missing := filepath.Join(dir, "missing.json")
	_, err = fakellm.LoadRules(missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("err = %v, want a not-exist error naming the file", err)
	}
}

// TestDocumentedExamples keeps docs/fakellm.md honest: every JSON block in
// it is a rules file that loads.
func TestDocumentedExamples(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "fakellm.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no JSON examples found in docs/fakellm.md")
	}
	for i, block := range blocks {
		if _, err := fakellm.ParseRules(block[1]); err != nil {
			t.Errorf("example %d: %v", i, err)
		}
	}
}

func TestValidateAndNew(t *testing.T) {
	t.Parallel()
	bad := fakellm.Rules{Rules: []fakellm.Rule{{Name: "bad", Match: fakellm.Match{UserRegexp: "("}}}}
	err := bad.Validate()
	if re, ok := errors.AsType[*fakellm.RulesError](err); !ok || re.Rule != 0 || re.Field != "match.user_regexp" {
		t.Errorf("Validate = %v, want rule 0 match.user_regexp", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "match.user_regexp") {
			t.Errorf("New did not panic with the problem: %v", r)
		}
	}()
	fakellm.New(bad)
}

// TestRulesAreCopied: changing the Rules after New must not change the
// running server.
func TestRulesAreCopied(t *testing.T) {
	t.Parallel()
	index := 0
	rules := fakellm.Rules{Rules: []fakellm.Rule{{
		Match: fakellm.Match{RequestIndex: &index, ToolsOffered: []string{"a"}},
		Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "f", Arguments: json.RawMessage(`{"x":1}`)}}},
	}}}
	srv := start(t, rules)
	index = 5
	rules.Rules[0].Match.ToolsOffered[0] = "b"
	rules.Rules[0].Reply.ToolCalls[0].Arguments[5] = '2'
	calls := complete(t, srv, withTools(userBody("x"), "a")).Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Arguments != `{"x":1}` {
		t.Errorf("calls = %+v, want the rule as it was when the server started", calls)
	}
}
