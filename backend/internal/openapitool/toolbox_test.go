package openapitool

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

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// received is one request an API server got.
type received struct {
	Method, RawPath, RawQuery, Body string
	Header                          http.Header
}

// api is a local HTTP API: it serves a description at specPath and
// answers every other request with answer, recording it.
type api struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status int
	answer string
}

func startAPI(t *testing.T, specFile, specPath string) *api {
	t.Helper()
	spec, err := os.ReadFile(filepath.Join("testdata", specFile))
	if err != nil {
		t.Fatal(err)
	}
	a := &api{status: http.StatusOK, answer: `{"ok": true}`}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == specPath {
			_, _ = w.Write(spec)
			return
		}
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.got = append(a.got, received{Method: r.Method, RawPath: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Body: string(body), Header: r.Header.Clone()})
		status, answer := a.status, a.answer
		a.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *api) requests() []received {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.got)
}

// localhost is the server's URL with "localhost" for its address, as an
// agent file would name a local API.
func (a *api) localhost() string {
	u, _ := url.Parse(a.URL)
	return "http://localhost:" + u.Port()
}

func (a *api) port() string {
	u, _ := url.Parse(a.URL)
	return u.Port()
}

func load(t *testing.T, box agentfile.APIToolbox, opts Options) map[string]*Tool {
	t.Helper()
	tools, err := Load(context.Background(), box, opts)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	out := map[string]*Tool{}
	for _, tl := range tools {
		if err := tool.CheckSchema(tl.Spec().Parameters); err != nil {
			t.Errorf("%s: schema refused: %v", tl.Spec().Name, err)
		}
		out[tl.Spec().Name] = tl.(*Tool)
	}
	return out
}

func names(tools map[string]*Tool) []string {
	var out []string
	for n := range tools {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// call runs one call of t with the model's arguments text.
func call(t *testing.T, tl *Tool, args string, params map[string]string) tool.Result {
	t.Helper()
	decoded, err := tool.DecodeArgs(tl.Spec(), args)
	if err != nil {
		t.Fatalf("arguments %s refused: %v", args, err)
	}
	return tl.Execute(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Args: decoded, Session: tool.Session{Params: params}})
}

func schemaOf(t *testing.T, tl *Tool) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(tl.Spec().Parameters, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// at walks a decoded JSON value by keys.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestOpenAPIToolsAreNamedAsAgentsExeNamesThemWithTheirSchemas(t *testing.T) {
	t.Parallel()
	a := startAPI(t, "items.json", "/openapi.json")
	tools := load(t, agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: a.localhost() + "/openapi.json", Spec: a.localhost() + "/openapi.json", BaseURL: a.URL}, Options{})
	box := "openapi_localhost" + a.port() + "_"
	want := []string{box + "createItem", box + "getItem", box + "listItems", box + "reset"}
	if got := names(tools); !slices.Equal(got, want) {
		t.Fatalf("tools = %q, want %q", got, want)
	}
	create := tools[box+"createItem"]
	if create.Spec().Kind != session.ToolHTTP || !strings.Contains(create.Spec().Description, "Create a new item") || !strings.Contains(create.Spec().Description, "POST /items") {
		t.Errorf("createItem spec = %+v", create.Spec())
	}
	s := schemaOf(t, create)
	if at(s, "properties", "b", "properties", "name", "type") != "string" || !slices.Equal(at(s, "properties", "b", "required").([]any), []any{"name"}) {
		t.Errorf("createItem's body is not ItemInput resolved: %s", create.Spec().Parameters)
	}
	if req, _ := at(s, "required").([]any); !slices.Equal(req, []any{"b"}) || at(s, "additionalProperties") != false {
		t.Errorf("createItem's schema = %s, want b required and no other argument", create.Spec().Parameters)
	}
	get := schemaOf(t, tools[box+"getItem"])
	if req, _ := at(get, "required").([]any); !slices.Equal(req, []any{"p_itemId"}) || at(get, "properties", "p_itemId", "type") != "string" {
		t.Errorf("getItem's schema = %s", tools[box+"getItem"].Spec().Parameters)
	}
	if at(schemaOf(t, tools[box+"listItems"]), "properties", "p_limit", "description") != "Maximum number of items to return" {
		t.Errorf("listItems's schema = %s", tools[box+"listItems"].Spec().Parameters)
	}
}

