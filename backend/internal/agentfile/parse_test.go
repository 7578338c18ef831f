package agentfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/session"
)

func TestParseFileRejectsBadFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		file       string
		wantField  string
		wantReason string // a part of the reason
	}{
		{"wrong-tag.json", "tag", `unknown tag "AnthropicAgentDescription" (want "OpenAIAgentDescription")`},
		{"missing-contents.json", "contents", "required field is missing"},
		{"unknown-flavor.json", "contents.flavor", `unknown flavor "GPT9" (want one of OpenAIv1, MistralV1, KimiV1, ClaudeV1)`},
		{"missing-slug.json", "contents.slug", "required field is missing"},
		{"missing-model-name.json", "contents.modelName", "required field is missing"},
		{"missing-model-url.json", "contents.modelUrl", "required field is missing"},
		{"bad-slug.json", "contents.slug", `"my agent": use only letters, digits`},
		{"bad-model-url.json", "contents.modelUrl", `"localhost:11434" is not an http:// or https:// URL`},
		{"prompt-not-strings.json", "contents.systemPrompt[1]", "must be a string, got number"},
		{"client-tool-parameters-list.json", "contents.clientTools[0].parameters", "must be an object, got list"},
		{"client-tool-parameters-type.json", "contents.clientTools[1].parameters.type", `must be "object"`},
		{"client-tool-duplicate.json", "contents.clientTools[1].name", `duplicate client tool "ask_user"`},
		{"max-steps-zero.json", "contents.maxSteps", "must be greater than 0, got 0"},
		{"max-steps-fraction.json", "contents.maxSteps", "must be a whole number, got 2.5"},
		{"max-steps-huge.json", "contents.maxSteps", "must be from 1 to 2147483647, got 9223372036854775807"},
		{"max-steps-over-int32.json", "contents.maxSteps", "must be from 1 to 2147483647, got 2147483648"},
		{"context-window-zero.json", "contents.contextWindow", "must be greater than 0, got 0"},
		{"max-output-over-window.json", "contents.maxOutputTokens", "16000 is more than the contextWindow, 8000, which holds the output too"},
		{"max-output-fraction.json", "contents.maxOutputTokens", "must be a whole number, got 4096.5"},
		{"compaction-list.json", "contents.compaction", "must be an object, got list"},
		{"compaction-negative.json", "contents.compaction.pruneOver", "must not be negative, got -1"},
		{"compaction-threshold-over-window.json", "contents.compaction.threshold", "8000 is not below the contextWindow, 8000"},
		{"compaction-no-room.json", "contents.compaction.outputReserve", "7000 and the margin, 1000, leave nothing of the contextWindow, 8000"},
		{"compaction-prompt-empty.json", "contents.compaction.prompt", "must not be empty"},
		{"mail-in-tool-result-string.json", "contents.mailInToolResult", "must be true or false, got string"},
		{"toolbox-tag.json", "contents.bashToolboxes[1].tag", `unknown bash toolbox "Directory" (want FileSystemDirectory or SingleTool)`},
		{"toolbox-no-path.json", "contents.bashToolboxes[0].contents.Path", "required field is missing"},
		{"mcp-tag.json", "contents.mcpServers[0].tag", `unknown MCP server kind "McpHttp" (want McpSimpleBinary or McpStreamableHttp)`},
		{"mcp-no-executable.json", "contents.mcpServers[0].contents.executable", "required field is missing"},
		{"mcp-undeclared-param.json", "contents.mcpServers[0].contents.headers.Authorization", `{{param:TOKN}} names a param the agent does not declare in "params"`},
		{"extra-agent-no-path.json", "contents.extraAgents[0].path", "required field is missing"},
		{"extra-agent-unknown-field.json", "contents.extraAgents[0].narrow", "unknown field (an extraAgents entry takes slug, path, as, with and bindings)"},
		{"extra-agent-as.json", "contents.extraAgents[0].as", `"my reviewer": use only letters, digits`},
		{"extra-agent-with-empty.json", "contents.extraAgents[0].with", "must not be empty"},
		{"extra-agent-bindings-number.json", "contents.extraAgents[0].bindings.prompt", "must be a string, got number"},
		{"extra-agent-bindings-empty.json", "contents.extraAgents[0].bindings", "must bind at least one argument"},
		{"os-tools-unknown.json", "contents.osTools[1]", `unknown operating system tool "fork_bomb" (want one of send_mail, spawn_session, watch_session, list_sub_sessions, read_session)`},
		{"os-tools-duplicate.json", "contents.osTools[1]", `duplicate tool "watch_session"`},
		{"budget-empty.json", "contents.budget", "sets no limit: give tokens, costUsd or both"},
		{"budget-zero-tokens.json", "contents.budget.tokens", "must be greater than 0, got 0"},
		{"budget-cost-string.json", "contents.budget.costUsd", "must be a number, got string"},
		{"budget-cost-negative.json", "contents.budget.costUsd", "must be a number of US dollars greater than 0"},
		{"os-tools-string.json", "contents.osTools", "must be true, false or a list of tool names, got string"},
		{"param-duplicate.json", "contents.parameters[0].name", `duplicate parameter "token"`},
		{"pass-env-name.json", "contents.passEnv[1]", `"MY VAR" is not a variable name`},
		{"pass-env-duplicate.json", "contents.passEnv[1]", `duplicate variable "GOPATH"`},
		{"pass-env-not-strings.json", "contents.passEnv[1]", "must be a string, got number"},
		{"not-object.json", "", `must be a JSON object with "tag" and "contents", got array`},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", "bad", tc.file)
			agent, _, err := ParseFile(path)
			if agent != nil {
				t.Fatalf("ParseFile(%s) returned an agent, want an error", path)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("ParseFile(%s) error = %v (%T), want *Error", path, err, err)
			}
			if fe.File != path {
				t.Errorf("File = %q, want %q", fe.File, path)
			}
			if fe.Field != tc.wantField {
				t.Errorf("Field = %q, want %q (error: %v)", fe.Field, tc.wantField, err)
			}
			if !strings.Contains(fe.Reason, tc.wantReason) {
				t.Errorf("Reason = %q, want it to contain %q", fe.Reason, tc.wantReason)
			}
		})
	}
}

