package server

import (
	"context"
	"net/http"
	"sync"

	"github.com/agents-os/agents/api/client"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/mcpserve"
)

// mcpEndpoint serves /mcp: the root agents as MCP tools over streamable
// HTTP. The MCP server reaches this server through the same API as any
// client, in-process: a call that came with a token acts with it, so the
// sessions it starts belong to the caller; the agent list, and the calls
// without a token (auth off, or the Unix socket: the authentication in
// front of /mcp let them through), act as the local owner. It is built at
// the first request, so a server nobody asks for MCP runs none of it, and
// ends with Drain.
type mcpEndpoint struct {
	s *Server

	mu      sync.Mutex
	closed  bool
	mcp     *mcpserve.Server
	handler http.Handler
	clients []*client.Client
}

func (e *mcpEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, err := e.open(r.Context())
	if err != nil {
		e.s.writeError(w, r, err)
		return
	}
	h.ServeHTTP(w, r)
}

// open returns the MCP handler, building it the first time.
func (e *mcpEndpoint) open(ctx context.Context) (http.Handler, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errs.Unavailable(errs.CodeShuttingDown, "the server is shutting down")
	}
	if e.handler != nil {
		return e.handler, nil
	}
	// The requests of these clients were checked at /mcp already: no
	// Host or Origin guard, and no request log of their own.
	local := client.InProcess(asLocal(e.s.limitBodies(e.s.mux)))
	tokened := client.InProcess(e.s.authenticate(e.s.limitBodies(e.s.mux)))
	srv := mcpserve.New(mcpserve.Options{Client: local, ForTokens: tokened, Version: e.s.version, Log: e.s.log})
	if err := srv.Start(ctx); err != nil {
		srv.Close()
		local.Close()
		tokened.Close()
		return nil, err
	}
	e.mcp, e.handler, e.clients = srv, srv.Handler(), []*client.Client{local, tokened}
	return e.handler, nil
}

// close ends the MCP sessions (their calls answer that the server is going
// away; the runs go on) and refuses later requests.
func (e *mcpEndpoint) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if e.mcp == nil {
		return
	}
	e.mcp.Close()
	for _, c := range e.clients {
		c.Close()
	}
}