func TestNamesAreSanitisedAsAgentsExeSanitisesThem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"pet.findByStatus", "pet_findByStatus"},
		{"users/pets/get", "users_pets_get"},
		{"2.0_getPet", "t2_0_getPet"},
		{"get-pet_v2", "get-pet_v2"},
		{"PetStore::getPet", "PetStore_getPet"},
		{"__a__b__", "t_a_b"},
		{"", "tool"},
		{"café", "caf"},
	} {
		if got := normalize(c.in); got != c.want {
			t.Errorf("normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	op := &operation{Method: "GET", Path: "/pets/{id}"}
	if got := openAPIToolName("api", op); got != "openapi_api_openapi_get_pets_id" {
		t.Errorf("an operation without an id is named %q", got)
	}
	for _, c := range []struct {
		box  agentfile.APIToolbox
		want string
	}{
		{agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: "http://localhost:8765/openapi.json"}, "localhost8765"},
		{agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: "https://api.example.com/v1/spec.json"}, "api_example_com"},
		{agentfile.APIToolbox{Kind: agentfile.APIPostgREST, SpecURL: "http://127.0.0.1:3000/"}, "t127_0_0_13000"},
		{agentfile.APIToolbox{Kind: agentfile.APIPostgREST, SpecURL: "spec.json", SpecIsFile: true}, "postgrest"},
		{agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: "http://localhost:8765/", Name: "shop"}, "shop"},
	} {
		if got := boxName(c.box); got != c.want {
			t.Errorf("boxName(%s) = %q, want %q", c.box.SpecURL, got, c.want)
		}
	}
}

// The request a call builds: path parameters substituted and escaped,
// the query encoded (a list as repeated values), the model's header, the
// JSON body, and the toolbox's headers, token and secrets, from the key
// store and from session params.
func TestACallSendsExactlyTheRequestItsArgumentsAndCredentialsSay(t *testing.T) {
	t.Parallel()
	a := startAPI(t, "shop.json", "/openapi.json")
	keys := map[string]string{"shop-key": "k3y-from-the-store\n"}
	box := agentfile.APIToolbox{
		Kind: agentfile.APIOpenAPI, SpecURL: a.URL + "/openapi.json", Spec: a.URL + "/openapi.json", BaseURL: a.URL + "/api/", Name: "shop",
		Headers: map[string]string{"X-Tenant": "{{param:TENANT}}", "X-Client": "agents"},
		Secrets: []agentfile.APISecret{
			{Source: agentfile.SecretAPIKey, Ref: "shop-key", Decoding: agentfile.DecodeClear, TrimNewlines: true, Header: "Authorization", Template: "Bearer {{secret}}"},
			{Source: agentfile.SecretParam, Ref: "SIGNATURE", Decoding: agentfile.DecodeBase64, Query: "sig"},
		},
	}
	tools := load(t, box, Options{Key: func(id string) (string, bool) { v, ok := keys[id]; return v, ok }})
	params := map[string]string{"TENANT": "acme", "SIGNATURE": "c2lnbmVkLXZhbHVl"} // "signed-value"

	res := call(t, tools["openapi_shop_orders_list"], `{"p_shopId": "north/east 1", "p_status": ["open", "shipped"], "p_X-Request-Id": "r-42"}`, params)
	if res.Status != session.ResultOK || !strings.HasPrefix(res.Text, "HTTP 200\n") {
		t.Fatalf("result = %+v", res)
	}
	res = call(t, tools["openapi_shop_orders_create"], `{"p_shopId": "s1", "b": {"lines": [{"sku": "A-1", "quantity": 2}], "note": null}}`, params)
	if res.Status != session.ResultOK {
		t.Fatalf("result = %+v", res)
	}
	got := a.requests()
	if len(got) != 2 {
		t.Fatalf("the server got %d requests, want 2", len(got))
	}
	list, create := got[0], got[1]
	if list.Method != "GET" || list.RawPath != "/api/shops/north%2Feast%201/orders" {
		t.Errorf("list: %s %s", list.Method, list.RawPath)
	}
	if q, _ := url.ParseQuery(list.RawQuery); !slices.Equal(q["status"], []string{"open", "shipped"}) || q.Get("sig") != "signed-value" || len(q) != 2 {
		t.Errorf("list query = %q", list.RawQuery)
	}
	for name, want := range map[string]string{"Authorization": "Bearer k3y-from-the-store", "X-Tenant": "acme", "X-Client": "agents", "X-Request-Id": "r-42"} {
		if v := list.Header.Get(name); v != want {
			t.Errorf("list header %s = %q, want %q", name, v, want)
		}
	}
	if list.Header.Get("Cookie") != "" || list.Body != "" {
		t.Errorf("list sent a cookie %q or a body %q", list.Header.Get("Cookie"), list.Body)
	}
	if create.Method != "POST" || create.RawPath != "/api/shops/s1/orders" || create.Header.Get("Content-Type") != "application/json" {
		t.Errorf("create: %s %s %s", create.Method, create.RawPath, create.Header.Get("Content-Type"))
	}
	if create.Body != `{"lines":[{"sku":"A-1","quantity":2}],"note":null}` {
		t.Errorf("create body = %s", create.Body)
	}
	if create.Header.Get("Authorization") != "Bearer k3y-from-the-store" {
		t.Errorf("create Authorization = %q", create.Header.Get("Authorization"))
	}
}

