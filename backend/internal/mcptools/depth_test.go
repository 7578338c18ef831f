package mcptools_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/session"
)

// nested is a JSON value n lists deep.
func nested(n int) any {
	var v any = "bottom"
	for range n {
		v = []any{v}
	}
	return v
}

// TestAStructuredResultNestedPastTheLimitFails: a server's structured
// result nested past jsoncheck.MaxDepth is not handed to the model: the call
// fails, saying why. One at the limit is read as usual.
func TestAStructuredResultNestedPastTheLimitFails(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "deep", Version: "1"}, nil)
	for name, depth := range map[string]int{"deep": 150, "fine": 99} {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "Answer with a nested structured result."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{StructuredContent: map[string]any{"v": nested(depth)}}, nil, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer srv.Close()
	pool := mcptools.NewPool(mcptools.Options{})
	defer pool.Close()
	box := pool.Toolbox(agentfile.MCPServer{Kind: agentfile.MCPKindStreamableHTTP, Name: "web", URL: srv.URL}, &agentfile.Agent{File: "/a/agent.json"})
	tools, err := box.Tools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, find(t, tools, "mcp_web_deep"), `{}`, nil)
	if res.Status != session.ResultError || !strings.Contains(res.Text, "more than 100 levels deep") {
		t.Errorf("deep = %+v, want a failure saying it nests more than 100 levels deep", res)
	}
	res = call(t, find(t, tools, "mcp_web_fine"), `{}`, nil)
	if res.Status != session.ResultOK || !strings.Contains(res.Text, `"bottom"`) {
		t.Errorf("fine = %+v, want the structured result", res)
	}
}
