package mcptools_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	"go.uber.org/goleak"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/tools/mcpfake"
)

// fakeBinary is the offline MCP server, built once for the tests.
var fakeBinary string

func TestMain(m *testing.M) {
	// The test binary is the sandbox's launcher, as the server's is.
	sandbox.Main()
	dir, err := os.MkdirTemp("", "mcpfake")
	if err != nil {
		panic(err)
	}
	fakeBinary = filepath.Join(dir, "mcpfake")
	if out, err := exec.Command("go", "build", "-o", fakeBinary, "github.com/agents-os/agents/tools/cmd/mcpfake").CombinedOutput(); err != nil {
		panic("build mcpfake: " + err.Error() + "\n" + string(out))
	}
	// Every test's servers and calls end with it.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

func stdioServer(t *testing.T, pool *mcptools.Pool, executable string) *mcptools.Toolbox {
	t.Helper()
	agent := &agentfile.Agent{File: filepath.Join(t.TempDir(), "agent.json")}
	return pool.Toolbox(agentfile.MCPServer{Kind: agentfile.MCPKindSimpleBinary, Name: "fake", Executable: executable}, agent)
}

func find(t *testing.T, tools []tool.Tool, name string) tool.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func call(t *testing.T, tl tool.Tool, args string, progress func(string)) tool.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if progress == nil {
		progress = func(string) {}
	}
	decoded, err := tool.DecodeArgs(tl.Spec(), args)
	if err != nil {
		return tool.Failed(err.Error())
	}
	return tl.Execute(ctx, tool.Call{ID: "c1", Args: decoded, Progress: progress})
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestAStdioServersToolsAreOfferedAndCalledWithProgress(t *testing.T) {
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	box := stdioServer(t, pool, fakeBinary)
	if st := box.Status(nil); st.State != mcptools.StateIdle {
		t.Fatalf("state before first need = %s, want idle", st.State)
	}
	tools, err := box.Tools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	echo := find(t, tools, "mcp_fake_echo")
	if spec := echo.Spec(); spec.Kind != session.ToolMCP || !strings.Contains(string(spec.Parameters), `"text"`) {
		t.Errorf("spec = %+v", spec)
	}
	if res := call(t, echo, `{"text":"hello"}`, nil); res.Status != session.ResultOK || res.Text != "hello" {
		t.Errorf("echo = %+v", res)
	}
	var mu sync.Mutex
	var lines []string
	res := call(t, find(t, tools, "mcp_fake_steps"), `{"count":2}`, func(l string) {
		mu.Lock()
		lines = append(lines, l)
		mu.Unlock()
	})
	if res.Text != "all steps done" {
		t.Errorf("steps = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"step 1 of 2 (1/2)", "step 2 of 2 (2/2)"}; !slices.Equal(lines, want) {
		t.Errorf("progress = %q, want %q", lines, want)
	}
}

func TestACrashedServerIsRestartedAndNoneOutlivesThePool(t *testing.T) {
	pool := mcptools.NewPool(mcptools.Options{})
	box := stdioServer(t, pool, fakeBinary)
	tools, err := box.Tools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := strconv.Atoi(call(t, find(t, tools, "mcp_fake_pid"), "", nil).Text)
	if res := call(t, find(t, tools, "mcp_fake_crash"), "", nil); res.Status != session.ResultError {
		t.Errorf("crash = %+v, want an error result", res)
	}
	// The server is seen down, then the next call waits for the restart.
	eventually.Holds(5*time.Second, func() bool { return box.Status(nil).State != mcptools.StateRunning })
	after, _ := strconv.Atoi(call(t, find(t, tools, "mcp_fake_pid"), "", nil).Text)
	if after == 0 || after == before {
		t.Fatalf("pid after the crash = %d, before %d: want a new server", after, before)
	}
	if alive(before) {
		t.Errorf("the crashed server %d still runs", before)
	}
	pool.Close()
	if alive(after) {
		t.Errorf("server %d still runs after the pool closed", after)
	}
}

func TestAChangedToolListIsAnnounced(t *testing.T) {
	var changed atomic.Int32
	pool := mcptools.NewPool(mcptools.Options{Changed: func() { changed.Add(1) }})
	defer pool.Close()
	box := stdioServer(t, pool, fakeBinary)
	tools, err := box.Tools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	call(t, find(t, tools, "mcp_fake_grow"), "", nil)
	eventually.Within(t, 10*time.Second, "a change announced", func() bool { return changed.Load() > 0 })
	find(t, box.Known(nil), "mcp_fake_extra")
}

func TestAServerThatDoesNotStartIsAFailedStatus(t *testing.T) {
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	box := stdioServer(t, pool, filepath.Join(t.TempDir(), "missing"))
	if _, err := box.Tools(context.Background(), nil); err == nil {
		t.Fatal("Tools of a missing program: no error")
	}
	st := box.Status(nil)
	if st.State != mcptools.StateFailed || st.Error == "" {
		t.Errorf("status = %+v, want failed with a reason", st)
	}
}

func TestAnHTTPServersHeadersComeFromSessionParams(t *testing.T) {
	srv := httptest.NewServer(mcpfake.Handler("s3cret"))
	defer srv.Close()
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	box := pool.Toolbox(agentfile.MCPServer{Kind: agentfile.MCPKindStreamableHTTP, Name: "web", URL: srv.URL,
		Headers: map[string]string{"Authorization": "Bearer {{param:TOKEN}}"}}, &agentfile.Agent{File: "/a/agent.json"})

	if _, err := box.Tools(context.Background(), nil); !errors.Is(err, mcptools.ErrParamsMissing) {
		t.Errorf("Tools without the param: %v, want ErrParamsMissing", err)
	}
	if _, err := box.Tools(context.Background(), map[string]string{"TOKEN": "wrong"}); err == nil {
		t.Error("Tools with a wrong token: no error")
	}
	tools, err := box.Tools(context.Background(), map[string]string{"TOKEN": "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if res := call(t, find(t, tools, "mcp_web_echo"), `{"text":"over http"}`, nil); res.Text != "over http" {
		t.Errorf("echo = %+v", res)
	}
	var got atomic.Int32
	call(t, find(t, tools, "mcp_web_steps"), `{"count":1}`, func(string) { got.Add(1) })
	if got.Load() != 1 {
		t.Errorf("progress lines over HTTP = %d, want 1", got.Load())
	}
}

func pidOf(t *testing.T, box *mcptools.Toolbox) int {
	t.Helper()
	tools, err := box.Tools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(call(t, find(t, tools, mcptools.ToolName(box.Name(), "pid")), "", nil).Text)
	if pid == 0 {
		t.Fatalf("no pid from %s", box.Name())
	}
	return pid
}

func TestRetainStopsOnlyTheServersNoToolboxDeclares(t *testing.T) {
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	agent := &agentfile.Agent{File: filepath.Join(t.TempDir(), "agent.json")}
	decl := func(name string) agentfile.MCPServer {
		return agentfile.MCPServer{Kind: agentfile.MCPKindSimpleBinary, Name: name, Executable: fakeBinary}
	}
	kept := pidOf(t, pool.Toolbox(decl("kept"), agent))
	dropped := pidOf(t, pool.Toolbox(decl("dropped"), agent))

	// As after a reload: the toolboxes are new, their declarations those
	// of the agent files as they are now.
	again := pool.Toolbox(decl("kept"), agent)
	pool.Retain([]*mcptools.Toolbox{again})
	if !eventually.Holds(10*time.Second, func() bool { return !alive(dropped) }) {
		t.Errorf("server %d, declared no more, still runs", dropped)
	}
	if st := again.Status(nil); st.State != mcptools.StateRunning {
		t.Errorf("the server still declared is %s, want running", st.State)
	}
	if pid := pidOf(t, again); pid != kept {
		t.Errorf("the server still declared is now %d, want %d untouched", pid, kept)
	}
}

func TestRetainKeepsAnHTTPServerReachedWithSessionParams(t *testing.T) {
	srv := httptest.NewServer(mcpfake.Handler("s3cret"))
	defer srv.Close()
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	decl := agentfile.MCPServer{Kind: agentfile.MCPKindStreamableHTTP, Name: "web", URL: srv.URL,
		Headers: map[string]string{"Authorization": "Bearer {{param:TOKEN}}"}}
	agent := &agentfile.Agent{File: "/a/agent.json"}
	params := map[string]string{"TOKEN": "s3cret"}
	if _, err := pool.Toolbox(decl, agent).Tools(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	again := pool.Toolbox(decl, agent)
	pool.Retain([]*mcptools.Toolbox{again})
	if st := again.Status(params); st.State != mcptools.StateRunning {
		t.Errorf("the server still declared is %s, want running", st.State)
	}
	pool.Retain(nil)
	if st := again.Status(params); st.State != mcptools.StateIdle {
		t.Errorf("the server declared no more is %s, want idle: a new one to start on need", st.State)
	}
}
