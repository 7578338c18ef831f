package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm"
)

// storedDef is an agent file's JSON for a stored agent talking to the
// offline model; extra goes into contents.
func storedDef(slug, prompt, extra string) string {
	return fmt.Sprintf(`{"tag": "OpenAIAgentDescription", "contents": {"slug": %q, "flavor": "OpenAIv1",
  "modelUrl": "https://models.invalid/v1", "apiKeyId": "test-key", "modelName": "test-model",
  "announce": "A stored agent.", "systemPrompt": [%q]%s}}`, slug, prompt, extra)
}

// echoToolbox is the bashToolboxes entry of the test tool echo.
func echoToolbox(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs("testdata/tools/echo")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}]`, path)
}

// toolsDir is the absolute directory of the test tools.
func toolsDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("testdata/tools")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// agentJSON is an agent descriptor as the JSON routes write it.
type agentJSON struct {
	Slug       string   `json:"slug"`
	Source     string   `json:"source"`
	Version    int64    `json:"version"`
	Definition string   `json:"definition"`
	CreateTime string   `json:"create_time"`
	UpdateTime string   `json:"update_time"`
	Helpers    []string `json:"helpers"`
	Tools      []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type errorJSON struct {
	Code     string            `json:"code"`
	Reason   string            `json:"reason"`
	Message  string            `json:"message"`
	Metadata map[string]string `json:"metadata"`
}

// plantAgent creates a stored agent in the store past the catalog's
// checks, as an older server may have stored it.
func plantAgent(t *testing.T, e *env, a store.StoredAgent) error {
	t.Helper()
	return e.store.Commit(ctxFor(t), &store.Change{Agent: &store.AgentChange{Op: store.AgentCreate, Agent: a}})
}

func decodeAs[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return v
}

// Issue 23: a stored agent round trip through the JSON routes, on both
// databases: the body is an agent file as it is.
func TestStoredAgentsRoundTripThroughTheJSONRoutes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "stored hello"}}, on(d))
		def := storedDef("scribe", "You are the scribe.", `, "extraAgents": [{"slug": "helper"}]`)
		status, header, body := e.do(http.MethodPost, "/v1/agents", def)
		if status != http.StatusCreated {
			t.Fatalf("POST /v1/agents = %d %s", status, body)
		}
		created := decodeAs[agentJSON](t, body)
		if header.Get("Location") != "/v1/agents/scribe" || created.Source != "stored" || created.Version != 1 || created.Definition != def || created.CreateTime == "" {
			t.Fatalf("created = %+v (Location %q), want stored at version 1 with its definition", created, header.Get("Location"))
		}
		if strings.Join(created.Helpers, ",") != "helper" {
			t.Errorf("helpers = %q, want the file agent named by slug", created.Helpers)
		}

		status, _, body = e.do(http.MethodGet, "/v1/agents", "")
		list := decodeAs[struct {
			Agents []agentJSON `json:"agents"`
		}](t, body)
		sources := map[string]string{}
		for _, a := range list.Agents {
			sources[a.Slug] = a.Source
		}
		if status != http.StatusOK || sources["scribe"] != "stored" || sources["boss"] != "file" {
			t.Fatalf("GET /v1/agents = %d, sources %v", status, sources)
		}

		def2 := storedDef("scribe", "You are the revised scribe.", "")
		status, _, body = e.do(http.MethodPut, "/v1/agents/scribe?expected_version=1", def2)
		updated := decodeAs[agentJSON](t, body)
		if status != http.StatusOK || updated.Version != 2 || updated.Definition != def2 {
			t.Fatalf("PUT = %d %s", status, body)
		}
		status, _, body = e.do(http.MethodPut, "/v1/agents/scribe?expected_version=1", def)
		if got := decodeAs[errorJSON](t, body); status != http.StatusConflict || got.Code != "aborted" || got.Reason != "version_mismatch" {
			t.Fatalf("stale PUT = %d %s, want 409 aborted", status, body)
		}
		status, _, body = e.do(http.MethodGet, "/v1/agents/scribe", "")
		if got := decodeAs[agentJSON](t, body); status != http.StatusOK || got.Version != 2 {
			t.Fatalf("GET after update = %d %s", status, body)
		}

		sess := e.create("scribe", "write")
		if got := e.wait(sess.GetMeta().GetId()); got.GetMeta().GetAgentVersion() != 2 || lastTurn(got).GetLlm().GetAgentVersion() != 2 {
			t.Errorf("session agent version = %d, turn's %d, want 2", got.GetMeta().GetAgentVersion(), lastTurn(got).GetLlm().GetAgentVersion())
		}

		status, _, body = e.do(http.MethodDelete, "/v1/agents/scribe", "")
		if status != http.StatusOK || !strings.Contains(string(body), `"version":2`) {
			t.Fatalf("DELETE = %d %s", status, body)
		}
		if status, _, body = e.do(http.MethodGet, "/v1/agents/scribe", ""); status != http.StatusNotFound {
			t.Fatalf("GET after delete = %d %s", status, body)
		}
		status, _, body = e.do(http.MethodGet, "/v1/agents/scribe/versions", "")
		versions := decodeAs[struct {
			Versions []struct {
				Version    int64  `json:"version"`
				Definition string `json:"definition"`
				Current    bool   `json:"current"`
				Author     string `json:"author"`
			} `json:"versions"`
		}](t, body)
		if status != http.StatusOK || len(versions.Versions) != 2 || versions.Versions[0].Version != 2 || versions.Versions[1].Definition != def || versions.Versions[0].Current {
			t.Fatalf("versions after delete = %d %s", status, body)
		}
		if status, _, body = e.do(http.MethodGet, "/v1/agents/boss/versions", ""); status != http.StatusOK || strings.Contains(string(body), `"version"`) {
			t.Fatalf("versions of a file agent = %d %s, want none", status, body)
		}
	})
}

// The same round trip through Connect.
func TestStoredAgentsRoundTripThroughConnect(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	ctx := ctxFor(t)
	def := storedDef("clerk", "You are the clerk.", "")
	created, err := e.agents.CreateAgent(ctx, connect.NewRequest(&agentsv1.CreateAgentRequest{Definition: def}))
	if err != nil {
		t.Fatal(err)
	}
	if a := created.Msg.GetAgent(); a.GetSource() != agentsv1.AgentSource_AGENT_SOURCE_STORED || a.GetVersion() != 1 || a.GetDefinition() != def {
		t.Fatalf("created = %v", a)
	}
	got, err := e.agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "clerk"}))
	if err != nil || got.Msg.GetAgent().GetUpdateTime() == nil {
		t.Fatalf("get = %v, %v", got, err)
	}
	v1 := int64(1)
	if _, err := e.agents.UpdateAgent(ctx, connect.NewRequest(&agentsv1.UpdateAgentRequest{Slug: "clerk", Definition: storedDef("clerk", "v2", ""), ExpectedVersion: &v1})); err != nil {
		t.Fatal(err)
	}
	_, err = e.agents.UpdateAgent(ctx, connect.NewRequest(&agentsv1.UpdateAgentRequest{Slug: "clerk", Definition: storedDef("clerk", "v3", ""), ExpectedVersion: &v1}))
	if connect.CodeOf(err) != connect.CodeAborted {
		t.Fatalf("stale update = %v, want aborted", err)
	}
	versions, err := e.agents.ListAgentVersions(ctx, connect.NewRequest(&agentsv1.ListAgentVersionsRequest{Slug: "clerk"}))
	if err != nil || len(versions.Msg.GetVersions()) != 2 || !versions.Msg.GetVersions()[0].GetCurrent() || versions.Msg.GetVersions()[0].GetVersion() != 2 {
		t.Fatalf("versions = %v, %v", versions, err)
	}
	deleted, err := e.agents.DeleteAgent(ctx, connect.NewRequest(&agentsv1.DeleteAgentRequest{Slug: "clerk"}))
	if err != nil || deleted.Msg.GetVersion() != 2 {
		t.Fatalf("delete = %v, %v", deleted, err)
	}
	if _, err := e.agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "clerk"})); connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("get after delete = %v", err)
	}
}

// What the API refuses: a bad definition (400 naming the field), a slug
// a file agent has and a file agent's change (409, read-only), a program
// outside the allowed directories, a writer without an admin token.
func TestStoredAgentsRules(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withSecurity(server.Security{Tokens: testTokens(t)}))
	admin, alice := bearer(adminToken), bearer(aliceToken)
	noModelURL := `{"tag": "OpenAIAgentDescription", "contents": {"slug": "x", "flavor": "OpenAIv1", "modelName": "m"}}`
	cases := []struct {
		name   string
		req    request
		status int
		reason string
		field  string
		says   string
	}{
		{"no admin token", request{method: "POST", path: "/v1/agents", body: storedDef("x", "p", ""), header: alice}, 403, "permission_denied", "", "admin token"},
		{"no admin token to delete", request{method: "DELETE", path: "/v1/agents/boss", header: alice}, 403, "permission_denied", "", "admin token"},
		{"no admin token to roll back", request{method: "POST", path: "/v1/agents/boss/rollback", body: `{"version": 1}`, header: alice}, 403, "permission_denied", "", "admin token"},
		{"roll back a file agent", request{method: "POST", path: "/v1/agents/boss/rollback", body: `{"version": 1}`, header: admin}, 409, "agent_read_only", "", "read-only"},
		{"missing model url", request{method: "POST", path: "/v1/agents", body: noModelURL, header: admin}, 400, "invalid_agent", "contents.modelUrl", "contents.modelUrl: required"},
		{"not JSON", request{method: "POST", path: "/v1/agents", body: `{"tag": `, header: admin}, 400, "invalid_agent", "", "line 1"},
		{"empty body", request{method: "POST", path: "/v1/agents", header: admin}, 400, "invalid_argument", "", "agent file's JSON"},
		{"a file agent's slug", request{method: "POST", path: "/v1/agents", body: storedDef("boss", "p", ""), header: admin}, 409, "agent_exists", "", "read-only"},
		{"update a file agent", request{method: "PUT", path: "/v1/agents/boss", body: storedDef("boss", "p", ""), header: admin}, 409, "agent_read_only", "", "read-only"},
		{"delete a file agent", request{method: "DELETE", path: "/v1/agents/boss", header: admin}, 409, "agent_read_only", "", "read-only"},
		{"delete a file helper", request{method: "DELETE", path: "/v1/agents/helper", header: admin}, 409, "agent_read_only", "", "read-only"},
		{"no tool directories allowed", request{method: "POST", path: "/v1/agents", body: storedDef("x", "p", echoToolbox(t)), header: admin}, 400, "invalid_agent", "contents.bashToolboxes[0]", "--stored-agent-tool-dirs"},
		{"an MCP program", request{method: "POST", path: "/v1/agents", body: storedDef("x", "p", `, "mcpServers": [{"tag": "McpSimpleBinary", "contents": {"name": "m", "executable": "/bin/sh"}}]`), header: admin}, 400, "invalid_agent", "contents.mcpServers[0].executable", "allows none"},
		{"an unknown helper", request{method: "POST", path: "/v1/agents", body: storedDef("x", "p", `, "extraAgents": [{"slug": "nobody"}]`), header: admin}, 400, "invalid_agent", "contents.extraAgents[0].slug", "no agent has"},
		{"update an unknown agent", request{method: "PUT", path: "/v1/agents/ghost", body: storedDef("ghost", "p", ""), header: admin}, 404, "unknown_agent", "", "ghost"},
		{"rename through an update", request{method: "PUT", path: "/v1/agents/ghost", body: storedDef("other", "p", ""), header: admin}, 400, "invalid_agent", "contents.slug", "keeps its slug"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.send(tc.req)
			got := decodeAs[errorJSON](t, body)
			if status != tc.status || got.Reason != tc.reason || got.Metadata["field"] != tc.field || !strings.Contains(got.Message, tc.says) {
				t.Fatalf("= %d %s, want %d %s (field %q) saying %q", status, body, tc.status, tc.reason, tc.field, tc.says)
			}
		})
	}
	if status, _, body := e.send(request{method: "POST", path: "/v1/agents", body: storedDef("mine", "p", ""), header: admin}); status != http.StatusCreated {
		t.Fatalf("admin create = %d %s", status, body)
	}
	if status, _, body := e.send(request{method: "GET", path: "/v1/agents/mine", header: alice}); status != http.StatusOK {
		t.Fatalf("read by a plain owner = %d %s", status, body)
	}
	if status, _, body := e.send(request{method: "POST", path: "/v1/agents", body: storedDef("mine", "p", ""), header: admin}); status != http.StatusConflict || !strings.Contains(string(body), "already stored") {
		t.Fatalf("second create = %d %s", status, body)
	}
}

// With the test tools' directory allowed, a stored agent gets its bash
// tool.
func TestStoredAgentsRunToolsUnderTheAllowedDirectories(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withStoredToolDirs(toolsDir(t)))
	status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("tooled", "p", echoToolbox(t)))
	if status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	if a := decodeAs[agentJSON](t, body); len(a.Tools) == 0 || !strings.Contains(string(body), `"bash_echo"`) {
		t.Fatalf("tools = %+v, want bash_echo", a.Tools)
	}
	outside := fmt.Sprintf(`, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}]`, "/bin/sh")
	status, _, body = e.do(http.MethodPost, "/v1/agents", storedDef("loose", "p", outside))
	if got := decodeAs[errorJSON](t, body); status != http.StatusBadRequest || got.Metadata["field"] != "contents.bashToolboxes[0]" || !strings.Contains(got.Message, "is not under") {
		t.Fatalf("outside = %d %s", status, body)
	}
}

// A run runs the version current when it started, at every step (issue
// 33: a run never mixes versions), though a new version is stored
// meanwhile; the next run takes the new one, and each LLM turn says
// which it ran.
func TestASessionKeepsWorkingWhileItsStoredAgentIsEdited(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "revised"}, Reply: fakellm.Reply{Text: "the new version at work"}},
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{Text: "calling echo", ChunkSize: 2,
			ToolCalls: []fakellm.ToolCall{{Name: "bash_echo", Arguments: json.RawMessage(`{"word": "x"}`)}}}},
		{Reply: fakellm.Reply{Text: "the old version at work"}},
	}}, withStoredToolDirs(toolsDir(t)), withModelFaults())
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("editable", "You are the first version.", echoToolbox(t))); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	hold := e.modelFaults.HoldAfter(1)
	id := e.create("editable", "go").GetMeta().GetId()
	select {
	case <-hold.Held():
	case <-time.After(20 * time.Second):
		t.Fatal("the first model call never streamed")
	}
	if status, _, body := e.do(http.MethodPut, "/v1/agents/editable", storedDef("editable", "You are the revised version.", echoToolbox(t))); status != http.StatusOK {
		t.Fatalf("update = %d %s", status, body)
	}
	hold.Release()

	s := e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); got != "the old version at work" {
		t.Fatalf("answer = %q, want the run's second step to run version 1 still", got)
	}
	if res := s.GetTurns()[2].GetUser().GetToolResults(); len(res) != 1 || res[0].GetStatus() != agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK {
		t.Fatalf("the tool call of version 1 = %v, want it run", res)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "again"}`); status != http.StatusOK {
		t.Fatalf("post = %d %s", status, body)
	}
	s = e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); got != "the new version at work" {
		t.Fatalf("answer = %q, want the next run to run version 2", got)
	}
	var versions []int64
	for _, turn := range s.GetTurns() {
		if l := turn.GetLlm(); l != nil {
			versions = append(versions, l.GetAgentVersion())
		}
	}
	if fmt.Sprint(versions) != "[1 1 2]" || s.GetMeta().GetAgentVersion() != 2 {
		t.Fatalf("LLM turns ran versions %v, session says %d; want [1 1 2] and 2", versions, s.GetMeta().GetAgentVersion())
	}
}