func TestSchemasHaveTheirRefsResolved(t *testing.T) {
	t.Parallel()
	a := startAPI(t, "shop.json", "/openapi.json")
	tools := load(t, agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: a.URL + "/openapi.json", Spec: a.URL + "/openapi.json", BaseURL: a.URL, Name: "shop"}, Options{})
	if got := names(tools); !slices.Equal(got, []string{"openapi_shop_openapi_put_shops_shopId_tree", "openapi_shop_orders_create", "openapi_shop_orders_list"}) {
		t.Fatalf("tools = %q", got)
	}
	create := schemaOf(t, tools["openapi_shop_orders_create"])
	if s := string(tools["openapi_shop_orders_create"].Spec().Parameters); strings.Contains(s, "$ref") || strings.Contains(s, "example") {
		t.Errorf("schema keeps a $ref or an OpenAPI keyword: %s", s)
	}
	line := at(create, "properties", "b", "properties", "lines", "items")
	if at(line, "properties", "sku", "description") != "An identifier" || at(line, "properties", "quantity", "minimum") != 1.0 {
		t.Errorf("an order line = %v", line)
	}
	if typ, _ := at(create, "properties", "b", "properties", "note", "type").([]any); !slices.Equal(typ, []any{"string", "null"}) {
		t.Errorf("a nullable note has type %v", typ)
	}
	if desc, _ := at(create, "properties", "b", "description").(string); desc != "The order to place" {
		t.Errorf("body description = %q", desc)
	}
	if at(create, "properties", "p_shopId", "description") != "The shop" {
		t.Errorf("shopId = %v", at(create, "properties", "p_shopId"))
	}
	list := schemaOf(t, tools["openapi_shop_orders_list"])
	if e, _ := at(list, "properties", "p_status", "items", "enum").([]any); !slices.Equal(e, []any{"open", "shipped"}) {
		t.Errorf("status = %v", at(list, "properties", "p_status"))
	}
	if at(list, "properties", "p_session") != nil {
		t.Errorf("a cookie parameter is offered: %v", list)
	}
	// A schema that contains itself ends in an open schema saying so.
	tree := schemaOf(t, tools["openapi_shop_openapi_put_shops_shopId_tree"])
	children := at(tree, "properties", "b", "properties", "children", "items")
	if d, _ := at(children, "description").(string); !strings.Contains(d, "Category") {
		t.Errorf("the recursive children = %v", children)
	}
}

