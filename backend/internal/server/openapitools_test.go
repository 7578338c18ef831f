package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/tools/fakellm"
)

// apiRequest is one request a local API got.
type apiRequest struct {
	Method, Path, Query, Body string
	Header                    http.Header
}

// localAPI serves the description testdata/openapi/<spec> at specPath
// and answers every other request with status and answer, recording it.
type localAPI struct {
	srv  *httptest.Server
	port string
	mu   sync.Mutex
	got  []apiRequest
}

func startLocalAPI(t *testing.T, spec, specPath string, status int, answer string) *localAPI {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "openapi", spec))
	if err != nil {
		t.Fatal(err)
	}
	a := &localAPI{}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == specPath {
			_, _ = w.Write(data)
			return
		}
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.got = append(a.got, apiRequest{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Body: string(body), Header: r.Header.Clone()})
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(a.srv.Close)
	u, _ := url.Parse(a.srv.URL)
	a.port = u.Port()
	return a
}

func (a *localAPI) requests() []apiRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.got)
}

// apiAgentsDir writes the agent file testdata/openapi/<file> into a
// folder of its own, naming the local API's port where it says
// {{PORT}}: the agent reaches its API as http://localhost:<port>.
func apiAgentsDir(t *testing.T, file, port string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "openapi", file))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(strings.ReplaceAll(string(data), "{{PORT}}", port)), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

const itemsToken = "items-t0ken-kept-secret"

// Issue 36: an agents-exe OpenAPI toolbox end to end. The agent's tools
// are named as agents-exe names them, their schemas resolved; a call
// the model makes reaches the API with exactly the method, path, body
// and headers it should, its token from a secret session param; the
// session holds the answer; and the token is in no event, log line or
// answer.
func TestAnAgentCallsAnOpenAPIOperation(t *testing.T) {
	t.Parallel()
	api := startLocalAPI(t, "items.json", "/openapi.json", http.StatusCreated,
		`{"id": "new-3", "name": "openapi-test", "count": 42, "echo": "Bearer `+itemsToken+`"}`)
	create := "openapi_localhost" + api.port + "_createItem"
	var log syncBuffer
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: callTool(create, `{"b": {"name": "openapi-test", "count": 42}}`)},
		{Reply: fakellm.Reply{Text: "{{last_tool_result}}"}},
	}}, withAgentsDir(apiAgentsDir(t, "openapi-tester.json", api.port)), withLogTo(&log))

	res, err := e.agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "openapi-tester"}))
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*agentsv1.ToolDescriptor{}
	for _, tl := range res.Msg.GetAgent().GetTools() {
		tools[tl.GetName()] = tl
	}
	for _, name := range []string{"listItems", "createItem", "getItem"} {
		if tools["openapi_localhost"+api.port+"_"+name] == nil {
			t.Errorf("no tool for %s among %v", name, tools)
		}
	}
	if tools["openapi_localhost"+api.port+"_reset"] != nil {
		t.Errorf("the filter's /admin operation is offered")
	}
	schema, _ := json.Marshal(tools[create].GetParameters())
	if !strings.Contains(string(schema), `"b":{"description":"Request body","properties":{"count":{"type":"integer"},"name":{"type":"string"}},"required":["name"],"type":"object"}`) {
		t.Errorf("createItem's schema = %s, want its body's $ref resolved", schema)
	}

	created, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "openapi-tester", Message: &agentsv1.Message{Text: "run the smoke test"}, Params: map[string]string{"ITEMS_TOKEN": itemsToken},
	}))
	if err != nil {
		t.Fatal(err)
	}
	id := created.Msg.GetSession().GetMeta().GetId()
	s := e.wait(id)
	answer := lastTurn(s).GetLlm().GetText()
	if !strings.HasPrefix(answer, "HTTP 201\n") || !strings.Contains(answer, `"id": "new-3"`) {
		t.Errorf("answer = %q, want the API's", answer)
	}

	got := api.requests()
	if len(got) != 1 {
		t.Fatalf("the API got %d requests, want 1: %+v", len(got), got)
	}
	r := got[0]
	if r.Method != "POST" || r.Path != "/items" || r.Query != "" || r.Body != `{"name":"openapi-test","count":42}` {
		t.Errorf("the API got %s %s?%s %s", r.Method, r.Path, r.Query, r.Body)
	}
	if r.Header.Get("Authorization") != "Bearer "+itemsToken || r.Header.Get("X-Client") != "agents" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("the API got headers %v", r.Header)
	}

	// The token is in no answer, no event and no log line, though the
	// API echoed it back.
	if strings.Contains(answer, itemsToken) || !strings.Contains(answer, "[redacted]") {
		t.Errorf("the answer shows the token: %q", answer)
	}
	evs, err := e.store.EventsAfter(context.Background(), store.EventFilter{All: true}, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, ev := range evs {
		kinds[ev.Kind] = true
		if strings.Contains(string(ev.Body), itemsToken) {
			t.Errorf("event %s shows the token: %s", ev.Kind, ev.Body)
		}
	}
	if !kinds["tool.completed"] {
		t.Errorf("the event log has no tool.completed: %v", kinds)
	}
	status, _, exported := e.do(http.MethodGet, "/v1/sessions/"+id+"/export?format=json", "")
	if status != http.StatusOK || strings.Contains(string(exported), itemsToken) {
		t.Errorf("the export (%d) shows the token: %s", status, exported)
	}
	if strings.Contains(log.String(), itemsToken) {
		t.Errorf("the log shows the token")
	}
}