// A restart keeps the stored agents; a deleted agent's sessions stay
// readable, but no new session starts with it.
func TestStoredAgentsOutliveARestartAndTheirSessionsOutliveThem(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("lasting", "p", "")); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodPut, "/v1/agents/lasting", storedDef("lasting", "p2", "")); status != http.StatusOK {
		t.Fatalf("update = %d %s", status, body)
	}
	e.restart()
	status, _, body := e.do(http.MethodGet, "/v1/agents/lasting", "")
	if got := decodeAs[agentJSON](t, body); status != http.StatusOK || got.Version != 2 || got.Source != "stored" {
		t.Fatalf("after a restart = %d %s", status, body)
	}
	id := e.create("lasting", "hi").GetMeta().GetId()
	e.wait(id)

	if status, _, body := e.do(http.MethodDelete, "/v1/agents/lasting", ""); status != http.StatusOK {
		t.Fatalf("delete = %d %s", status, body)
	}
	status, _, body = e.do(http.MethodPost, "/v1/sessions", `{"agent": "lasting", "message": {"text": "again"}}`)
	if status != http.StatusNotFound || !strings.Contains(string(body), "unknown_agent") {
		t.Fatalf("new session of a deleted agent = %d %s", status, body)
	}
	e.restart()
	status, _, body = e.do(http.MethodGet, "/v1/sessions/"+id, "")
	if status != http.StatusOK || !strings.Contains(string(body), `"agent":"lasting"`) || !strings.Contains(string(body), `"agent_version":2`) {
		t.Fatalf("the deleted agent's session = %d %s", status, body)
	}
}

