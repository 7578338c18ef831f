package mcptools_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/tools/mcpfake"
)

// httpServer is mcpfake over streamable HTTP, answering each call with a
// JSON body (jsonBodies) or an event stream.
func httpServer(t *testing.T, pool *mcptools.Pool, jsonBodies bool) *mcptools.Toolbox {
	t.Helper()
	s := mcpfake.New(mcpfake.Options{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: jsonBodies})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return pool.Toolbox(agentfile.MCPServer{Kind: agentfile.MCPKindStreamableHTTP, Name: "fake", URL: srv.URL}, &agentfile.Agent{File: "/a/agent.json"})
}

// transports are the ways a server is reached: a process over stdio, and
// HTTP with JSON bodies or event streams.
func transports() []struct {
	name string
	box  func(*testing.T, *mcptools.Pool) *mcptools.Toolbox
} {
	return []struct {
		name string
		box  func(*testing.T, *mcptools.Pool) *mcptools.Toolbox
	}{
		{"stdio", func(t *testing.T, p *mcptools.Pool) *mcptools.Toolbox { return stdioServer(t, p, fakeBinary) }},
		{"http json", func(t *testing.T, p *mcptools.Pool) *mcptools.Toolbox { return httpServer(t, p, true) }},
		{"http sse", func(t *testing.T, p *mcptools.Pool) *mcptools.Toolbox { return httpServer(t, p, false) }},
	}
}

// bigCall calls big; a server restarting offers the tools it had, and
// the call waits for it.
func bigCall(t *testing.T, box *mcptools.Toolbox, bytes int) tool.Result {
	t.Helper()
	tools, err := box.Tools(context.Background(), nil)
	if len(tools) == 0 {
		t.Fatalf("no tools: %v", err)
	}
	return call(t, find(t, tools, mcptools.ToolName(box.Name(), "big")), fmt.Sprintf(`{"bytes": %d}`, bytes), nil)
}

// Issue 20, item 14: the model reads at most as much of an MCP result as
// of a bash tool's output, with a note saying it was cut.
func TestAnMCPResultIsCutAtTheBashCap(t *testing.T) {
	const size = 200_000
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			pool := mcptools.NewPool(mcptools.Options{})
			defer pool.Close()
			res := bigCall(t, tr.box(t, pool), size)
			if res.Status != session.ResultOK {
				t.Fatalf("status = %v: %.200s", res.Status, res.Text)
			}
			kept, note, cut := strings.Cut(res.Text, "[output truncated: ")
			if !cut {
				t.Fatalf("a %d-byte result reached the model whole (%d bytes), no note", size, len(res.Text))
			}
			if len(kept) > bashtool.DefaultMaxStdout+1 || len(kept) < bashtool.DefaultMaxStdout-16 {
				t.Errorf("kept %d bytes, want the bash cap, %d", len(kept), bashtool.DefaultMaxStdout)
			}
			if !strings.HasPrefix(kept, "0123456789abcde\n") {
				t.Errorf("kept %.40q…, want the start of the result", kept)
			}
			if want := "134464 of 200000 bytes cut, only the first 65536 bytes are shown]"; note != want {
				t.Errorf("note %q, want %q", note, want)
			}
		})
	}

	// A cut never splits a character: here the cap falls in the middle
	// of one.
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	tools, err := stdioServer(t, pool, fakeBinary).Tools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, find(t, tools, "mcp_fake_echo"), `{"text": "x`+strings.Repeat("é", 40_000)+`"}`, nil)
	kept, note, _ := strings.Cut(res.Text, "[output truncated: ")
	if !utf8.ValidString(kept) || len(kept) != bashtool.DefaultMaxStdout || note != "14466 of 80001 bytes cut, only the first 65535 bytes are shown]" {
		t.Errorf("cut %d bytes of é (valid UTF-8: %v), note %q", len(kept), utf8.ValidString(kept), note)
	}
}

// Issue 20, item 14: a message larger than the bound the client keeps
// for one (a JSON body, an event, a stdio line) is refused without being
// held whole; the call fails saying so, and the server serves the next
// call.
func TestAnOversizedMCPMessageIsRefused(t *testing.T) {
	const size = 10 << 20 // past the bound, under the SDK's own 16 MiB
	for _, tr := range transports() {
		t.Run(tr.name, func(t *testing.T) {
			pool := mcptools.NewPool(mcptools.Options{})
			defer pool.Close()
			box := tr.box(t, pool)
			res := bigCall(t, box, size)
			if res.Status != session.ResultError {
				t.Fatalf("status = %v (%d bytes), want the call refused", res.Status, len(res.Text))
			}
			if len(res.Text) > bashtool.DefaultMaxStdout+200 {
				t.Errorf("the refusal is %d bytes", len(res.Text))
			}
			t.Logf("refusal: %s", res.Text)
			if res := bigCall(t, box, 10); res.Status != session.ResultOK || res.Text != "0123456789" {
				t.Errorf("the next call = %v %q, want the server back", res.Status, res.Text)
			}
		})
	}
}