// An approval policy holds an operation's call as any other tool's: it
// waits, and reaches the API only once approved.
func TestAnOpenAPICallWaitsForItsApproval(t *testing.T) {
	t.Parallel()
	api := startLocalAPI(t, "items.json", "/openapi.json", http.StatusOK, `{"id": "a1"}`)
	get := "openapi_localhost" + api.port + "_getItem"
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: callTool(get, `{"p_itemId": "a1"}`)},
		{Reply: fakellm.Reply{Text: "{{last_tool_result}}"}},
	}}, withAgentsDir(apiAgentsDir(t, "openapi-tester.json", api.port)))
	feed := e.openSSE("/v1/events")
	created, err := e.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "openapi-tester", Message: &agentsv1.Message{Text: "get a1"}, Params: map[string]string{"ITEMS_TOKEN": itemsToken},
	}))
	if err != nil {
		t.Fatal(err)
	}
	id := created.Msg.GetSession().GetMeta().GetId()
	calls := until(t, feed, kind(id, "calls.deferred")).GetCallsDeferred().GetCalls()
	if len(calls) != 1 || calls[0].GetReason() != "approval" || calls[0].GetCall().GetName() != get {
		t.Fatalf("calls.deferred = %v, want the getItem call waiting for approval", calls)
	}
	if n := len(api.requests()); n != 0 {
		t.Fatalf("the API got %d requests before the approval", n)
	}
	status, _, body := e.do(http.MethodPost, "/v1/calls/"+e.deferredTokens(id)[0]+"/complete", `{"approval": {"approve": true}, "resume": true}`)
	if status != http.StatusOK {
		t.Fatalf("approve = %d %s", status, body)
	}
	if answer := lastTurn(e.wait(id)).GetLlm().GetText(); answer != "HTTP 200\n{\"id\": \"a1\"}" {
		t.Errorf("answer = %q", answer)
	}
	if got := api.requests(); len(got) != 1 || got[0].Path != "/items/a1" {
		t.Errorf("the API got %+v", got)
	}
}

// Issue 36: a PostgREST toolbox from a PostgREST-style description, end
// to end: a read with filters, a paged and ordered read, an insert.
func TestAnAgentCallsAPostgRESTTable(t *testing.T) {
	t.Parallel()
	api := startLocalAPI(t, "tasks-postgrest.json", "/", http.StatusOK, `[{"id": 1, "title": "learn agents-exe", "done": false}]`)
	p := "postgrest_localhost" + api.port + "_"
	e := start(t, fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{AssistantMessages: steps(0)}, Reply: callTool(p+"get_tasks", `{"filters": {"done": "is.false"}, "subset": {"limit": 5, "columns": "id,title"}, "ranking": {"order": "id.desc"}}`)},
		{Match: fakellm.Match{AssistantMessages: steps(1)}, Reply: callTool(p+"post_tasks", `{"body": {"title": "postgrest-test", "done": false}}`)},
		{Match: fakellm.Match{AssistantMessages: steps(2)}, Reply: callTool(p+"patch_tasks_id", `{"p_id": 3, "body": {"done": true}}`)},
		{Reply: fakellm.Reply{Text: "{{last_tool_result}}"}},
	}}, withAgentsDir(apiAgentsDir(t, "postgrest-tester.json", api.port)))

	res, err := e.agents.GetAgent(ctxFor(t), connect.NewRequest(&agentsv1.GetAgentRequest{Slug: "postgrest-tester"}))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Msg.GetAgent().GetTools() {
		names = append(names, tl.GetName())
	}
	slices.Sort(names)
	want := []string{p + "delete_tasks", p + "get_tasks", p + "get_tasks_id", p + "patch_tasks_id", p + "post_tasks"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q", names, want)
	}

	id := e.create("postgrest-tester", "run the smoke test").GetMeta().GetId()
	if answer := lastTurn(e.wait(id)).GetLlm().GetText(); !strings.HasPrefix(answer, "HTTP 200\n") {
		t.Errorf("answer = %q", answer)
	}
	got := api.requests()
	if len(got) != 3 {
		t.Fatalf("the API got %+v", got)
	}
	if q, _ := url.ParseQuery(got[0].Query); got[0].Method != "GET" || got[0].Path != "/tasks" ||
		q.Get("done") != "is.false" || q.Get("limit") != "5" || q.Get("select") != "id,title" || q.Get("order") != "id.desc" || len(q) != 4 {
		t.Errorf("read: %s %s?%s", got[0].Method, got[0].Path, got[0].Query)
	}
	if got[1].Method != "POST" || got[1].Path != "/tasks" || got[1].Body != `{"title":"postgrest-test","done":false}` {
		t.Errorf("insert: %+v", got[1])
	}
	if got[2].Method != "PATCH" || got[2].Path != "/tasks/3" || got[2].Body != `{"done":true}` {
		t.Errorf("update: %+v", got[2])
	}
}