// Two servers on one PostgreSQL database: an agent stored through one is
// served by the other.
func TestAStoredAgentReachesTheOtherServersOfTheDatabase(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	bus := cluster.NewMemoryBus()
	t.Cleanup(func() { _ = bus.Close() })
	shared := func(e *env) { e.dsn = dsn }
	rules := fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}
	a := start(t, rules, shared, withBus(bus))
	b := start(t, rules, shared, withBus(bus))
	waitFor := func(what string, ok func(agentsv1connect.AgentServiceClient) bool) {
		t.Helper()
		eventually.That(t, "the other server sees "+what, func() bool { return ok(b.agents) })
	}
	if status, _, body := a.do(http.MethodPost, "/v1/agents", storedDef("roaming", "p", "")); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	version := func(c agentsv1connect.AgentServiceClient) int64 {
		res, err := c.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "roaming"}))
		if err != nil {
			return 0
		}
		return res.Msg.GetAgent().GetVersion()
	}
	waitFor("the creation", func(c agentsv1connect.AgentServiceClient) bool { return version(c) == 1 })
	if status, _, body := a.do(http.MethodPut, "/v1/agents/roaming", storedDef("roaming", "p2", "")); status != http.StatusOK {
		t.Fatalf("update = %d %s", status, body)
	}
	waitFor("the update", func(c agentsv1connect.AgentServiceClient) bool { return version(c) == 2 })
	if status, _, body := a.do(http.MethodDelete, "/v1/agents/roaming", ""); status != http.StatusOK {
		t.Fatalf("delete = %d %s", status, body)
	}
	waitFor("the deletion", func(c agentsv1connect.AgentServiceClient) bool { return version(c) == 0 })
}

