package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tools/fakellm"
)

// step is one answer of the offline model: asked with a last user
// message holding user and no tool result yet, or right after a tool
// result holding result.
func disclosureStep(user, result string, reply fakellm.Reply) fakellm.Rule {
	no := false
	m := fakellm.Match{SystemContains: "progressive disclosure tester"}
	if user != "" {
		m.UserContains, m.LastIsToolResult = user, &no
	} else {
		m.ToolResultContains = result
	}
	return fakellm.Rule{Times: 1, Match: m, Reply: reply}
}

func call(name, args string) fakellm.Reply {
	return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: name, Arguments: json.RawMessage(args)}}}
}

// Issue 36, item 3: an on-demand toolbox of an agents-exe agent file
// (shaped like agents-exe's progressive-disclosure-tester) is hidden from
// the model until meta_activate_tool names its group, offered from the
// next step on, still after a restart of the server and in a fork, and
// hidden again after meta_deactivate_tool. A skill's name and
// description are offered up front; its instructions, files and scripts
// only once the model activates it and asks.
func TestOnDemandToolsAndSkillsAreDisclosedAsTheModelAsks(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		disclosureStep("open the write tools", "", call("meta_activate_tool", `{"toolgroup": "write-tools"}`)),
		disclosureStep("", "Toolgroup 'write-tools' activated", call("bash_write-file", `{"filepath": "a.txt", "content": "hi"}`)),
		disclosureStep("", "wrote 2 characters to a.txt", fakellm.Reply{Text: "written"}),
		disclosureStep("close the write tools", "", call("meta_deactivate_tool", `{"toolgroup": "write-tools"}`)),
		disclosureStep("", "Toolgroup 'write-tools' deactivated", fakellm.Reply{Text: "closed"}),
		disclosureStep("use the code-review skill", "", call("meta_activate_tool", `{"toolgroup": "skill:code-review"}`)),
		disclosureStep("", "Toolgroup 'skill:code-review' activated", call("skill_describe_code-review", `{}`)),
		disclosureStep("", "Perform comprehensive code reviews", call("skill_code-review_analyze-changes", `{"file_path": "main.go"}`)),
		disclosureStep("", "Analysis of: main.go", call("skill_read_code-review", `{"path": "references/checklist.md"}`)),
		disclosureStep("", "Every error is handled once.", fakellm.Reply{Text: "reviewed"}),
	}, Default: &fakellm.Reply{Text: "ok"}}, withAgentsDir("testdata/disclosure/agents"))

	const agent = "progressive-disclosure-tester"
	const body = "Perform comprehensive code reviews" // in SKILL.md's instructions only
	// ask posts text to the session (a new one when id is "") and returns
	// the session and the model requests of that run.
	ask := func(id, text string) (*agentsv1.Session, []fakellm.Request) {
		t.Helper()
		before := len(e.model.Requests())
		if id == "" {
			id = e.create(agent, text).GetMeta().GetId()
		} else {
			e.post(id, text)
		}
		s := e.wait(id)
		return s, e.model.Requests()[before:]
	}
	offered := func(req fakellm.Request, name string) bool { return slices.Contains(req.ToolNames(), name) }
	expect := func(what string, req fakellm.Request, name string, want bool) {
		t.Helper()
		if offered(req, name) != want {
			t.Errorf("%s: %s offered = %v, want %v (tools %v)", what, name, !want, want, req.ToolNames())
		}
	}

	s, reqs := ask("", "open the write tools")
	id := s.GetMeta().GetId()
	if len(reqs) != 3 {
		t.Fatalf("the first run made %d model requests, want 3: %v", len(reqs), lastTurn(s))
	}
	first := reqs[0]
	expect("first request", first, "bash_read-file", true)
	expect("first request", first, "bash_write-file", false)
	expect("first request", first, "meta_activate_tool", true)
	expect("first request", first, "meta_discover_tools", true)
	expect("first request", first, "meta_deactivate_tool", false)
	expect("first request", first, "skill_describe_code-review", false)
	expect("first request", first, "skill_code-review_analyze-changes", false)
	for _, tl := range first.Tools {
		if tl.Name == "meta_activate_tool" && (!strings.Contains(tl.Description, "write-tools") ||
			!strings.Contains(tl.Description, "skill:code-review (Perform structured code reviews following best practices.")) {
			t.Errorf("meta_activate_tool's description = %q, want the groups and the skill's description", tl.Description)
		}
	}
	expect("after meta_activate_tool", reqs[1], "bash_write-file", true)
	expect("after meta_activate_tool", reqs[1], "meta_deactivate_tool", true)
	if res := s.GetTurns()[len(s.GetTurns())-2].GetUser().GetToolResults(); len(res) != 1 || res[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK {
		t.Errorf("bash_write-file's results = %v, want one that succeeded", res)
	}

	// The state is the session's history: a restarted server, reading
	// the same database, offers the same tools, and so does a fork.
	e.restart()
	_, reqs = ask(id, "after restart")
	expect("after a restart", reqs[0], "bash_write-file", true)
	fork, err := e.sessions.ForkSession(ctxFor(t), connect.NewRequest(&agentsv1.ForkSessionRequest{SessionId: id}))
	if err != nil {
		t.Fatal(err)
	}
	_, reqs = ask(fork.Msg.GetSession().GetMeta().GetId(), "in the fork")
	expect("in a fork", reqs[0], "bash_write-file", true)

	_, reqs = ask(id, "close the write tools")
	expect("after meta_deactivate_tool", reqs[1], "bash_write-file", false)
	expect("after meta_deactivate_tool", reqs[1], "meta_deactivate_tool", false)
	expect("after meta_deactivate_tool", reqs[1], "bash_read-file", true)

	s, reqs = ask(id, "use the code-review skill")
	if len(reqs) != 5 {
		t.Fatalf("the skill's run made %d model requests, want 5: %v", len(reqs), lastTurn(s))
	}
	for i, req := range e.model.Requests() {
		if strings.Contains(string(req.Body), body) {
			if req.Index != reqs[2].Index {
				t.Errorf("request %d holds the skill's instructions; want the first after skill_describe_code-review (%d) only, before", i, reqs[2].Index)
			}
			break
		}
	}
	expect("after activating the skill", reqs[1], "skill_describe_code-review", true)
	expect("after activating the skill", reqs[1], "skill_code-review_analyze-changes", true)
	expect("after activating the skill", reqs[1], "skill_read_code-review", true)
	if !strings.Contains(string(reqs[2].Body), body) {
		t.Errorf("skill_describe_code-review did not give the instructions: %s", reqs[2].Body)
	}
	if got := lastTurn(s).GetLlm().GetText(); got != "reviewed" {
		t.Errorf("the skill's run ended with %q, want the model to have run the script and read the file", got)
	}
}

