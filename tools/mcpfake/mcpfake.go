// Package mcpfake is the project's offline MCP server: a few tools whose
// behaviour tests of MCP toolboxes rely on, served over stdio (the
// mcpfake command) or streamable HTTP (Handler).
//
// Its tools:
//
//   - echo {text}: returns the text.
//   - steps {count}: reports count progress notifications, "step i of
//     count", a little apart, then returns "all steps done".
//   - crash: the server process exits with status 3 (stdio only: a crash
//     of an in-process server would take the test with it; over HTTP it
//     ends the session instead).
//   - grow: adds the tool "extra", so the server announces a changed tool
//     list.
//   - pid: returns the server's process id.
//   - big {bytes}: returns a text of that many bytes, lines of 16.
package mcpfake

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StepGap is the time between two progress notifications of steps: longer
// than the server's rate limit on progress events, so each is seen.
const StepGap = 300 * time.Millisecond

// Options tune a server.
type Options struct {
	// Exit ends the process for the crash tool; nil ends the session
	// instead.
	Exit func(code int)
}

// New returns the server.
func New(opts Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpfake", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Return the text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text" jsonschema:"the text to return"`
		}) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "steps", Description: "Report progress, then finish."},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Count int `json:"count" jsonschema:"how many steps"`
		}) (*mcp.CallToolResult, any, error) {
			if in.Count <= 0 {
				in.Count = 3
			}
			for i := 1; i <= in.Count; i++ {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(),
					Message:       fmt.Sprintf("step %d of %d", i, in.Count),
					Progress:      float64(i), Total: float64(in.Count),
				})
				if err != nil {
					return nil, nil, err
				}
				select {
				case <-time.After(StepGap):
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return text("all steps done"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "End the server."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if opts.Exit != nil {
				opts.Exit(3)
			}
			go req.Session.Close()
			return text("crashing"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Add the tool extra."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "extra", Description: "A tool added later."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text("extra"), nil, nil
				})
			return text("grown"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Return the server's process id."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Return a text of the given size."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Bytes int `json:"bytes" jsonschema:"the size of the text"`
		}) (*mcp.CallToolResult, any, error) {
			const line = "0123456789abcde\n"
			n := max(in.Bytes, 0)
			return text(strings.Repeat(line, n/len(line)) + line[:n%len(line)]), nil, nil
		})
	return s
}

// Handler serves one server over streamable HTTP. When token is set,
// requests without "Authorization: Bearer <token>" are refused.
func Handler(token string) http.Handler {
	s := New(Options{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
