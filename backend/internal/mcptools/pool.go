// Package mcptools offers the tools of MCP servers to agents. Agent files
// declare servers (a program speaking MCP on stdio, or a URL speaking
// streamable HTTP); the pool connects to each on first need, keeps one
// connection per distinct server, restarts a server that crashed with
// backoff, and ends every server with the pool. A server's tools are
// offered as mcp_<server>_<tool>.
package mcptools

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/bashtool"
)

// Options tune a pool.
type Options struct {
	Log *slog.Logger
	// Reaper records the process groups of stdio servers, as it does for
	// bash tools, so a crash of the server leaves none running.
	Reaper *bashtool.Reaper
	// Changed is told when a server's tool list changed: it announced a
	// change, or came back from a restart with other tools.
	Changed func()
	// StartTimeout bounds starting a server and listing its tools; 20 s
	// when zero.
	StartTimeout time.Duration
}

// Pool holds every MCP server connection of the process.
type Pool struct {
	opts Options
	log  *slog.Logger
	// ctx ends with the pool: restarts and the servers' own contexts
	// derive from it.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	servers map[string]*server
	wg      sync.WaitGroup
}

// NewPool returns a pool with no server started.
func NewPool(opts Options) *Pool {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 20 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{opts: opts, log: opts.Log, ctx: ctx, cancel: cancel, servers: map[string]*server{}}
}

// Close stops every server and waits until their processes are gone.
func (p *Pool) Close() {
	p.cancel()
	p.mu.Lock()
	servers := make([]*server, 0, len(p.servers))
	for _, s := range p.servers {
		servers = append(servers, s)
	}
	p.mu.Unlock()
	for _, s := range servers {
		s.stop()
	}
	p.wg.Wait()
}

// server returns the connection for one resolved server, creating it (not
// started) on first use.
func (p *Pool) server(c conn) *server {
	key := c.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.servers[key]; ok {
		return s
	}
	s := newServer(p, c)
	p.servers[key] = s
	return s
}

func (p *Pool) changed() {
	if p.opts.Changed != nil {
		p.opts.Changed()
	}
}