// Issue 33: a definition that is not UTF-8 is refused before it is
// stored, on creation and on update, so no caller's listing ever meets
// it.
func TestStoredAgentsRefuseADefinitionThatIsNotUTF8(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	garbled := strings.Replace(storedDef("garbled", "PROMPT", ""), "PROMPT", "\xff", 1)
	status, _, body := e.do(http.MethodPost, "/v1/agents", garbled)
	if got := decodeAs[errorJSON](t, body); status != http.StatusBadRequest || got.Code != "invalid_argument" || !strings.Contains(got.Message, "UTF-8") {
		t.Fatalf("POST not UTF-8 = %d %s, want 400 invalid_argument saying UTF-8", status, body)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("kept", "p", "")); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	status, _, body = e.do(http.MethodPut, "/v1/agents/kept", strings.Replace(storedDef("kept", "PROMPT", ""), "PROMPT", "\xff", 1))
	if got := decodeAs[errorJSON](t, body); status != http.StatusBadRequest || got.Code != "invalid_argument" || !strings.Contains(got.Message, "UTF-8") {
		t.Fatalf("PUT not UTF-8 = %d %s, want 400 invalid_argument saying UTF-8", status, body)
	}

	stored, err := e.store.ListStoredAgents(ctxFor(t))
	if err != nil || len(stored) != 1 || stored[0].Slug != "kept" || stored[0].Version != 1 {
		t.Fatalf("stored = %+v, %v; want only kept at version 1", stored, err)
	}
	if status, _, body := e.do(http.MethodGet, "/v1/agents", ""); status != http.StatusOK || strings.Contains(string(body), "garbled") {
		t.Fatalf("GET /v1/agents = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodGet, "/v1/agents/garbled/versions", ""); status != http.StatusNotFound && status != http.StatusOK {
		t.Fatalf("versions of the refused agent = %d %s", status, body)
	}
	ctx := ctxFor(t)
	if _, err := e.agents.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{})); err != nil {
		t.Fatalf("ListAgents: %v", err)
	}
	if got, err := e.agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "kept"})); err != nil || got.Msg.GetAgent().GetVersion() != 1 {
		t.Fatalf("GetAgent = %v, %v", got, err)
	}
}

// Issue 33: a stored row that is not UTF-8 (as an older server stored
// it) is a load error of its own: every other agent still lists, through
// Connect, the JSON routes and a reload, and the row's versions still
// answer, before and after it is deleted.
func TestAStoredAgentThatIsNotUTF8DoesNotTakeTheListingDown(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("sound", "p", "")); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	garbled := strings.Replace(storedDef("garbled", "PROMPT", ""), "PROMPT", "\xff", 1)
	if err := plantAgent(t, e, store.StoredAgent{Slug: "garbled", Version: 1, Definition: garbled, Author: "old", Updated: time.Now()}); err != nil {
		t.Fatal(err)
	}

	listed := func(what string, status int, body []byte) {
		t.Helper()
		list := decodeAs[struct {
			Agents []agentJSON `json:"agents"`
			Errors []struct {
				Agent  string `json:"agent"`
				Reason string `json:"reason"`
			} `json:"errors"`
		}](t, body)
		slugs := map[string]bool{}
		for _, a := range list.Agents {
			slugs[a.Slug] = true
		}
		reported := false
		for _, le := range list.Errors {
			reported = reported || (le.Agent == "garbled" && strings.Contains(le.Reason, "UTF-8"))
		}
		if status != http.StatusOK || !slugs["sound"] || !slugs["boss"] || slugs["garbled"] || !reported {
			t.Fatalf("%s = %d %s; want sound and boss listed, garbled reported as not UTF-8", what, status, body)
		}
	}
	// The reload reads the row in, as a restart would (the test server
	// refuses to boot with a load error).
	status, _, body := e.do(http.MethodPost, "/v1/agents:reload", "")
	listed("POST /v1/agents:reload", status, body)
	status, _, body = e.do(http.MethodGet, "/v1/agents", "")
	listed("GET /v1/agents", status, body)

	ctx := ctxFor(t)
	res, err := e.agents.ListAgents(ctx, connect.NewRequest(&agentsv1.ListAgentsRequest{}))
	if err != nil || len(res.Msg.GetAgents()) == 0 {
		t.Fatalf("ListAgents = %v, %v", res, err)
	}
	if _, err := e.agents.GetAgent(ctx, connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "sound"})); err != nil {
		t.Fatalf("GetAgent sound: %v", err)
	}
	if status, _, body := e.do(http.MethodGet, "/v1/agents/garbled", ""); status != http.StatusNotFound {
		t.Fatalf("GET the garbled agent = %d %s, want 404", status, body)
	}

	versions := func(when string) {
		t.Helper()
		status, _, body := e.do(http.MethodGet, "/v1/agents/garbled/versions", "")
		got := decodeAs[struct {
			Versions []struct {
				Version    int64  `json:"version"`
				Definition string `json:"definition"`
			} `json:"versions"`
		}](t, body)
		if status != http.StatusOK || len(got.Versions) == 0 || !strings.Contains(got.Versions[len(got.Versions)-1].Definition, `"garbled"`) {
			t.Fatalf("versions %s = %d %s", when, status, body)
		}
	}
	versions("of the garbled row")
	if status, _, body := e.do(http.MethodDelete, "/v1/agents/garbled", ""); status != http.StatusOK {
		t.Fatalf("DELETE the garbled agent = %d %s", status, body)
	}
	versions("after its deletion")
	status, _, body = e.do(http.MethodGet, "/v1/agents", "")
	if status != http.StatusOK || !strings.Contains(string(body), `"sound"`) || strings.Contains(string(body), "garbled") {
		t.Fatalf("GET /v1/agents after the deletion = %d %s", status, body)
	}
}

