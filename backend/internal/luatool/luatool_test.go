package luatool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// luaBox is a toolbox with a minute's limit, no file, host or tool.
func luaBox() agentfile.BuiltinToolbox {
	return agentfile.BuiltinToolbox{Kind: agentfile.LuaToolboxKind, Name: "lua", Description: "test lua.",
		Sandbox: agentfile.FileSandbox{Predicate: agentfile.PathPredicate{Kind: agentfile.PredAlwaysDeny}},
		Lua:     agentfile.LuaLimits{MaxMemoryMB: 256, Timeout: time.Minute}}
}

// exec runs args through the tool as the model's call would.
func exec(t *testing.T, tl tool.Tool, args map[string]any) tool.Result {
	t.Helper()
	text, _ := json.Marshal(args)
	a, err := tool.DecodeArgs(tl.Spec(), string(text))
	if err != nil {
		t.Fatalf("decode %s: %v", text, err)
	}
	return tl.Execute(context.Background(), tool.Call{ID: "c1", Name: tl.Spec().Name, Args: a, Session: tool.Session{ID: "s1"}})
}

// values runs script and returns its values' JSON, failing the test on
// an error result.
func values(t *testing.T, tl tool.Tool, script string) string {
	t.Helper()
	res := exec(t, tl, map[string]any{"script": script})
	if res.Status != session.ResultOK {
		t.Fatalf("script %q failed: %s", script, res.Text)
	}
	var answer struct {
		Values json.RawMessage `json:"values"`
	}
	if err := json.Unmarshal([]byte(res.Text), &answer); err != nil {
		t.Fatalf("answer %s: %v", res.Text, err)
	}
	return string(answer.Values)
}

// failure runs script and returns its error text, failing the test when
// it succeeds.
func failure(t *testing.T, tl tool.Tool, script string) string {
	t.Helper()
	res := exec(t, tl, map[string]any{"script": script})
	if res.Status != session.ResultError {
		t.Fatalf("script %q = %s %s, want an error", script, res.Status, res.Text)
	}
	return res.Text
}

func TestSpecAndValues(t *testing.T) {
	t.Parallel()
	tl := New(luaBox(), t.TempDir(), nil)
	if s := tl.Spec(); s.Name != "lua_lua_execute" || s.Description != "test lua." || tool.CheckSchema(s.Parameters) != nil {
		t.Errorf("spec = %+v", s)
	}
	for script, want := range map[string]string{
		`return 1, "a", true, nil`: `[1,"a",true,null]`,
		`return {1, 2, {x = 1.5}}`: `[[1,2,{"x":1.5}]]`,
		`return {}`:                `[{}]`,
		`print("hi", 2) return`:    `[]`,
		`local t = {} for i = 1, 3 do t[#t+1] = i * i end return table.concat(t, ",")`: `["1,4,9"]`,
	} {
		if got := values(t, tl, script); got != want {
			t.Errorf("%s → %s, want %s", script, got, want)
		}
	}
	res := exec(t, tl, map[string]any{"script": `print("hi", 2)`})
	if !strings.Contains(res.Text, `"output":"hi\t2\n"`) {
		t.Errorf("print: %s", res.Text)
	}
}

func TestModules(t *testing.T) {
	t.Parallel()
	tl := New(luaBox(), t.TempDir(), nil)
	for script, want := range map[string]string{
		`return json.encode({a = {1, 2}, b = "x"})`:                                              `["{\"a\":[1,2],\"b\":\"x\"}"]`,
		`local v = json.decode('{"n": 3, "l": [true, "s"]}') return v.n, v.l[2]`:                 `[3,"s"]`,
		`return require("json") == json, require("tools") == tools`:                              `[true,true]`,
		`return text.split("a,b,,c", ",")`:                                                       `[["a","b","","c"]]`,
		`return text.trim("  x "), text.upper("ab"), text.lower("AB")`:                           `["x","AB","ab"]`,
		`return text.find("héllo wörld", "wö")`:                                                  `[7,8]`,
		`return text.find("abc", "z")`:                                                           `[null]`,
		`return text.gsub("a.b.c", ".", "-")`:                                                    `["a-b-c",2]`,
		`return text.startswith("hello", "he"), text.endswith("hello", "lo"), text.len("héllo")`: `[true,true,5]`,
		`return text.sub("héllo", 2, 3), text.sub("héllo", -2)`:                                  `["él","lo"]`,
		`return time.format(86400 * 365), time.format(0, "%Y/%m/%d %H:%M")`:                      `["1971-01-01T00:00:00Z","1970/01/01 00:00"]`,
		`return time.diff(10, 4), time.now() > 1700000000`:                                       `[6,true]`,
		`time.sleep(0.01) return "slept"`:                                                        `["slept"]`,
	} {
		if got := values(t, tl, script); got != want {
			t.Errorf("%s → %s, want %s", script, got, want)
		}
	}
	if got := failure(t, tl, `return json.decode("{nope")`); !strings.Contains(got, "json.decode") {
		t.Errorf("bad json: %s", got)
	}
}

