// Package mcpserve serves the agents of an agents server as MCP tools:
// each root agent is a tool `ask_<slug>` that runs a prompt in a session
// (a new one, or one an earlier call returned) and answers with the final
// text and the session id, reporting the run as MCP progress while it
// goes. It talks to the agents server only through the API client, so the
// same code serves /mcp inside `agents serve`, and `agents mcp` over stdio
// with a server in the same process or a remote one.
package mcpserve

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-os/agents/api/client"
)

// Options configure a Server.
type Options struct {
	// Client reaches the agents server: it lists the agents, follows
	// their changes, and runs the calls that bring no bearer token of
	// their own (all of them over stdio).
	Client *client.Client
	// ForTokens, when set, runs the calls that came over HTTP with a
	// bearer token, acting with that token, so the caller owns the
	// sessions it starts. A server that relays for several owners sets
	// it; Client then acts for whoever reaches the endpoint without a
	// token (the local owner).
	ForTokens *client.Client
	// Params are session params every call starts with; a call's own
	// params add to them and win.
	Params map[string]string
	// Version is announced to MCP clients.
	Version string
	// Log receives what goes wrong; nil discards it.
	Log *slog.Logger
}

// errClosed is what a closed server answers.
var errClosed = errors.New("the MCP server is closed")

// Server is an MCP server whose tools are the root agents of one agents
// server.
type Server struct {
	client, forTokens *client.Client
	params            map[string]string
	log               *slog.Logger
	mcp               *mcp.Server

	// ctx ends with Close: the follower stops, and the calls in flight
	// return without cancelling their runs (the agents server keeps them).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
	tools  map[string]toolState // by tool name
}

// New returns a server with no tools yet: Start lists the agents.
func New(opts Options) *Server {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		client: opts.Client, forTokens: opts.ForTokens, params: opts.Params, log: log,
		ctx: ctx, cancel: cancel, tools: map[string]toolState{},
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "agents", Title: "agents", Version: version}, &mcp.ServerOptions{
		Instructions: "Each ask_<slug> tool runs a prompt against one agent and returns its final answer and the session id; " +
			"pass that id as session_id to continue the same conversation.",
		// Tools come and go with the agent list, so the capability is
		// announced even while there are none.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		Logger:       log,
	})
	return s
}

// Start lists the agents as tools, then follows their changes until
// Close. It fails when the agents server cannot list them.
func (s *Server) Start(ctx context.Context) error {
	if err := s.sync(ctx); err != nil {
		return err
	}
	if !s.enter() {
		return errClosed
	}
	go func() {
		defer s.wg.Done()
		s.follow(s.ctx)
	}()
	return nil
}

// Serve speaks MCP over t (stdio, say) until the client leaves or ctx
// ends.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	return s.mcp.Run(ctx, t)
}

// sessionIdle is how long an MCP session over HTTP lives without a
// request: a client that vanished without saying so does not hold its
// session forever.
const sessionIdle = 30 * time.Minute

// Handler serves MCP over streamable HTTP. It does no authentication and
// no Host or Origin checks of its own: it is mounted behind the agents
// server's, which accept the configured hosts and tokens (the SDK's own
// loopback check would refuse a Host the operator allowed).
func (s *Server) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:                     s.log,
		SessionTimeout:             sessionIdle,
		DisableLocalhostProtection: true,
	})
}

// Close ends the MCP sessions and the follower. The calls in flight
// answer that the server is going away; their runs go on in the agents
// server. It does not close the clients.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
	s.wg.Wait()
}

// enter counts a call in, so Close waits for it; false means the server
// is closed.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}