// Issue 33: a key given twice in a definition is refused, as every other
// route refuses it, whichever way the definition comes.
func TestStoredAgentsRefuseAKeyGivenTwice(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	twice := strings.Replace(storedDef("d1", "p", ""), `"slug": "d1"`, `"slug": "d1", "slug": "d2"`, 1)
	status, _, body := e.do(http.MethodPost, "/v1/agents", twice)
	if got := decodeAs[errorJSON](t, body); status != http.StatusBadRequest || got.Code != "invalid_argument" || got.Metadata["field"] != "contents.slug" || !strings.Contains(got.Message, "given twice") {
		t.Fatalf("POST a key given twice = %d %s, want 400 naming contents.slug", status, body)
	}
	if _, err := e.agents.CreateAgent(ctxFor(t), connect.NewRequest(&agentsv1.CreateAgentRequest{Definition: twice})); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("CreateAgent with a key given twice = %v, want invalid_argument", err)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("d1", "p", "")); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	inner := strings.Replace(storedDef("d1", "p", ""), `"flavor": "OpenAIv1"`, `"flavor": "OpenAIv1", "flavor": "OpenAIv1"`, 1)
	status, _, body = e.do(http.MethodPut, "/v1/agents/d1", inner)
	if got := decodeAs[errorJSON](t, body); status != http.StatusBadRequest || got.Metadata["field"] != "contents.flavor" {
		t.Fatalf("PUT a key given twice = %d %s, want 400 naming contents.flavor", status, body)
	}
	if stored, err := e.store.ListStoredAgents(ctxFor(t)); err != nil || len(stored) != 1 || stored[0].Version != 1 {
		t.Fatalf("stored = %+v, %v; want d1 at version 1 only", stored, err)
	}
}

// Issue 33: slugs that differ only in case name one agent: a stored
// agent's slug may not be another agent's in other case, stored (on
// both databases, checked where it is stored) or filed.
func TestStoredAgentSlugsDifferingOnlyInCaseClash(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, on(d))
		if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("probe", "p", "")); status != http.StatusCreated {
			t.Fatalf("create probe = %d %s", status, body)
		}
		for _, slug := range []string{"PROBE", "Probe", "BOSS"} {
			status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef(slug, "p", ""))
			if got := decodeAs[errorJSON](t, body); status != http.StatusConflict || got.Reason != "agent_exists" || !strings.Contains(got.Message, strings.ToLower(slug)) {
				t.Fatalf("create %s = %d %s, want 409 agent_exists naming %s", slug, status, body, strings.ToLower(slug))
			}
		}
		// Past the catalog too: the store refuses it.
		err := plantAgent(t, e, store.StoredAgent{Slug: "pRoBe", Version: 1, Definition: storedDef("pRoBe", "p", ""), Author: "x", Updated: time.Now()})
		if err == nil || !strings.Contains(err.Error(), `"probe"`) {
			t.Fatalf("store create pRoBe = %v, want a conflict naming probe", err)
		}
		if status, _, body := e.do(http.MethodDelete, "/v1/agents/probe", ""); status != http.StatusOK {
			t.Fatalf("delete probe = %d %s", status, body)
		}
		if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("PROBE", "p", "")); status != http.StatusCreated {
			t.Fatalf("create PROBE once probe is deleted = %d %s", status, body)
		}
	})
}

