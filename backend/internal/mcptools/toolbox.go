package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/jsoncheck"
	"github.com/agents-os/agents/backend/internal/sandbox"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// Prefix starts the name of every MCP tool: mcp_<server>_<tool>.
const Prefix = "mcp_"

// Toolbox is one MCP server as one agent declares it.
type Toolbox struct {
	pool *Pool
	decl agentfile.MCPServer
	// dir is the agent file's directory: a stdio server runs there, and a
	// relative executable path is taken from there.
	dir string
	// passEnv names variables of the server's environment a stdio server
	// gets on top of the clean base every tool gets (the agent's passEnv).
	passEnv []string
	// within are the only folders a stdio server's program may lie in;
	// none: anywhere.
	within []string
	// agent is the slug of the agent declaring the server, which names
	// a confined server's folder.
	agent string
	// policy, when set, confines a stdio server (see Confined).
	policy *sandbox.Policy
}

// Toolbox returns the toolbox of a server the agent file declares.
func (p *Pool) Toolbox(decl agentfile.MCPServer, agent *agentfile.Agent) *Toolbox {
	return &Toolbox{pool: p, decl: decl, dir: filepath.Dir(agent.File), passEnv: agent.PassEnv, agent: agent.Slug}
}

// Within confines the server's program to these folders, judged each
// time its process starts: a stored agent's server. It returns b.
func (b *Toolbox) Within(dirs []string) *Toolbox {
	b.within = dirs
	return b
}

// Confined runs a stdio server in the pool's sandbox under what its
// agent allows (nil: unconfined). To that the server's process adds the
// folders of its program and the agent file (read), and a folder of its
// own that outlives its restarts (read and write; see
// sandbox.ServerDir), which is its HOME, XDG folders and TMPDIR unless
// the declaration's env says otherwise. The agent's CPU time limit is
// not applied: the server lives across calls, and a limit on its whole
// life would end it at some call. It returns b.
func (b *Toolbox) Confined(p *sandbox.Policy) *Toolbox {
	if p != nil {
		confined := *p
		confined.Limits.CPUSeconds = 0
		p = &confined
	}
	b.policy = p
	return b
}

// Name is the server's name within the agent.
func (b *Toolbox) Name() string { return b.decl.Name }

// Status is what a client is told about a declared server.
type Status struct {
	Name      string
	Transport string // stdio or http
	Target    string // command line or URL
	State     State
	// Error says why the server is not running, when it failed.
	Error string
	// Tools is how many tools it offers, once running.
	Tools int
}

// ErrParamsMissing is a server that cannot be reached before the
// session supplies the params its headers name.
var ErrParamsMissing = errors.New("params missing")

// Tools returns the server's tools, starting it when it is not running.
// A server that cannot start gives an error, and the tools it offered
// when it last ran: a server that crashed keeps offering them while it
// restarts, and a call waits for it.
func (b *Toolbox) Tools(ctx context.Context, params map[string]string) ([]tool.Tool, error) {
	c, err := b.resolve(params)
	if err != nil {
		return nil, err
	}
	s := b.pool.server(c)
	_, err = s.ensure(ctx, false)
	return b.offer(s), err
}

// Known returns the tools the server offered when last listed, starting
// nothing; none when it never ran.
func (b *Toolbox) Known(params map[string]string) []tool.Tool {
	c, err := b.resolve(params)
	if err != nil {
		return nil
	}
	return b.offer(b.pool.server(c))
}

// Status reports the server's state for a session with these params.
func (b *Toolbox) Status(params map[string]string) Status {
	st := Status{Name: b.decl.Name, Transport: "stdio", Target: strings.Join(append([]string{b.decl.Executable}, b.decl.Args...), " "), State: StateIdle}
	if b.decl.Kind == agentfile.MCPKindStreamableHTTP {
		st.Transport, st.Target = "http", b.decl.URL
	}
	c, err := b.resolve(params)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	s := b.pool.server(c)
	state, serr := s.status()
	st.State, st.Tools = state, len(s.known())
	if serr != nil {
		st.Error = serr.Error()
	}
	return st
}

// resolve turns the declaration into a connection for a session with
// these params.
func (b *Toolbox) resolve(params map[string]string) (conn, error) {
	c, err := b.declared()
	if err != nil {
		return conn{}, err
	}
	c.decl = c.key()
	if len(c.Headers) == 0 {
		return c, nil
	}
	headers := make(map[string]string, len(c.Headers))
	var missing []string
	for k, v := range c.Headers {
		value, lack := agentfile.ExpandParams(v, params)
		headers[k] = value
		missing = append(missing, lack...)
	}
	if len(missing) > 0 {
		return conn{}, fmt.Errorf("MCP server %s: %w: its headers need the session params %s", b.decl.Name, ErrParamsMissing, strings.Join(missing, ", "))
	}
	c.Headers = headers
	return c, nil
}