func TestParseFileSyntaxErrorHasPosition(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "bad", "syntax.json")
	_, _, err := ParseFile(path)
	want := path + `:5:5: invalid character '"' after object key:value pair`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

func TestParseFileMissingFile(t *testing.T) {
	t.Parallel()
	_, _, err := ParseFile(filepath.Join("testdata", "nowhere.json"))
	if err == nil || err.Error() != "testdata/nowhere.json: file does not exist" {
		t.Fatalf("error = %v", err)
	}
}

func TestParseFileExtensions(t *testing.T) {
	t.Parallel()
	agent, warnings, err := ParseFile(filepath.Join("testdata", "extensions", "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(agent.ClientTools) != 2 {
		t.Fatalf("ClientTools = %+v", agent.ClientTools)
	}
	ask := agent.ClientTools[0]
	if ask.Name != "ask_user" || ask.Description != "Ask the user a question." {
		t.Errorf("first client tool = %+v", ask)
	}
	var schema struct {
		Type     string   `json:"type"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(ask.Parameters, &schema); err != nil || schema.Type != "object" || len(schema.Required) != 1 {
		t.Errorf("ask_user parameters = %s (%v)", ask.Parameters, err)
	}
	if got := string(agent.ClientTools[1].Parameters); got != `{"type":"object","properties":{}}` {
		t.Errorf("confirm parameters = %s, want the empty object schema", got)
	}
	if !agent.MailInToolResult || agent.MaxSteps != 12 {
		t.Errorf("MailInToolResult = %v, MaxSteps = %d", agent.MailInToolResult, agent.MaxSteps)
	}
	if b := agent.Budget; b == nil || b.Tokens == nil || *b.Tokens != 200000 || b.Cost == nil || *b.Cost != session.DollarsToNanos(1.5) || !b.AutoResume {
		t.Errorf("Budget = %+v, want 200,000 tokens, $1.50 and autoResume", b)
	}
	if agent.ContextWindow != 64000 || agent.MaxOutputTokens != 8000 {
		t.Errorf("ContextWindow = %d, MaxOutputTokens = %d, want 64000 and 8000", agent.ContextWindow, agent.MaxOutputTokens)
	}
	c := agent.Compaction
	if c.Threshold != 40000 || c.OutputReserve != 6000 || c.Margin != 1000 || c.PruneOver != 2000 || c.KeepRecent != 10000 || c.Model != "gpt-4o-mini" ||
		!slices.Equal(c.Prompt, []string{"Summarise the conversation so far.", "Keep every decision."}) {
		t.Errorf("Compaction = %+v", c)
	}
	wantParams := []Param{
		{Name: "github_token", Description: "Token of the user.", Secret: true, Required: true},
		{Name: "tenant", Required: false},
		{Name: "region", Required: true}, // agents-exe's "parameters", required by default
	}
	if len(agent.Params) != len(wantParams) {
		t.Fatalf("Params = %+v, want %+v", agent.Params, wantParams)
	}
	for i, want := range wantParams {
		if agent.Params[i] != want {
			t.Errorf("Params[%d] = %+v, want %+v", i, agent.Params[i], want)
		}
	}
	if want := []string{"GOPATH", "MY_VAR"}; !slices.Equal(agent.PassEnv, want) {
		t.Errorf("PassEnv = %q, want %q", agent.PassEnv, want)
	}
	wantWarnings := map[string]string{
		"contents.flavour":               `unknown field; ignored (did you mean "flavor"?)`,
		"contents.compaction.keepRecnt":  `unknown field; ignored (did you mean "keepRecent"?)`,
		"contents.parameters[0].scope":   "not supported by this server; ignored",
		"contents.parameters[0].default": "not supported by this server; ignored",
	}
	if len(warnings) != len(wantWarnings) {
		t.Fatalf("warnings = %v, want %d", warnings, len(wantWarnings))
	}
	for _, w := range warnings {
		if wantWarnings[w.Field] != w.Reason {
			t.Errorf("unexpected warning %v", w)
		}
	}
}

// agents-exe's documentation shows shapes its decoder does not accept
// (lower-case keys, a SingleTool given as a bare path); they load too.
func TestParseFileDocumentedToolboxShapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tools", "ask.sh"), "#!/bin/sh\n")
	path := filepath.Join(dir, "agent.json")
	writeFile(t, path, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "doc-shapes", "flavor": "claude-v1", "modelUrl": "https://example.test/v1",
		"modelName": "m", "announce": "a", "systemPrompt": "one line",
		"bashToolboxes": [
			{"tag": "SingleTool", "contents": "./tools/ask.sh"},
			{"tag": "FileSystemDirectory", "contents": {"path": "./tools", "basenameFilter": ".sh", "lifetime": "conversation"}}
		]}}`)
	agent, warnings, err := Loader{WorkDir: dir}.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []BashToolbox{
		{Kind: SingleTool, Path: filepath.Join(dir, "tools", "ask.sh")},
		{Kind: FileSystemDirectory, Path: filepath.Join(dir, "tools"), BasenameFilter: ".sh"},
	}
	if len(agent.BashToolboxes) != 2 || agent.BashToolboxes[0] != want[0] || agent.BashToolboxes[1] != want[1] {
		t.Errorf("BashToolboxes = %+v, want %+v", agent.BashToolboxes, want)
	}
	if agent.Flavor != FlavorClaudeV1 || agent.APIKeyID != "" {
		t.Errorf("Flavor = %q, APIKeyID = %q", agent.Flavor, agent.APIKeyID)
	}
	if len(agent.SystemPrompt) != 1 || agent.SystemPrompt[0] != "one line" {
		t.Errorf("SystemPrompt = %q", agent.SystemPrompt)
	}
	if len(warnings) != 1 || warnings[0].Field != "contents.bashToolboxes[1].contents.lifetime" {
		t.Errorf("warnings = %v, want one about lifetime", warnings)
	}
}

func TestParseFlavor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want Flavor
		ok   bool
	}{
		{"OpenAIv1", FlavorOpenAIv1, true},
		{"openai-v1", FlavorOpenAIv1, true},
		{"MistralV1", FlavorMistralV1, true},
		{"mistral-v1", FlavorMistralV1, true},
		{"KimiV1", FlavorKimiV1, true},
		{"kimiv1", FlavorKimiV1, true},
		{"ClaudeV1", FlavorClaudeV1, true},
		{"claude-v1", FlavorClaudeV1, true},
		{"openai", "", false},
		{"OpenAIV1", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := ParseFlavor(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseFlavor(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  Error
		want string
	}{
		{Error{File: "a.json", Field: "contents.slug", Reason: "bad"}, "a.json: contents.slug: bad"},
		{Error{File: "a.json", Reason: "file does not exist"}, "a.json: file does not exist"},
		{Error{File: "a.json", Field: "ignored", Line: 3, Column: 7, Reason: "invalid"}, "a.json:3:7: invalid"},
		{Error{Field: "port", Reason: "bad"}, "port: bad"},
		{Error{Reason: "bad"}, "bad"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestJSONErrorPosition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		data           string
		line, col      int
		reasonContains string
	}{
		{"{\n  \"a\": 1,\n  \"b\": ]\n}", 3, 8, "invalid character ']'"},
		{"{\"é\": x}", 1, 7, "invalid character 'x'"}, // counted in characters, not bytes
		{"", 1, 1, "unexpected end of JSON input"},
	}
	for _, tc := range cases {
		var v any
		err := json.Unmarshal([]byte(tc.data), &v)
		got := JSONError("f.json", []byte(tc.data), err)
		if got.Line != tc.line || got.Column != tc.col || !strings.Contains(got.Reason, tc.reasonContains) {
			t.Errorf("JSONError(%q) = %d:%d %q, want %d:%d containing %q", tc.data, got.Line, got.Column, got.Reason, tc.line, tc.col, tc.reasonContains)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestToolNamesAreOneTo64LettersDigitsDashesOrUnderscores(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"":                      false,
		"a":                     true,
		"read_file-2":           true,
		strings.Repeat("x", 64): true,
		strings.Repeat("x", 65): false,
		"two words":             false,
		"café":                  false,
		"a.b":                   false,
	} {
		if got := isToolName(name); got != want {
			t.Errorf("isToolName(%q) = %v, want %v", name, got, want)
		}
	}
}