// Issue 33: a stored agent another stored agent names as a helper is not
// deleted from under it: failed_precondition (412, as a session with
// children is) naming the dependents, until they no longer name it.
func TestDeletingAStoredHelperSomeAgentNamesIsRefused(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	for _, def := range []string{
		storedDef("aide", "p", ""),
		storedDef("chief", "p", `, "extraAgents": [{"slug": "aide"}]`),
		storedDef("deputy", "p", `, "extraAgents": [{"slug": "aide", "as": "assistant"}, {"slug": "deputy"}]`),
	} {
		if status, _, body := e.do(http.MethodPost, "/v1/agents", def); status != http.StatusCreated {
			t.Fatalf("create = %d %s", status, body)
		}
	}
	status, _, body := e.do(http.MethodDelete, "/v1/agents/aide", "")
	if got := decodeAs[errorJSON](t, body); status != http.StatusPreconditionFailed || got.Code != "failed_precondition" || got.Reason != "agent_in_use" ||
		!strings.Contains(got.Message, "chief") || !strings.Contains(got.Message, "deputy") {
		t.Fatalf("DELETE a helper in use = %d %s, want failed_precondition agent_in_use naming chief and deputy", status, body)
	}
	if _, err := e.agents.DeleteAgent(ctxFor(t), connect.NewRequest(&agentsv1.DeleteAgentRequest{Slug: "aide"})); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Fatalf("DeleteAgent a helper in use = %v, want failed_precondition", err)
	}
	if status, _, body := e.do(http.MethodGet, "/v1/agents/chief", ""); status != http.StatusOK {
		t.Fatalf("GET the dependent = %d %s", status, body)
	}
	// An agent naming itself does not hold itself.
	if status, _, body := e.do(http.MethodDelete, "/v1/agents/chief", ""); status != http.StatusOK {
		t.Fatalf("delete chief = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodPut, "/v1/agents/deputy", storedDef("deputy", "p", `, "extraAgents": [{"slug": "deputy"}]`)); status != http.StatusOK {
		t.Fatalf("update deputy = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodDelete, "/v1/agents/aide", ""); status != http.StatusOK {
		t.Fatalf("delete aide once nobody names it = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodDelete, "/v1/agents/deputy", ""); status != http.StatusOK {
		t.Fatalf("delete deputy, its own helper = %d %s", status, body)
	}
}

// The check that a helper is not in use reads the stored agents in the
// delete's own transaction, not the catalog: an agent naming the helper
// that this server's catalog has not read yet (created meanwhile, here
// or by another server) still holds it.
func TestDeletingAStoredHelperChecksTheAgentsInItsTransaction(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, on(d))
		if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("aide", "p", "")); status != http.StatusCreated {
			t.Fatalf("create = %d %s", status, body)
		}
		unseen := store.StoredAgent{Slug: "chief", Version: 1, Definition: storedDef("chief", "p", `, "extraAgents": [{"slug": "aide"}]`), Author: "x", Updated: time.Now()}
		if err := plantAgent(t, e, unseen); err != nil {
			t.Fatal(err)
		}
		status, _, body := e.do(http.MethodDelete, "/v1/agents/aide", "")
		if got := decodeAs[errorJSON](t, body); status != http.StatusPreconditionFailed || got.Reason != "agent_in_use" || got.Metadata["dependents"] != "chief" {
			t.Fatalf("DELETE a helper an agent the catalog has not read names = %d %s, want agent_in_use naming chief", status, body)
		}
	})
}

// A change of a stored agent and its agents.changed event are one
// transaction: a write that fails leaves neither the agent nor an event,
// one that succeeds leaves the agent and exactly one event.
func TestAStoredAgentChangeAndItsEventAreOneWrite(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}}, withFaults())
	announced := func() []*agentsv1.AgentsChanged {
		t.Helper()
		logged, err := e.store.EventsAfter(ctxFor(t), store.EventFilter{All: true}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []*agentsv1.AgentsChanged
		for _, l := range logged {
			var ev agentsv1.Event
			if err := proto.Unmarshal(l.Body, &ev); err != nil {
				t.Fatal(err)
			}
			if c := ev.GetAgentsChanged(); c != nil {
				out = append(out, c)
			}
		}
		return out
	}
	before := len(announced())

	e.faults.RefuseCommits(1, func(c *store.Change) bool { return c.Agent != nil })
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("scribe", "p", "")); status < 500 {
		t.Fatalf("create with its write refused = %d %s, want a server error", status, body)
	}
	if _, err := e.store.GetStoredAgent(ctxFor(t), "scribe"); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("the agent of a refused write: %v, want none stored", err)
	}
	if got := announced(); len(got) != before {
		t.Fatalf("events after a refused write: %d agents.changed, want %d", len(got), before)
	}

	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("scribe", "p", "")); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	got := announced()
	if len(got) != before+1 || got[len(got)-1].GetAgent() != "scribe" || got[len(got)-1].GetVersion() != 1 || !slices.Contains(got[len(got)-1].GetSlugs(), "scribe") {
		t.Fatalf("events after a create: %v, want one more, announcing scribe at version 1", got)
	}
}

// Issue 33: a session keeps the agent it was created with. Posting to it
// once that agent is deleted says so (failed_precondition
// agent_deleted); once another is created under its slug, likewise
// (agent_replaced) instead of running the newcomer; a new session, or a
// fork, runs the newcomer.
func TestASessionOfADeletedAgentDoesNotRunTheAgentRecreatedUnderItsSlug(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "newcomer"}, Reply: fakellm.Reply{Text: "the newcomer at work"}},
		{Reply: fakellm.Reply{Text: "the original at work"}},
	}})
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("phoenix", "You are the original.", "")); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	id := e.create("phoenix", "hi").GetMeta().GetId()
	e.wait(id)
	if status, _, body := e.do(http.MethodDelete, "/v1/agents/phoenix", ""); status != http.StatusOK {
		t.Fatalf("delete = %d %s", status, body)
	}
	status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "again"}`)
	if got := decodeAs[errorJSON](t, body); status != http.StatusPreconditionFailed || got.Reason != "agent_deleted" {
		t.Fatalf("post to a session of a deleted agent = %d %s, want 412 agent_deleted", status, body)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("phoenix", "You are the newcomer.", "")); status != http.StatusCreated {
		t.Fatalf("create again = %d %s", status, body)
	}
	status, _, body = e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "again"}`)
	if got := decodeAs[errorJSON](t, body); status != http.StatusPreconditionFailed || got.Reason != "agent_replaced" || !strings.Contains(got.Message, "phoenix") {
		t.Fatalf("post to the old session = %d %s, want 412 agent_replaced", status, body)
	}
	if got := lastTurn(e.wait(id)).GetLlm().GetText(); got != "the original at work" {
		t.Fatalf("the old session's last answer = %q, want the original's", got)
	}
	fresh := e.wait(e.create("phoenix", "hi").GetMeta().GetId())
	if got := lastTurn(fresh).GetLlm().GetText(); got != "the newcomer at work" {
		t.Fatalf("a new session's answer = %q, want the newcomer's", got)
	}
	// A fork of the old session goes on with the newcomer.
	status, _, body = e.do(http.MethodPost, "/v1/sessions/"+id+"/fork", `{}`)
	fork := decodeAs[struct {
		ID string `json:"id"`
	}](t, body)
	if status != http.StatusCreated {
		t.Fatalf("fork = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/sessions/"+fork.ID+"/messages", `{"text": "again"}`); status != http.StatusOK {
		t.Fatalf("post to the fork = %d %s", status, body)
	}
	if got := lastTurn(e.wait(fork.ID)).GetLlm().GetText(); got != "the newcomer at work" {
		t.Fatalf("the fork's answer = %q, want the newcomer's", got)
	}
}