func TestAnErrorStatusIsAToolErrorTheModelReadsAndNoSecretShows(t *testing.T) {
	t.Parallel()
	a := startAPI(t, "items.json", "/openapi.json")
	const token = "tok-very-secret"
	a.answer = `{"error": "not found", "you sent": "Bearer ` + token + `"}`
	a.status = http.StatusNotFound
	tools := load(t, agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: a.URL + "/openapi.json", Spec: a.URL + "/openapi.json", BaseURL: a.URL, Name: "items", Token: "{{param:TOKEN}}"}, Options{})
	res := call(t, tools["openapi_items_getItem"], `{"p_itemId": "nope"}`, map[string]string{"TOKEN": token})
	if res.Status != session.ResultError || !strings.HasPrefix(res.Text, "HTTP 404\n") || !strings.Contains(res.Text, "not found") {
		t.Errorf("result = %+v, want the 404 as an error", res)
	}
	if strings.Contains(res.Text, token) || !strings.Contains(res.Text, "[redacted]") {
		t.Errorf("the answer shows the token: %s", res.Text)
	}
	if got := a.requests(); len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer "+token {
		t.Errorf("requests = %+v", got)
	}

	res = call(t, tools["openapi_items_getItem"], `{"p_itemId": "x"}`, nil)
	if res.Status != session.ResultError || !strings.Contains(res.Text, "no value for the param TOKEN") {
		t.Errorf("without the param: %+v", res)
	}
	res = call(t, tools["openapi_items_getItem"], `{"p_itemId": ".."}`, map[string]string{"TOKEN": token})
	if res.Status != session.ResultError || len(a.requests()) != 1 {
		t.Errorf("a path climbing out of the operation: %+v", res)
	}
}

func TestAnAnswerIsCutAsABashToolsOutputIs(t *testing.T) {
	t.Parallel()
	a := startAPI(t, "items.json", "/openapi.json")
	a.answer = strings.Repeat("x", 100_000)
	tools := load(t, agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: a.URL + "/openapi.json", Spec: a.URL + "/openapi.json", BaseURL: a.URL, Name: "items"}, Options{})
	res := call(t, tools["openapi_items_listItems"], `{}`, nil)
	if len(res.Text) > maxResultBytes+200 || !strings.Contains(res.Text, "[output truncated:") {
		t.Errorf("answer of %d bytes, ending %q", len(res.Text), res.Text[len(res.Text)-100:])
	}
}

func TestAFilterKeepsTheEndpointsItMatches(t *testing.T) {
	t.Parallel()
	a := startAPI(t, "items.json", "/openapi.json")
	box := agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: a.URL + "/openapi.json", Spec: a.URL + "/openapi.json", BaseURL: a.URL, Name: "items",
		Filter: &agentfile.EndpointFilter{Op: "And", Args: []*agentfile.EndpointFilter{
			{Op: "PathPrefix", Arg: "/items"},
			{Op: "Not", Args: []*agentfile.EndpointFilter{{Op: "MethodEquals", Arg: "post"}}},
		}}}
	if got := names(load(t, box, Options{})); !slices.Equal(got, []string{"openapi_items_getItem", "openapi_items_listItems"}) {
		t.Errorf("tools = %q", got)
	}
	op := &operation{Method: "GET", Path: "/api/v1/users"}
	for _, c := range []struct {
		f    agentfile.EndpointFilter
		want bool
	}{
		{agentfile.EndpointFilter{Op: "PathPrefix", Arg: "/api"}, true},
		{agentfile.EndpointFilter{Op: "PathPrefix", Arg: "/ap"}, false},
		{agentfile.EndpointFilter{Op: "PathSuffix", Arg: "v1/users/"}, true},
		{agentfile.EndpointFilter{Op: "PathEqual", Arg: "api/v1/users"}, true},
		{agentfile.EndpointFilter{Op: "PathContains", Arg: "v1/us"}, true},
		{agentfile.EndpointFilter{Op: "OperationIdEquals", Arg: ""}, false},
		{agentfile.EndpointFilter{Op: "AlwaysFalse"}, false},
	} {
		if got := matches(&c.f, op, ""); got != c.want {
			t.Errorf("%s %q on %s = %v, want %v", c.f.Op, c.f.Arg, op.Path, got, c.want)
		}
	}
}

