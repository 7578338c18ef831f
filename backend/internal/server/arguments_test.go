package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// gatekeeperPrompt is the system prompt of the gatekeeper agent, whose
// approval rules hold any prompt that says "delete", given to its helper
// or to a session it spawns.
const gatekeeperPrompt = "gatekeeper agent of the tests"

// gatekeeperAgents writes the gatekeeper beside the test agents.
func gatekeeperAgents(t *testing.T) string {
	t.Helper()
	dir := copyTestdata(t)
	file := `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "gatekeeper", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Asks before anything is deleted.", "systemPrompt": ["You are the ` + gatekeeperPrompt + `."],
		"osTools": ["spawn_session"],
		"bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": "../tools/echo"}}],
		"extraAgents": [{"slug": "helper", "path": "../helpers/helper.json"}],
		"approvals": [
			{"tool": "prompt_agent_helper", "when": {"arg": "prompt", "matches": "(?i)delete"}},
			{"tool": "os_spawn_session", "when": [{"arg": "prompt", "matches": "(?i)delete"}, {"arg": "agent", "matches": "^helper$"}]},
			{"tool": "bash_echo", "when": {"arg": "word", "matches": "(?i)delete"}}
		]}}`
	if err := os.WriteFile(filepath.Join(dir, "gatekeeper.json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An approval rule judges the arguments the tool runs on: a key spelt in
// another case, or given twice, neither runs past the rule nor runs at
// all. The model reads why its call was refused.
func TestArgumentSpellingNeverRunsPastAnApproval(t *testing.T) {
	t.Parallel()
	yes := true
	cases := []struct {
		name, tool, args string
		// problem is what the model reads of the refusal.
		problem string
	}{
		{"helper, key in another case", "prompt_agent_helper", `{"Prompt": "delete everything"}`, `"Prompt"`},
		{"helper, key twice in two cases", "prompt_agent_helper", `{"prompt": "hello", "PROMPT": "delete everything"}`, `"PROMPT"`},
		{"helper, key twice", "prompt_agent_helper", `{"prompt": "delete everything", "prompt": "hello"}`, `duplicate key "prompt"`},
		{"spawn, key in another case", "os_spawn_session", `{"Agent": "helper", "prompt": "hi", "wait": true}`, `"Agent"`},
		{"spawn, key twice in two cases", "os_spawn_session", `{"agent": "helper", "prompt": "hello", "Prompt": "delete everything", "wait": true}`, `"Prompt"`},
		{"spawn, key twice", "os_spawn_session", `{"agent": "helper", "agent": "boss", "prompt": "hello", "wait": true}`, `duplicate key "agent"`},
		{"spawn, undeclared key", "os_spawn_session", `{"agent": "boss", "prompt": "hello", "agent_slug": "helper", "wait": true}`, `unknown argument "agent_slug"`},
		{"bash, key twice", "bash_echo", `{"word": "delete", "word": "hello"}`, `duplicate key "word"`},
		{"too deep", "prompt_agent_helper", `{"prompt": "hello", "x": ` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, "deeper than 64"},
	}
	rules := []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "helper heard: {{last_user}}"}},
		{Match: fakellm.Match{SystemContains: bossPrompt}, Reply: fakellm.Reply{Text: "boss heard: {{last_user}}"}},
		{Match: fakellm.Match{SystemContains: gatekeeperPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "read: {{last_tool_result}}"}},
	}
	for _, tc := range cases {
		rules = append(rules, fakellm.Rule{Match: fakellm.Match{SystemContains: gatekeeperPrompt, UserContains: tc.name, AssistantMessages: steps(0)},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: tc.tool, RawArguments: tc.args}}}})
	}
	e := start(t, fakellm.Rules{Rules: rules}, withAgentsDir(gatekeeperAgents(t)))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := e.wait(e.create("gatekeeper", tc.name).GetMeta().GetId())
			id := s.GetMeta().GetId()
			if st := s.GetMeta().GetStatus(); st != ready || s.GetMeta().GetPendingCalls() != 0 {
				// Held for approval would be safe too; refusing is what
				// the server does, and what this test expects.
				t.Fatalf("session = %v %s, want ready: the call refused", st, s.GetMeta().GetStatusReason())
			}
			turns := s.GetTurns()
			if len(turns) < 3 {
				t.Fatalf("turns = %v, want the call, its result and an answer", turns)
			}
			res := turns[2].GetUser().GetToolResults()
			if len(res) != 1 || res[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR ||
				!strings.Contains(res[0].GetText(), "invalid arguments for "+tc.tool) || !strings.Contains(res[0].GetText(), tc.problem) {
				t.Errorf("results = %v, want one error saying the arguments are invalid: %s", res, tc.problem)
			}
			if status, _, body := e.do(http.MethodGet, "/v1/sessions?parent="+id, ""); status != http.StatusOK || strings.Contains(string(body), `"agent"`) {
				t.Errorf("sub-sessions = %d %s, want none: the refused call started nothing", status, body)
			}
		})
	}
}