// An on-demand SQLite toolbox (agents-exe's "Activation" in a builtin
// toolbox) is disclosed as a bash toolbox is: its query tool is not
// offered, and a call of it is refused, until meta_activate_tool names
// its group; from the next step on it is offered and answers, and still
// after a restart of the server, since the group is the history's.
func TestAnOnDemandSQLiteToolboxIsOfferedOnceItsGroupIsActive(t *testing.T) {
	t.Parallel()
	agents := filepath.Join(t.TempDir(), "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "keeper.json"), []byte(`{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "keeper", "flavor": "OpenAIv1", "modelUrl": "https://models.invalid/v1", "apiKeyId": "kimi", "modelName": "test-model",
		"systemPrompt": "You are the notes keeper.",
		"builtinToolboxes": [
			{"tag": "SqliteToolbox", "contents": {"Name": "notes", "Description": "The team's notes.",
				"Versioning": {"tag": "SqliteReadWrite", "path": "notes.db"},
				"Activation": {"tag": "on-demand", "toolgroup": "notes"}}},
			{"tag": "SystemToolbox", "contents": {"Name": "sys", "Capabilities": ["date"]}}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	step := func(user, result string, reply fakellm.Reply) fakellm.Rule {
		no := false
		m := fakellm.Match{SystemContains: "the notes keeper"}
		if user != "" {
			m.UserContains, m.LastIsToolResult = user, &no
		} else {
			m.ToolResultContains = result
		}
		return fakellm.Rule{Times: 1, Match: m, Reply: reply}
	}
	query := call("sqlite_notes_query", `{"sql": "SELECT 40 + 2 AS n"}`)
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		step("count the notes", "", query),
		step("", `unknown tool "sqlite_notes_query"`, call("meta_activate_tool", `{"toolgroup": "notes"}`)),
		step("", "Toolgroup 'notes' activated", query),
		step("", `[[42]]`, fakellm.Reply{Text: "42 notes"}),
		step("again", "", query),
		step("", `[[42]]`, fakellm.Reply{Text: "still 42"}),
	}, Default: &fakellm.Reply{Text: "ok"}}, withAgentsDir(agents))

	id := e.create("keeper", "count the notes").GetMeta().GetId()
	s := e.wait(id)
	reqs := e.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the run made %d model requests, want 4: %v", len(reqs), lastTurn(s))
	}
	offered := func(i int, name string, want bool) {
		t.Helper()
		if got := slices.Contains(reqs[i].ToolNames(), name); got != want {
			t.Errorf("request %d: %s offered = %v, want %v (tools %v)", i, name, got, want, reqs[i].ToolNames())
		}
	}
	offered(0, "sqlite_notes_query", false)
	offered(0, "meta_activate_tool", true)
	offered(0, "system_sys_system_info", true)
	offered(1, "sqlite_notes_query", false)
	offered(2, "sqlite_notes_query", true)
	offered(2, "meta_deactivate_tool", true)
	offered(3, "sqlite_notes_query", true)
	var statuses []agentsv1.ToolResultStatus
	for _, turn := range s.GetTurns() {
		for _, r := range turn.GetUser().GetToolResults() {
			statuses = append(statuses, r.GetStatus())
		}
	}
	ok, failed := agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK, agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR
	if !slices.Equal(statuses, []agentsv1.ToolResultStatus{failed, ok, ok}) {
		t.Errorf("tool results = %v, want the refused call, the activation and the query", statuses)
	}
	if got := lastTurn(s).GetLlm().GetText(); got != "42 notes" {
		t.Errorf("the run ended with %q, want the query's answer", got)
	}

	e.restart()
	before := len(e.model.Requests())
	e.post(id, "again")
	if got := lastTurn(e.wait(id)).GetLlm().GetText(); got != "still 42" {
		t.Errorf("after a restart the run ended with %q, want the query to have answered", got)
	}
	reqs = e.model.Requests()[before:]
	offered(0, "sqlite_notes_query", true)
}