func TestADescriptionIsReadFromAFile(t *testing.T) {
	t.Parallel()
	path, _ := filepath.Abs(filepath.Join("testdata", "items.json"))
	box := agentfile.APIToolbox{Kind: agentfile.APIOpenAPI, SpecURL: "file://" + path, Spec: path, SpecIsFile: true, BaseURL: "http://localhost:9"}
	if got := names(load(t, box, Options{})); len(got) != 4 || got[0] != "openapi_openapi_createItem" {
		t.Errorf("tools = %q", got)
	}
	if _, err := Load(context.Background(), box, Options{Stored: true}); err == nil || !strings.Contains(err.Error(), "stored agent") {
		t.Errorf("a stored agent's file description: %v", err)
	}
	if _, err := Load(context.Background(), box, Options{Stored: true, Within: []string{filepath.Dir(path)}}); err != nil {
		t.Errorf("a stored agent's file description in an allowed folder: %v", err)
	}
}

// A description that cannot be read is an error saying why; the toolbox
// offers nothing, and nothing panics.
func TestADescriptionThatDoesNotReadIsAnError(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := startAPI(t, "items.json", "/openapi.json")
	a.status = http.StatusNotFound
	for _, c := range []struct {
		name string
		box  agentfile.APIToolbox
		want string
	}{
		{"unreachable", agentfile.APIToolbox{SpecURL: gone.URL + "/openapi.json", Spec: gone.URL + "/openapi.json"}, "connection refused"},
		{"not found", agentfile.APIToolbox{SpecURL: a.URL + "/nothing.json", Spec: a.URL + "/nothing.json"}, "answered HTTP 404"},
		{"missing file", agentfile.APIToolbox{SpecURL: "nope.json", Spec: filepath.Join(dir, "nope.json"), SpecIsFile: true}, "no such file"},
		{"broken JSON", agentfile.APIToolbox{SpecURL: "broken.json", Spec: write("broken.json", `{"openapi": "3.0.0", "paths": {`), SpecIsFile: true}, "description broken.json"},
		{"no version", agentfile.APIToolbox{SpecURL: "other.json", Spec: write("other.json", `{"hello": "world"}`), SpecIsFile: true}, "not an OpenAPI"},
		{"missing key", agentfile.APIToolbox{SpecURL: a.URL + "/openapi.json", Spec: a.URL + "/openapi.json", Secrets: []agentfile.APISecret{{Field: "contents.openApiToolboxes[0].contents.Secrets[0]", Source: agentfile.SecretAPIKey, Ref: "nokey"}}}, `Secrets[0]: the server has no key "nokey"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.box.Kind, c.box.BaseURL = agentfile.APIOpenAPI, "http://localhost:9"
			tools, err := Load(context.Background(), c.box, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) || len(tools) != 0 {
				t.Errorf("err = %v (tools %d), want %q", err, len(tools), c.want)
			}
		})
	}
}

func TestPostgRESTToolsAreShapedAsAgentsExeShapesThem(t *testing.T) {
	t.Parallel()
	a := startAPI(t, "tasks-postgrest.json", "/")
	box := agentfile.APIToolbox{Kind: agentfile.APIPostgREST, SpecURL: a.localhost() + "/", Spec: a.localhost() + "/", BaseURL: a.URL,
		AllowedMethods: []string{"GET", "POST", "PATCH"}, Filter: &agentfile.EndpointFilter{Op: "PathPrefix", Arg: "/tasks"}}
	tools := load(t, box, Options{})
	p := "postgrest_localhost" + a.port() + "_"
	if got := names(tools); !slices.Equal(got, []string{p + "get_tasks", p + "get_tasks_id", p + "patch_tasks_id", p + "post_tasks"}) {
		t.Fatalf("tools = %q", got)
	}
	get := schemaOf(t, tools[p+"get_tasks"])
	for _, k := range [][]string{
		{"filters", "properties", "id", "type"}, {"filters", "properties", "title", "type"}, {"filters", "properties", "done", "type"},
		{"subset", "properties", "columns", "type"}, {"ranking", "properties", "order", "type"},
	} {
		if got := at(get, append([]string{"properties"}, k...)...); got != "string" {
			t.Errorf("%v = %v", k, got)
		}
	}
	if at(get, "properties", "subset", "properties", "limit", "type") != "integer" || at(get, "properties", "body") != nil || at(get, "required") != nil {
		t.Errorf("get_tasks = %s", tools[p+"get_tasks"].Spec().Parameters)
	}
	if d := tools[p+"get_tasks"].Spec().Description; !strings.Contains(d, "List tasks:\nRead rows from the tasks table\nTable: tasks") {
		t.Errorf("description = %q", d)
	}
	post := schemaOf(t, tools[p+"post_tasks"])
	if at(post, "properties", "body", "properties", "title", "type") != "string" || at(post, "properties", "body", "required") != nil {
		t.Errorf("post_tasks = %s", tools[p+"post_tasks"].Spec().Parameters)
	}

	res := call(t, tools[p+"get_tasks"], `{"filters": {"done": "is.false", "id": "gt.1"}, "subset": {"limit": 10, "offset": 20, "columns": "id,title"}, "ranking": {"order": "id.desc"}}`, nil)
	if res.Status != session.ResultOK {
		t.Fatalf("get: %+v", res)
	}
	call(t, tools[p+"post_tasks"], `{"body": {"title": "write tests", "done": false}}`, nil)
	call(t, tools[p+"patch_tasks_id"], `{"p_id": 3, "body": {"done": true}}`, nil)
	got := a.requests()
	if len(got) != 3 {
		t.Fatalf("requests = %+v", got)
	}
	if q, _ := url.ParseQuery(got[0].RawQuery); got[0].Method != "GET" || got[0].RawPath != "/tasks" ||
		q.Get("done") != "is.false" || q.Get("id") != "gt.1" || q.Get("limit") != "10" || q.Get("offset") != "20" || q.Get("select") != "id,title" || q.Get("order") != "id.desc" || len(q) != 6 {
		t.Errorf("get sent %s %s?%s", got[0].Method, got[0].RawPath, got[0].RawQuery)
	}
	if got[1].Method != "POST" || got[1].RawPath != "/tasks" || got[1].Body != `{"title":"write tests","done":false}` {
		t.Errorf("post sent %+v", got[1])
	}
	if got[2].Method != "PATCH" || got[2].RawPath != "/tasks/3" || got[2].Body != `{"done":true}` {
		t.Errorf("patch sent %+v", got[2])
	}
}

func TestPostgRESTOffersReadingMethodsByDefault(t *testing.T) {
	t.Parallel()
	a := startAPI(t, "tasks-postgrest.json", "/")
	tools := load(t, agentfile.APIToolbox{Kind: agentfile.APIPostgREST, SpecURL: a.URL + "/", Spec: a.URL + "/", BaseURL: a.URL, Name: "db"}, Options{})
	if got := names(tools); !slices.Equal(got, []string{"postgrest_db_get_tasks", "postgrest_db_get_tasks_id"}) {
		t.Errorf("tools = %q", got)
	}
}