// Issue 33: a session pinned to a version runs that version at every
// step, whatever is current; rolling back writes the old definition as a
// new version, which sessions following the latest then run.
func TestASessionPinnedToAnAgentVersionRunsItAndRollbackRestoresOne(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "second"}, Reply: fakellm.Reply{Text: "the second at work"}},
		{Reply: fakellm.Reply{Text: "the first at work"}},
	}})
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("ver", "You are the first.", "")); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodPut, "/v1/agents/ver", storedDef("ver", "You are the second.", "")); status != http.StatusOK {
		t.Fatalf("update = %d %s", status, body)
	}
	status, _, body := e.do(http.MethodPost, "/v1/sessions?wait=true", `{"agent": "ver", "agent_version": 1, "message": {"text": "hi"}}`)
	if status != http.StatusCreated {
		t.Fatalf("create a pinned session = %d %s", status, body)
	}
	pinned := decodeAs[struct {
		ID                 string `json:"id"`
		AgentVersion       int64  `json:"agent_version"`
		PinnedAgentVersion int64  `json:"pinned_agent_version"`
	}](t, body)
	if pinned.AgentVersion != 1 || pinned.PinnedAgentVersion != 1 {
		t.Fatalf("pinned session = %s, want version 1 pinned and run", body)
	}
	id := pinned.ID
	if got := lastTurn(e.wait(id)).GetLlm().GetText(); got != "the first at work" {
		t.Fatalf("pinned answer = %q, want version 1's", got)
	}
	for _, bad := range []string{`{"agent": "ver", "agent_version": 3}`, `{"agent": "boss", "agent_version": 1}`} {
		if status, _, body := e.do(http.MethodPost, "/v1/sessions", bad); status != http.StatusBadRequest {
			t.Fatalf("create %s = %d %s, want 400", bad, status, body)
		}
	}
	following := e.wait(e.create("ver", "hi").GetMeta().GetId())
	if got := lastTurn(following).GetLlm().GetText(); got != "the second at work" || following.GetMeta().GetPinnedAgentVersion() != 0 {
		t.Fatalf("following answer = %q (pinned %d), want version 2's", got, following.GetMeta().GetPinnedAgentVersion())
	}

	status, _, body = e.do(http.MethodPost, "/v1/agents/ver/rollback", `{"version": 1}`)
	if got := decodeAs[agentJSON](t, body); status != http.StatusOK || got.Version != 3 || !strings.Contains(got.Definition, "You are the first.") {
		t.Fatalf("rollback = %d %s, want version 3 with version 1's definition", status, body)
	}
	status, _, body = e.do(http.MethodGet, "/v1/agents/ver/versions", "")
	if !strings.Contains(string(body), `"restored_from":1`) {
		t.Fatalf("versions after a rollback = %d %s, want version 3 restored from 1", status, body)
	}
	if got := lastTurn(e.wait(e.create("ver", "hi").GetMeta().GetId())).GetLlm().GetText(); got != "the first at work" {
		t.Fatalf("answer after the rollback = %q, want version 1's definition", got)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/agents/ver/rollback", `{"version": 9}`); status != http.StatusNotFound && status != http.StatusBadRequest {
		t.Fatalf("rollback to a version never stored = %d %s", status, body)
	}

	// The pinned session keeps version 1 through an update.
	if status, _, body := e.do(http.MethodPut, "/v1/agents/ver", storedDef("ver", "You are the second.", "")); status != http.StatusOK {
		t.Fatalf("update = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/sessions/"+id+"/messages", `{"text": "again"}`); status != http.StatusOK && status != http.StatusAccepted {
		t.Fatalf("post to the pinned session = %d %s", status, body)
	}
	s := e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); got != "the first at work" || s.GetMeta().GetAgentVersion() != 1 {
		t.Fatalf("pinned answer after an update = %q at version %d, want version 1's", got, s.GetMeta().GetAgentVersion())
	}

	// A fork keeps the pin, or moves it.
	ctx := ctxFor(t)
	kept, err := e.sessions.ForkSession(ctx, connect.NewRequest(&agentsv1.ForkSessionRequest{SessionId: id}))
	if err != nil || kept.Msg.GetSession().GetMeta().GetPinnedAgentVersion() != 1 {
		t.Fatalf("fork = %v, %v; want it pinned to 1 as its source", kept, err)
	}
	latest := int64(0)
	moved, err := e.sessions.ForkSession(ctx, connect.NewRequest(&agentsv1.ForkSessionRequest{SessionId: id, AgentVersion: &latest}))
	if err != nil || moved.Msg.GetSession().GetMeta().GetPinnedAgentVersion() != 0 {
		t.Fatalf("fork following the latest = %v, %v", moved, err)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/sessions/"+moved.Msg.GetSession().GetMeta().GetId()+"/messages", `{"text": "again"}`); status != http.StatusOK {
		t.Fatalf("post to the fork = %d %s", status, body)
	}
	if got := lastTurn(e.wait(moved.Msg.GetSession().GetMeta().GetId())).GetLlm().GetText(); got != "the second at work" {
		t.Fatalf("the moved fork's answer = %q, want the latest version's", got)
	}
	three := int64(3)
	if res, err := e.sessions.ForkSession(ctx, connect.NewRequest(&agentsv1.ForkSessionRequest{SessionId: id, AgentVersion: &three})); err != nil || res.Msg.GetSession().GetMeta().GetPinnedAgentVersion() != 3 {
		t.Fatalf("fork pinned to 3 = %v, %v", res, err)
	}
}

