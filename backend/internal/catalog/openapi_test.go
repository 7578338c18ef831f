package catalog

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

const itemsSpec = `{"openapi": "3.0.0", "info": {"title": "items", "version": "1"},
	"paths": {"/items": {"post": {"operationId": "createItem",
		"requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}}},
		"responses": {"201": {"description": "made"}}}}},
	"components": {"schemas": {"Item": {"type": "object", "properties": {"name": {"type": "string"}}}}}}`

// apiAgent writes an agent with one OpenAPI toolbox whose description is
// at spec, and more of its contents (approvals, say), and loads it.
func apiAgent(t *testing.T, spec, more string, opts Options) (*Catalog, *agentfile.Set) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.json")
	writeFile(t, file, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "caller", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"openApiToolboxes": [{"tag": "OpenAPIServer", "contents": {"SpecUrl": "`+spec+`", "BaseUrl": "`+spec+`", "Name": "items",
			"Secrets": [{"source": {"tag": "ApiKey", "contents": "items-key"}, "serializer": {"tag": "Header", "contents": ["X-Key", null]}}]}}]`+more+`}}`, 0o644)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{file}, nil)
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	return New(context.Background(), func() *agentfile.Set { return set }, opts), set
}

func itemsAPI(t *testing.T) (*httptest.Server, chan http.Header) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, itemsSpec)
			return
		}
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id": 1}`)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// The toolbox's tools are the agent's; its secret comes from the key
// store; an approval policy names them as any other tool, and a rule on
// an argument they do not take is refused.
func TestAnAgentOffersItsAPIsOperationsUnderItsApprovals(t *testing.T) {
	t.Parallel()
	srv, got := itemsAPI(t)
	key := func(id string) (string, bool) { return "the-key", id == "items-key" }
	cat, _ := apiAgent(t, srv.URL+"/openapi.json", `, "approvals": [{"tool": "openapi_items_createItem", "when": {"arg": "b", "matches": "secret"}}]`, Options{Key: key})
	a, err := cat.Get("caller")
	if err != nil {
		t.Fatalf("%v (errors %v)", err, cat.Snapshot().Errors)
	}
	found, ok := a.Known().Get("openapi_items_createItem")
	if !ok || found.Spec().Kind != session.ToolHTTP || found.Spec().Source != srv.URL+"/openapi.json" {
		t.Fatalf("tools: %v", a.Known().List())
	}
	args, err := tool.DecodeArgs(found.Spec(), `{"b": {"name": "x"}}`)
	if err != nil {
		t.Fatal(err)
	}
	if res := found.Execute(context.Background(), tool.Call{Args: args}); res.Status != session.ResultOK || res.Text != "HTTP 201\n{\"id\": 1}" {
		t.Errorf("call = %+v", res)
	}
	if h := <-got; h.Get("X-Key") != "the-key" {
		t.Errorf("X-Key = %q, want the key store's", h.Get("X-Key"))
	}

	cat, _ = apiAgent(t, srv.URL+"/openapi.json", `, "approvals": [{"tool": "openapi_items_createItem", "when": {"arg": "body", "matches": "x"}}]`, Options{Key: key})
	if _, err := cat.Get("caller"); err == nil || !strings.Contains(errorsOf(cat), `contents.approvals[0].when: the rule on "body" can never match`) {
		t.Errorf("a rule on an argument the tool does not take: %v", errorsOf(cat))
	}
}

// A description that cannot be read, or a secret the server lacks, is a
// load problem naming the toolbox; the agent loads without its tools.
func TestAToolboxThatCannotLoadIsAProblemNamingIt(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	cat, _ := apiAgent(t, gone.URL+"/openapi.json", "", Options{Key: func(string) (string, bool) { return "k", true }})
	if _, err := cat.Get("caller"); err != nil {
		t.Fatalf("the agent did not load: %v", err)
	}
	if e := errorsOf(cat); !strings.Contains(e, "contents.openApiToolboxes[0]: the toolbox offers no tools: description "+gone.URL+"/openapi.json") {
		t.Errorf("errors = %s", e)
	}

	srv, _ := itemsAPI(t)
	cat, _ = apiAgent(t, srv.URL+"/openapi.json", "", Options{})
	if e := errorsOf(cat); !strings.Contains(e, `contents.openApiToolboxes[0]: the toolbox offers no tools: contents.openApiToolboxes[0].contents.Secrets[0]: the server has no key "items-key"`) {
		t.Errorf("errors = %s", e)
	}
}

func errorsOf(c *Catalog) string {
	var out []string
	for _, e := range c.Snapshot().Errors {
		out = append(out, e.Error())
	}
	return strings.Join(out, "\n")
}

// A toolbox that comes out with no tool (its filter keeps no operation,
// a misspelt prefix say) loads with a warning naming it, as a builtin
// toolbox with no capability does: otherwise the agent silently goes
// without the tools its file asks for.
func TestAnAPIToolboxWithNoOperationWarns(t *testing.T) {
	t.Parallel()
	srv, _ := itemsAPI(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.json")
	writeFile(t, file, `{"tag": "OpenAIAgentDescription", "contents": {
		"slug": "caller", "flavor": "OpenAIv1", "modelUrl": "https://example.test/v1", "modelName": "m",
		"openApiToolboxes": [{"tag": "OpenAPIServer", "contents": {"SpecUrl": "`+srv.URL+`/openapi.json", "BaseUrl": "`+srv.URL+`", "Name": "items",
			"Filter": {"tag": "PathPrefix", "contents": "/itmes"}}}]}}`, 0o644)
	set := agentfile.Loader{WorkDir: dir}.Load([]string{file}, nil)
	cat := New(context.Background(), func() *agentfile.Set { return set }, Options{})
	a, err := cat.Get("caller")
	if err != nil {
		t.Fatalf("%v (errors %v)", err, cat.Snapshot().Errors)
	}
	if len(a.Known().List()) != 0 {
		t.Fatalf("tools %v, want none", a.Known().List())
	}
	warnings := cat.Snapshot().Warnings
	if len(warnings) != 1 || warnings[0].Field != "contents.openApiToolboxes[0]" || !strings.Contains(warnings[0].Reason, "no tool") {
		t.Errorf("warnings = %v, want one naming the toolbox", warnings)
	}
	if len(a.Agent.Warnings) != 1 {
		t.Errorf("the agent's warnings = %v", a.Agent.Warnings)
	}
}