// declared is the connection as the agent file declares it: the headers
// of an HTTP server still name the session params they take, a stdio
// server takes none.
func (b *Toolbox) declared() (conn, error) {
	c := conn{Name: b.decl.Name}
	if b.decl.Kind == agentfile.MCPKindStreamableHTTP {
		c.URL, c.Headers = b.decl.URL, b.decl.Headers
		return c, nil
	}
	c.Executable, c.Args, c.Dir, c.Within = b.decl.Executable, b.decl.Args, b.dir, b.within
	if strings.ContainsRune(c.Executable, filepath.Separator) && !filepath.IsAbs(c.Executable) {
		c.Executable = filepath.Join(b.dir, c.Executable)
	}
	extra := b.decl.Env
	if b.policy != nil {
		home, err := b.pool.opts.Sandbox.ServerDir(b.agent, b.decl.Name)
		if err != nil {
			return conn{}, fmt.Errorf("MCP server %s: %w", b.decl.Name, err)
		}
		// Its folders go to the one it may write in; what the file
		// sets explicitly wins.
		extra = homeEnv(home)
		maps.Copy(extra, b.decl.Env)
		c.Policy, c.Home = b.policy, home
	}
	env, err := bashtool.Environment(b.passEnv, extra)
	if err != nil {
		return conn{}, fmt.Errorf("MCP server %s: %w", b.decl.Name, err)
	}
	c.Env = env
	return c, nil
}

// homeEnv points the folders programs write in by convention (npm's and
// pip's caches, XDG's, temporary files) to a confined server's own.
func homeEnv(home string) map[string]string {
	return map[string]string{
		"HOME":            home,
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"TMPDIR":          filepath.Join(home, "tmp"),
	}
}

// offer wraps the server's listed tools as agent tools.
func (b *Toolbox) offer(s *server) []tool.Tool {
	listed := s.known()
	out := make([]tool.Tool, 0, len(listed))
	for _, t := range listed {
		schema := schemaOf(t)
		if tool.CheckSchema(schema) != nil {
			// Its calls' arguments could not be checked: not offered.
			continue
		}
		out = append(out, &mcpTool{server: s, remote: t.Name, spec: tool.Spec{
			Name:        ToolName(b.decl.Name, t.Name),
			Description: t.Description,
			Parameters:  schema,
			Kind:        session.ToolMCP,
			Source:      "mcp:" + b.decl.Name,
		}})
	}
	return out
}

// ToolName is the name an MCP tool is offered under: mcp_<server>_<tool>,
// with what models do not accept in a name replaced by _.
func ToolName(server, remote string) string {
	name := []byte(Prefix + server + "_" + remote)
	for i, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			name[i] = '_'
		}
	}
	return string(name)
}

// schemaOf is a tool's input schema as JSON; an object with no
// properties when the server gives none.
func schemaOf(t *mcp.Tool) json.RawMessage {
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && string(b) != "null" {
			return b
		}
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

// mcpTool is one tool of an MCP server.
type mcpTool struct {
	server *server
	remote string
	spec   tool.Spec
}

func (t *mcpTool) Spec() tool.Spec        { return t.spec }
func (t *mcpTool) Mode() session.CallMode { return session.CallAttached }

// Execute calls the tool on its server, starting or waiting for the server
// when it is down. The server gets the decoded arguments in their
// canonical spelling, the value an approval judged, never the model's
// text. The server's progress notifications are the call's.
func (t *mcpTool) Execute(ctx context.Context, call tool.Call) tool.Result {
	res, err := t.server.call(ctx, t.remote, call.Args.JSON(), call.Progress)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{Text: "cancelled", Status: session.ResultCancelled}
		}
		return t.failed(capText(fmt.Sprintf("the call to %s failed: %v", t.spec.Name, err)))
	}
	text, err := resultText(res)
	if err != nil {
		return tool.Failed(fmt.Sprintf("the result of %s is refused: %v", t.spec.Name, err))
	}
	text = capText(text)
	if res.IsError {
		return t.failed(text)
	}
	return tool.OK(text)
}

// failed is a failed call's result; the model reads, after it, what the
// sandbox allows a confined server, so that a refused write or
// connection explains itself.
func (t *mcpTool) failed(text string) tool.Result {
	if p, ok := t.server.c.confinement(); ok {
		text += "\n" + sandbox.Note(t.spec.Name, p)
	}
	return tool.Failed(text)
}

// resultText is what the model reads of a call's result: its text
// content, a line for each other content, or the structured result. The
// SDK decodes a server's messages up to 1,000 levels deep; a structured
// result deeper than jsoncheck.MaxDepth, the bound on all JSON from outside,
// is refused here.
func resultText(res *mcp.CallToolResult) (string, error) {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			if err := jsoncheck.Depth(b, jsoncheck.MaxDepth); err != nil {
				return "", fmt.Errorf("its structured content: %w", err)
			}
			return string(b), nil
		}
	}
	return strings.Join(parts, "\n"), nil
}

// maxResultBytes is as much of a result as the model reads: as much as
// of a bash tool's output.
const maxResultBytes = bashtool.DefaultMaxStdout

// capText cuts text to maxResultBytes, worded as a bash tool's cut.
func capText(text string) string { return bashtool.Cut(text, maxResultBytes) }

var _ tool.Tool = (*mcpTool)(nil)
