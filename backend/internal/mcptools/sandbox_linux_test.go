package mcptools_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// confinedLayout is a server's files as the sandbox sees them: a data
// folder with the database, the sessions' and the MCP servers' folders,
// a keys file, an agent's folder, and a folder outside all of them.
type confinedLayout struct {
	sb                              *sandbox.Sandbox
	data, db, keys, agents, outside string
}

func newConfinedLayout(t *testing.T) confinedLayout {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := confinedLayout{
		data:    filepath.Join(root, "data"),
		db:      filepath.Join(root, "data", "agents.db"),
		keys:    filepath.Join(root, "config", "keys.json"),
		agents:  filepath.Join(root, "agents"),
		outside: filepath.Join(root, "outside"),
	}
	for _, dir := range []string{l.data, filepath.Dir(l.keys), l.agents, l.outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{filepath.Join(l.data, "work", "s1"), filepath.Join(l.outside, "out")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{l.db, l.keys, filepath.Join(l.outside, "notes.txt"), filepath.Join(l.data, "work", "s1", "mine")} {
		if err := os.WriteFile(file, []byte("the secret\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l.sb = sandbox.New(sandbox.Options{
		Launcher: exe, WorkDir: filepath.Join(l.data, "work"), ServersDir: filepath.Join(l.data, "mcp"),
		Protect: []string{l.data, l.db, l.keys},
	})
	if st := l.sb.Status(); !st.Available {
		t.Skipf("the kernel cannot confine here: %s", st.Problem)
	}
	return l
}

// tools starts the fake server as agent declares it, confined by p
// (nil: unconfined), and returns its tools.
func (l confinedLayout) tools(t *testing.T, pool *mcptools.Pool, agent string, p *sandbox.Policy) []tool.Tool {
	t.Helper()
	file := &agentfile.Agent{Slug: agent, File: filepath.Join(l.agents, agent+".json")}
	box := pool.Toolbox(agentfile.MCPServer{Kind: agentfile.MCPKindSimpleBinary, Name: "fake", Executable: fakeBinary}, file).Confined(p)
	tools, err := box.Tools(context.Background(), nil)
	if err != nil {
		t.Fatalf("%s's server: %v", agent, err)
	}
	return tools
}

// TestAConfinedServerIsStoppedAndAllowedWhatItsAgentAllows starts the
// fake MCP server confined, and has it read the server's database and
// keys, write outside its folder and connect with the network off: each
// is refused, and the call's error says what the sandbox allows. It
// writes in its own folder, which is its HOME. Under an agent that
// allows the write, a folder to read and the network, each works; under
// one whose sandbox is off, the server runs as before the sandbox.
func TestAConfinedServerIsStoppedAndAllowedWhatItsAgentAllows(t *testing.T) {
	l := newConfinedLayout(t)
	pool := mcptools.NewPool(mcptools.Options{Sandbox: l.sb})
	defer pool.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello from the network\n"))
			c.Close()
		}
	}()
	address := ln.Addr().String()

	jailed := l.tools(t, pool, "jailed", &sandbox.Policy{})
	home := filepath.Join(l.data, "mcp", "jailed", "fake")
	if res := call(t, find(t, jailed, "mcp_fake_env"), `{"name": "HOME"}`, nil); res.Text != home {
		t.Errorf("HOME = %q, want the server's folder %s", res.Text, home)
	}
	if res := call(t, find(t, jailed, "mcp_fake_write"), `{"path": "`+filepath.Join(home, "cache")+`", "text": "kept"}`, nil); res.Status != session.ResultOK {
		t.Errorf("a write in the server's own folder: %+v", res)
	}
	for _, tc := range []struct{ name, tool, args, says string }{
		{"reads the database", "read", `{"path": "` + l.db + `"}`, "permission denied"},
		{"reads the keys", "read", `{"path": "` + l.keys + `"}`, "permission denied"},
		{"reads a session's folder", "read", `{"path": "` + filepath.Join(l.data, "work", "s1", "mine") + `"}`, "permission denied"},
		{"reads outside what it may", "read", `{"path": "` + filepath.Join(l.outside, "notes.txt") + `"}`, "permission denied"},
		{"writes outside its folder", "write", `{"path": "` + filepath.Join(l.outside, "x") + `", "text": "x"}`, "permission denied"},
		{"writes in its agent's folder", "write", `{"path": "` + filepath.Join(l.agents, "x") + `", "text": "x"}`, "permission denied"},
		{"connects with the network off", "connect", `{"address": "` + address + `"}`, "connect"},
	} {
		t.Run("stopped/"+tc.name, func(t *testing.T) {
			res := call(t, find(t, jailed, "mcp_fake_"+tc.tool), tc.args, nil)
			if res.Status != session.ResultError {
				t.Fatalf("the server was not stopped: %+v", res)
			}
			if !strings.Contains(res.Text, tc.says) || !strings.Contains(res.Text, "mcp_fake_"+tc.tool+" runs in a sandbox: it may write only in "+home) {
				t.Errorf("the error does not say what stopped the server (%q) and what the sandbox allows:\n%s", tc.says, res.Text)
			}
			if strings.Contains(res.Text, "the secret") {
				t.Errorf("the server read what it may not:\n%s", res.Text)
			}
		})
	}
	for _, f := range []string{filepath.Join(l.outside, "x"), filepath.Join(l.agents, "x")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("a stopped server wrote %s", f)
		}
	}

	trusted := l.tools(t, pool, "trusted", &sandbox.Policy{Network: true, Read: []string{l.outside + "/notes.txt"}, Write: []string{filepath.Join(l.outside, "out")}})
	for _, tc := range []struct{ name, tool, args, says string }{
		{"writes where its agent allows", "write", `{"path": "` + filepath.Join(l.outside, "out", "y") + `", "text": "y"}`, "wrote"},
		{"reads what its agent allows", "read", `{"path": "` + filepath.Join(l.outside, "notes.txt") + `"}`, "the secret"},
		{"connects with the network on", "connect", `{"address": "` + address + `"}`, "hello from the network"},
	} {
		t.Run("allowed/"+tc.name, func(t *testing.T) {
			if res := call(t, find(t, trusted, "mcp_fake_"+tc.tool), tc.args, nil); res.Status != session.ResultOK || !strings.Contains(res.Text, tc.says) {
				t.Errorf("the allowed server = %+v, want ok saying %q", res, tc.says)
			}
		})
	}
	// Still, never the server's own files.
	if res := call(t, find(t, trusted, "mcp_fake_read"), `{"path": "`+l.db+`"}`, nil); res.Status != session.ResultError {
		t.Errorf("a trusted server read the database: %+v", res)
	}

	free := l.tools(t, pool, "free", nil)
	if res := call(t, find(t, free, "mcp_fake_read"), `{"path": "`+l.db+`"}`, nil); res.Status != session.ResultOK || res.Text != "the secret\n" {
		t.Errorf("a server whose agent turns the sandbox off = %+v, want it to read as before the sandbox", res)
	}
	if res := call(t, find(t, free, "mcp_fake_env"), `{"name": "HOME"}`, nil); res.Text == home || strings.HasPrefix(res.Text, l.data) {
		t.Errorf("an unconfined server's HOME = %q, want the server's own", res.Text)
	}
}

// TestAConfinedServerThatCrashesIsRestartedConfined: the sandbox holds
// across restarts.
func TestAConfinedServerThatCrashesIsRestartedConfined(t *testing.T) {
	l := newConfinedLayout(t)
	pool := mcptools.NewPool(mcptools.Options{Sandbox: l.sb})
	defer pool.Close()
	tools := l.tools(t, pool, "jailed", &sandbox.Policy{})
	if res := call(t, find(t, tools, "mcp_fake_crash"), "", nil); res.Status != session.ResultError {
		t.Fatalf("crash = %+v, want an error result", res)
	}
	if res := call(t, find(t, tools, "mcp_fake_read"), `{"path": "`+l.db+`"}`, nil); res.Status != session.ResultError || !strings.Contains(res.Text, "permission denied") {
		t.Errorf("the restarted server read the database: %+v", res)
	}
}
