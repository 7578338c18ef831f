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
//   - read {path}: returns the file's text; an error result when it
//     cannot be read.
//   - write {path, text}: writes the text in the file; an error result
//     when it cannot be written.
//   - env {name}: returns the value of a variable of its environment.
//   - connect {address}: connects over TCP and returns the first line
//     it reads; an error result when it cannot.
//
// read, write and connect are what a sandbox must stop: the sandbox
// tests call them on the server's own files and a local listener.
package mcpfake

import (
	"bufio"
	"context"
	"fmt"
	"net"
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
	mcp.AddTool(s, &mcp.Tool{Name: "read", Description: "Return a file's text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Path string `json:"path" jsonschema:"the file"`
		}) (*mcp.CallToolResult, any, error) {
			data, err := os.ReadFile(in.Path)
			if err != nil {
				return failure(err), nil, nil
			}
			return text(string(data)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Write a text in a file."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Path string `json:"path" jsonschema:"the file"`
			Text string `json:"text" jsonschema:"what to write"`
		}) (*mcp.CallToolResult, any, error) {
			if err := os.WriteFile(in.Path, []byte(in.Text), 0o644); err != nil {
				return failure(err), nil, nil
			}
			return text("wrote " + in.Path), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Return a variable of the server's environment."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Name string `json:"name" jsonschema:"the variable"`
		}) (*mcp.CallToolResult, any, error) {
			return text(os.Getenv(in.Name)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "connect", Description: "Connect over TCP and return the first line read."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in struct {
			Address string `json:"address" jsonschema:"host:port"`
		}) (*mcp.CallToolResult, any, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "tcp", in.Address)
			if err != nil {
				return failure(err), nil, nil
			}
			defer c.Close()
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				return failure(err), nil, nil
			}
			return text(line), nil, nil
		})
	return s
}

// failure is a tool's error result: the model reads it.
func failure(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}, IsError: true}
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