func TestFilesWithinTheSandbox(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inside := filepath.Join(dir, "data")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("secret"), 0o644)
	box := luaBox()
	box.Sandbox = agentfile.FileSandbox{Predicate: agentfile.PathPredicate{Kind: agentfile.PredDirectoryRecursive, Path: inside}, MaxFileSize: 1 << 10}
	tl := New(box, dir, nil)

	got := values(t, tl, `
		assert(fs.write("data/a.txt", "one\ntwo\n"))
		assert(fs.mkdir("data/sub"))
		assert(fs.patch("data/a.txt", "@@ -1,2 +1,2 @@\n one\n-two\n+three\n"))
		local missing, why = fs.read("data/none.txt")
		return fs.read("data/a.txt"), fs.list("data"), fs.exists("data/a.txt"), fs.isdir("data/sub"), fs.isfile("data/sub"), missing, why ~= nil`)
	if want := `["one\nthree\n",["a.txt","sub"],true,true,false,null,true]`; got != want {
		t.Errorf("fs → %s, want %s", got, want)
	}
	for _, script := range []string{
		`return fs.read("secret.txt")`,
		`return fs.read("data/../secret.txt")`,
		`return fs.write("/tmp/x.txt", "x")`,
		`return fs.exists("secret.txt")`,
		`return fs.list(".")`,
	} {
		if got := failure(t, tl, script); !strings.Contains(got, "sandbox: access denied") {
			t.Errorf("%s → %s, want access denied", script, got)
		}
	}
	if got := failure(t, tl, `return fs.write("data/big.txt", string.rep("x", 2000))`); !strings.Contains(got, "maximum of 1024 bytes") {
		t.Errorf("large write → %s", got)
	}
	// Without a sandbox, no path at all.
	if got := failure(t, New(luaBox(), dir, nil), `return fs.read("data/a.txt")`); !strings.Contains(got, "sandbox: access denied") {
		t.Errorf("no sandbox → %s", got)
	}
}

func TestHTTPOnlyToAllowedHosts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Echo", r.Header.Get("X-Test"))
		body := make([]byte, 64)
		n, _ := r.Body.Read(body)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, body[:n])
	}))
	defer srv.Close()
	box := luaBox()
	box.Lua.AllowedHosts = []string{"127.0.0.1"}
	tl := New(box, t.TempDir(), nil)
	got := values(t, tl, fmt.Sprintf(`
		local a = http.get(%[1]q .. "/g", {headers = {["X-Test"] = "yes"}})
		local b = http.post(%[1]q .. "/p", "payload")
		local c = http.request{method = "put", url = %[1]q .. "/r", body = "b"}
		return a.status, a.body, a.headers["x-echo"], b.body, c.body`, srv.URL))
	if want := `[200,"GET /g ","yes","POST /p payload","PUT /r b"]`; got != want {
		t.Errorf("http → %s, want %s", got, want)
	}
	if got := failure(t, tl, `return http.get("http://example.com/")`); !strings.Contains(got, `sandbox: host "example.com" is not allowed`) {
		t.Errorf("other host → %s", got)
	}
	if got := failure(t, New(luaBox(), t.TempDir(), nil), fmt.Sprintf(`return http.get(%q)`, srv.URL)); !strings.Contains(got, "allows no host") {
		t.Errorf("no hosts → %s", got)
	}
}

// echo is a server-run tool that answers its arguments.
type echo struct{ mode session.CallMode }

func (echo) Spec() tool.Spec {
	return tool.Spec{Name: "echo", Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)}
}
func (e echo) Mode() session.CallMode { return e.mode }
func (echo) Execute(_ context.Context, call tool.Call) tool.Result {
	if call.Args.String("text") == "fail" {
		return tool.Failed("asked to fail")
	}
	return tool.OK(`{"echo":` + string(call.Args.JSON()) + `,"id":"` + call.ID + `"}`)
}

