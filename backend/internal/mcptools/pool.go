// Package mcptools offers the tools of MCP servers to agents. Agent files
// declare servers (a program speaking MCP on stdio, or a URL speaking
// streamable HTTP); the pool connects to each on first need, keeps one
// connection per distinct server, restarts a server that crashed with
// backoff, stops the servers a reload leaves declared by no agent, and
// ends every server with the pool. A server's tools are offered as
// mcp_<server>_<tool>.
package mcptools

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/sandbox"
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
	// Sandbox confines the stdio servers of the agents whose toolboxes
	// are Confined; nil: none is.
	Sandbox *sandbox.Sandbox
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
	// declared holds, for each server by its key, the declarations it
	// was reached through (see conn.decl).
	declared map[string]map[string]bool
	wg       sync.WaitGroup
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
	return &Pool{opts: opts, log: opts.Log, ctx: ctx, cancel: cancel, servers: map[string]*server{}, declared: map[string]map[string]bool{}}
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

// Retain stops and forgets the servers none of boxes declares. After a
// reload boxes are the toolboxes of the agents loaded now: a server that
// only agents no longer loaded declared would otherwise run until the
// process ends. A server still declared is left as it is. A session still
// running with an agent as it was before the reload starts the server
// again if it needs it.
func (p *Pool) Retain(boxes []*Toolbox) {
	keep := map[string]bool{}
	for _, b := range boxes {
		if c, err := b.declared(); err == nil {
			keep[c.key()] = true
		}
	}
	p.mu.Lock()
	var drop []*server
	for key, s := range p.servers {
		if !anyOf(p.declared[key], keep) {
			delete(p.servers, key)
			delete(p.declared, key)
			drop = append(drop, s)
		}
	}
	p.mu.Unlock()
	for _, s := range drop {
		p.log.Info("MCP server stopped: no agent declares it any more", "server", s.c.Name)
		p.wg.Go(s.stop)
	}
}

func anyOf(set, keep map[string]bool) bool {
	for k := range set {
		if keep[k] {
			return true
		}
	}
	return false
}

// server returns the connection for one resolved server, creating it (not
// started) on first use.
func (p *Pool) server(c conn) *server {
	key := c.key()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.declared[key] == nil {
		p.declared[key] = map[string]bool{}
	}
	p.declared[key][c.decl] = true
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