// Issue 33: a run recovered after a restart goes on with the version it
// started with, though another was stored meanwhile: a crash does not
// make a run mix versions either. The session says the version its run
// runs from the run's start.
func TestARecoveredRunKeepsItsAgentVersion(t *testing.T) {
	t.Parallel()
	hang, err := filepath.Abs("testdata/tools/hang")
	if err != nil {
		t.Fatal(err)
	}
	toolbox := fmt.Sprintf(`, "bashToolboxes": [{"tag": "SingleTool", "contents": {"Path": %q}}]`, hang)
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "revised"}, Reply: fakellm.Reply{Text: "the new version at work"}},
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{Text: "calling hang",
			ToolCalls: []fakellm.ToolCall{{Name: "bash_hang", Arguments: json.RawMessage(`{}`)}}}},
		{Reply: fakellm.Reply{Text: "the old version at work"}},
	}}, withStoredToolDirs(toolsDir(t)))
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("steady", "You are the first version.", toolbox)); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	feed := e.openSSE("/v1/events")
	id := e.create("steady", "go").GetMeta().GetId()
	until(t, feed, kind(id, "tool.started"))
	feed.cancel()
	if status, _, body := e.do(http.MethodGet, "/v1/sessions/"+id+"?view=meta", ""); status != http.StatusOK || !strings.Contains(string(body), `"agent_version":1`) {
		t.Fatalf("the running session = %d %s, want it to say version 1", status, body)
	}
	if status, _, body := e.do(http.MethodPut, "/v1/agents/steady", storedDef("steady", "You are the revised version.", toolbox)); status != http.StatusOK {
		t.Fatalf("update = %d %s", status, body)
	}
	e.restart()
	s := e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); got != "the old version at work" || lastTurn(s).GetLlm().GetAgentVersion() != 1 {
		t.Fatalf("the recovered run answered %q at version %d, want version 1's", got, lastTurn(s).GetLlm().GetAgentVersion())
	}
}

// Issue 33: a run that waits for a client's answer goes on, once
// answered, with the version it started with, though another was stored
// meanwhile: resuming does not make a run mix versions.
func TestAResumedRunKeepsItsAgentVersion(t *testing.T) {
	t.Parallel()
	ask := `, "clientTools": [{"name": "ask_user", "description": "Ask the user.", "parameters": {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}}]`
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "revised"}, Reply: fakellm.Reply{Text: "the new version at work"}},
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "ask_user", Arguments: json.RawMessage(`{"question": "colour?"}`)}}}},
		{Reply: fakellm.Reply{Text: "the old version at work"}},
	}})
	if status, _, body := e.do(http.MethodPost, "/v1/agents", storedDef("asker", "You are the first version.", ask)); status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	feed := e.openSSE("/v1/events")
	id := e.create("asker", "go").GetMeta().GetId()
	deferred := until(t, feed, kind(id, "calls.deferred")).GetCallsDeferred().GetCalls()
	feed.cancel()
	if status, _, body := e.do(http.MethodPut, "/v1/agents/asker", storedDef("asker", "You are the revised version.", ask)); status != http.StatusOK {
		t.Fatalf("update = %d %s", status, body)
	}
	if status, _, body := e.do(http.MethodPost, "/v1/calls/"+deferred[0].GetToken()+"/complete", `{"text": "blue", "resume": true}`); status != http.StatusOK {
		t.Fatalf("complete = %d %s", status, body)
	}
	s := e.wait(id)
	if got := lastTurn(s).GetLlm().GetText(); got != "the old version at work" || lastTurn(s).GetLlm().GetAgentVersion() != 1 {
		t.Fatalf("the resumed run answered %q at version %d, want version 1's", got, lastTurn(s).GetLlm().GetAgentVersion())
	}
}

// A stored agent's budget is in its descriptor, and a root session
// started with none, over the JSON routes, gets it; `budget: {}` starts
// one with no limit.
func TestAStoredAgentsBudgetIsItsSessionsWhenTheyAskForNone(t *testing.T) {
	t.Parallel()
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "hello"}})
	def := storedDef("frugal", "You are frugal.", `, "budget": {"tokens": 5000, "costUsd": 0.25}`)
	status, _, body := e.do(http.MethodPost, "/v1/agents", def)
	if status != http.StatusCreated {
		t.Fatalf("POST /v1/agents = %d %s", status, body)
	}
	type budget struct {
		Tokens  *int64   `json:"tokens"`
		CostUSD *float64 `json:"cost_usd"`
	}
	got := decodeAs[struct {
		Budget *budget `json:"budget"`
	}](t, body)
	if b := got.Budget; b == nil || b.Tokens == nil || *b.Tokens != 5000 || b.CostUSD == nil || *b.CostUSD != 0.25 {
		t.Fatalf("descriptor budget = %+v, want 5,000 tokens and $0.25 (%s)", b, body)
	}
	for _, c := range []struct {
		body string
		want *int64
	}{
		{`{"agent": "frugal"}`, proto.Int64(5000)},
		{`{"agent": "frugal", "budget": {"tokens": 7}}`, proto.Int64(7)},
		{`{"agent": "frugal", "budget": {}}`, nil},
	} {
		status, _, body := e.do(http.MethodPost, "/v1/sessions", c.body)
		if status != http.StatusCreated {
			t.Fatalf("POST /v1/sessions %s = %d %s", c.body, status, body)
		}
		s := decodeAs[struct {
			Budget struct {
				Budget *budget `json:"budget"`
			} `json:"budget"`
		}](t, body)
		b := s.Budget.Budget
		if (c.want == nil) != (b == nil) || (c.want != nil && (b.Tokens == nil || *b.Tokens != *c.want)) {
			t.Errorf("POST /v1/sessions %s: budget %+v, want %v tokens", c.body, b, c.want)
		}
	}
}