func TestToolsCallOnlyAllowedTools(t *testing.T) {
	t.Parallel()
	resolve := func(_ context.Context, _ tool.Call, name string) (tool.Tool, error) {
		switch name {
		case "echo":
			return echo{mode: session.CallAttached}, nil
		case "client":
			return echo{mode: session.CallDeferred}, nil
		}
		return nil, ErrNoSuchTool
	}
	box := luaBox()
	box.Lua.AllowedTools = []string{"echo", "client", "ghost"}
	tl := New(box, t.TempDir(), resolve)
	got := values(t, tl, `
		local ok = tools.call("echo", {text = "hi"})
		local bad = tools.call("echo", {text = "fail"})
		local args = tools.call("echo", {nope = 1})
		local denied = tools.call("bash_rm", {})
		local ghost = tools.call("ghost", {})
		local client = tools.call("client", {text = "x"})
		return tools.list(), ok.status, json.decode(ok.result_txt), bad.status, bad.error, args.status,
			denied.status, ghost.status, client.status`)
	want := `[["echo","client","ghost"],"ok",{"echo":{"text":"hi"},"id":"c1.lua1"},"error","asked to fail","error","not-allowed","not-found","error"]`
	if got != want {
		t.Errorf("tools →\n%s\nwant\n%s", got, want)
	}
	if got := values(t, New(luaBox(), t.TempDir(), resolve), `local r = tools.call("echo", {text = "x"}) return r.status, r.error`); !strings.Contains(got, "allows no tool") {
		t.Errorf("no tools → %s", got)
	}
}

func TestSandboxedState(t *testing.T) {
	t.Parallel()
	tl := New(luaBox(), t.TempDir(), nil)
	got := values(t, tl, `return type(os), type(io), type(debug), type(package), type(dofile), type(loadfile), type(module), type(string.rep)`)
	if want := `["nil","nil","nil","nil","nil","nil","nil","function"]`; got != want {
		t.Errorf("globals = %s, want %s", got, want)
	}
	if got := failure(t, tl, `return require("os")`); !strings.Contains(got, `module "os" not found`) {
		t.Errorf("require os → %s", got)
	}
	if got := failure(t, tl, `return string.rep("x", 1e12)`); !strings.Contains(got, "string.rep") {
		t.Errorf("huge rep → %s", got)
	}
	if got := failure(t, tl, `local function f() return 1 + f() end return f()`); !strings.Contains(got, "runtime error") {
		t.Errorf("endless recursion → %s", got)
	}
}

func TestErrorsAreToolErrors(t *testing.T) {
	t.Parallel()
	tl := New(luaBox(), t.TempDir(), nil)
	if got := failure(t, tl, `error("boom")`); !strings.HasPrefix(got, "runtime error: ") || !strings.Contains(got, "boom") {
		t.Errorf("error() → %s", got)
	}
	if got := failure(t, tl, `return (`); !strings.HasPrefix(got, "syntax error: ") {
		t.Errorf("syntax → %s", got)
	}
	if got := failure(t, tl, `return print`); !strings.Contains(got, "no JSON form") {
		t.Errorf("function value → %s", got)
	}
	res := exec(t, tl, map[string]any{"script": `while true do end`, "timeout": 0.2})
	if res.Status != session.ResultError || !strings.HasPrefix(res.Text, "timeout: ") {
		t.Errorf("endless loop → %s %s", res.Status, res.Text)
	}
	res = exec(t, tl, map[string]any{"script": `local co = coroutine.create(function() while true do end end) return coroutine.resume(co)`, "timeout": 0.2})
	if res.Status != session.ResultError || !strings.HasPrefix(res.Text, "timeout: ") {
		t.Errorf("endless coroutine → %s %s", res.Status, res.Text)
	}
	res = exec(t, tl, map[string]any{"script": `time.sleep(100)`, "timeout": 0.2})
	if res.Status != session.ResultError || !strings.HasPrefix(res.Text, "timeout: ") {
		t.Errorf("long sleep → %s %s", res.Status, res.Text)
	}
}

func TestMemoryLimitStopsTheScript(t *testing.T) {
	t.Parallel()
	box := luaBox()
	box.Lua.MaxMemoryMB = 32
	tl := New(box, t.TempDir(), nil)
	got := failure(t, tl, `local t = {} local i = 0 while true do i = i + 1 t[i] = {i, tostring(i)} end`)
	if !strings.HasPrefix(got, "memory: ") {
		t.Errorf("growing table → %s", got)
	}
	// Garbage is not growth: a script that makes far more than the limit
	// but keeps little runs to its end.
	if got := values(t, tl, `local n = 0 for i = 1, 300000 do local s = string.rep("x", 200) .. i n = n + #s end return n > 0`); got != `[true]` {
		t.Errorf("garbage → %s", got)
	}
}

// BenchmarkExecute is one call of a trivial script: a fresh state with
// its libraries and modules, the script, the answer.
func BenchmarkExecute(b *testing.B) {
	tl := New(luaBox(), b.TempDir(), nil)
	args, err := tool.DecodeArgs(tl.Spec(), `{"script": "return json.encode({n = 1})"}`)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if res := tl.Execute(context.Background(), tool.Call{ID: "c1", Args: args}); res.Status != session.ResultOK {
			b.Fatal(res.Text)
		}
	}
}