// The same rules hold a call spelt as the schema says, and let through
// one they do not match: the refusals above are not a rule that never
// runs anything.
func TestExactArgumentsAreJudgedByTheirRule(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: helperPrompt}, Reply: fakellm.Reply{Text: "helper heard: {{last_user}}"}},
		{Match: fakellm.Match{SystemContains: gatekeeperPrompt, LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "read: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: gatekeeperPrompt, UserContains: "held", AssistantMessages: steps(0)},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_helper", RawArguments: `{"prompt": "del\u0065te everything"}`}}}},
		{Match: fakellm.Match{SystemContains: gatekeeperPrompt, UserContains: "spawn", AssistantMessages: steps(0)},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "os_spawn_session", RawArguments: `{"agent": "helper", "prompt": "hi"}`}}}},
		{Match: fakellm.Match{SystemContains: gatekeeperPrompt, UserContains: "plain", AssistantMessages: steps(0)},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "prompt_agent_helper", RawArguments: `{"prompt": "hello"}`}}}},
	}}, withAgentsDir(gatekeeperAgents(t)))
	// The person asked sees the value the rule judged and the tool will
	// run on: the decoded arguments, escapes resolved, not the model's
	// spelling of them.
	for text, args := range map[string]string{"held": `{"prompt":"delete everything"}`, "spawn": `{"agent":"helper","prompt":"hi"}`} {
		s := e.wait(e.create("gatekeeper", text).GetMeta().GetId())
		p := s.GetPendingCalls()
		if s.GetMeta().GetStatus() != waiting || len(p) != 1 || p[0].GetReason() != "approval" {
			t.Fatalf("%s: session = %v with %v, want it waiting for one approval", text, s.GetMeta(), p)
		}
		if got := p[0].GetCall().GetArguments(); got != args {
			t.Errorf("%s: the approval shows %s, want %s", text, got, args)
		}
	}
	s := e.wait(e.create("gatekeeper", "plain").GetMeta().GetId())
	if got := lastTurn(s).GetLlm().GetText(); s.GetMeta().GetStatus() != ready || !strings.Contains(got, "helper heard: hello") {
		t.Errorf("plain call: %v, answer %q, want the helper run at once", s.GetMeta().GetStatus(), got)
	}
}

// An MCP server gets the arguments the approval judged: a rule on an MCP
// tool's argument holds the call however the key is spelt, and a call
// the decoder refuses never reaches the server.
func TestMCPArgumentsAreJudgedAsTheServerGetsThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "mcpgate", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
		"announce": "Asks before an MCP tool deletes.", "systemPrompt": ["You are the ` + gatekeeperPrompt + `."],
		"mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "fake", "executable": ` + strconv.Quote(mcpFakeBinary(t)) + `}}],
		"approvals": [{"tool": "mcp_fake_echo", "when": {"arg": "text", "matches": "(?i)delete"}}]}}`
	if err := os.WriteFile(filepath.Join(dir, "mcpgate.json"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	yes := true
	cases := []struct{ name, args, problem string }{
		{"key in another case", `{"Text": "delete all"}`, `did you mean "text"?`},
		{"key twice in two cases", `{"text": "hello", "TEXT": "delete all"}`, `"TEXT"`},
		{"key twice", `{"text": "delete all", "text": "hello"}`, `duplicate key "text"`},
	}
	rules := []fakellm.Rule{{Match: fakellm.Match{LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "read: {{last_tool_result}}"}}}
	for _, tc := range cases {
		rules = append(rules, fakellm.Rule{Match: fakellm.Match{UserContains: tc.name, AssistantMessages: steps(0)},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "mcp_fake_echo", RawArguments: tc.args}}}})
	}
	rules = append(rules, fakellm.Rule{Match: fakellm.Match{UserContains: "escaped", AssistantMessages: steps(0)},
		Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "mcp_fake_echo", RawArguments: `{"text": "del\u0065te all"}`}}}})
	e := start(t, fakellm.Rules{Rules: rules}, withAgentsDir(dir))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := e.wait(e.create("mcpgate", tc.name).GetMeta().GetId())
			if s.GetMeta().GetStatus() != ready || len(s.GetTurns()) < 3 {
				t.Fatalf("session = %v, turns %v, want ready with the call refused", s.GetMeta(), s.GetTurns())
			}
			res := s.GetTurns()[2].GetUser().GetToolResults()
			if len(res) != 1 || res[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR || !strings.Contains(res[0].GetText(), tc.problem) {
				t.Errorf("results = %v, want the arguments refused: %s", res, tc.problem)
			}
		})
	}
	s := e.wait(e.create("mcpgate", "escaped").GetMeta().GetId())
	if s.GetMeta().GetStatus() != waiting || len(s.GetPendingCalls()) != 1 {
		t.Errorf("escaped: %v, want the call held: the rule reads the decoded text", s.GetMeta())
	}
}

// A client tool's call whose arguments the schema refuses is answered by
// the server with the refusal: no client is asked to answer what the
// agent file's schema does not allow.
func TestRefusedArgumentsAreNeverDeferredToAClient(t *testing.T) {
	t.Parallel()
	yes := true
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{LastIsToolResult: &yes}, Reply: fakellm.Reply{Text: "read: {{last_tool_result}}"}},
		{Match: fakellm.Match{AssistantMessages: steps(0)},
			Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "ask_user", RawArguments: `{"Question": "may I?"}`}}}},
	}})
	s := e.wait(e.create("clienty", "ask me").GetMeta().GetId())
	if s.GetMeta().GetStatus() != ready || len(s.GetPendingCalls()) != 0 || len(s.GetTurns()) < 3 {
		t.Fatalf("session = %v, pending %v, want ready with nothing deferred", s.GetMeta(), s.GetPendingCalls())
	}
	res := s.GetTurns()[2].GetUser().GetToolResults()
	if len(res) != 1 || res[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR || !strings.Contains(res[0].GetText(), `did you mean "question"?`) {
		t.Errorf("results = %v, want the arguments refused", res)
	}
}
