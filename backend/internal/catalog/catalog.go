// Package catalog holds the agents the server offers: the agent files as
// loaded and the agents stored in the database, each with the tools its
// model is offered (bash tools described from their scripts, helper
// agents, system and client tools, the tools of its MCP servers). A
// reload swaps the whole catalog at once, so a reader never sees half of
// one.
package catalog

import (
	"context"
	"strings"
	"sync"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/mcptools"
	"github.com/agents-os/agents/backend/internal/sqlitetool"
	"github.com/agents-os/agents/backend/internal/tool"
)

// LoadFunc reads the agent files afresh.
type LoadFunc func() *agentfile.Set

// Options tune how agents become catalog entries.
type Options struct {
	// HasKey reports whether the server holds a value for an API key id.
	HasKey func(id string) bool
	// Key returns the value of an API key id, for the secrets of HTTP API
	// toolboxes; nil: the server holds no keys.
	Key func(id string) (string, bool)
	// OfflineModelURL, when set, is the model endpoint of every agent whose
	// API key the server does not hold: the demo and tests run offline.
	OfflineModelURL string
	// Models are the config's limits of models, by model name as agents
	// write it; a zero field is not set. They come before the server's
	// table and after an agent's own.
	Models map[string]Limits
	// Compaction is the server's compaction settings; its zero fields
	// take the defaults (see Compaction.Complete).
	Compaction Compaction
	// Bash is what every bash tool run gets from the server.
	Bash tool.BashRuntime
	// SQLite keeps the per-session copies of versioned SQLite
	// toolboxes; without it such a toolbox is a load problem.
	SQLite *sqlitetool.Copies
	// MCP connects to the MCP servers agents declare; without it a
	// declared server is a load problem.
	MCP *mcptools.Pool
	// Stored reads the agents stored in the database; nil serves the
	// agent files alone.
	Stored func(ctx context.Context) ([]Stored, error)
	// StoredVersion reads one version of a stored agent (see
	// Catalog.Version); nil: only current versions are served.
	StoredVersion func(ctx context.Context, slug string, version int64) (Stored, error)
	// ToolDirs are the directories a stored agent's bash tools, tool
	// directory and MCP server programs must lie under; with none, a
	// stored agent may have none of them.
	ToolDirs []string
	// WorkDir is where a stored agent's relative paths are resolved;
	// empty: the process working directory.
	WorkDir string
	// within is ToolDirs made absolute when stored agents are built: the
	// folders their programs are judged in again when they start.
	within []string
	// Only, when set, keeps in each snapshot only the agent with this
	// slug and its helpers, recursively, when there is one: a server
	// given a stored agent to serve alone. (A file agent's set is
	// narrowed before it loads; a stored agent's helpers may be any
	// agent, so the files are loaded whole and narrowed here.)
	Only string
}

// Catalog is the current set of agents. It is safe for concurrent use.
type Catalog struct {
	load LoadFunc
	opts Options

	// rebuild serialises the rebuilds, so one that read the stored
	// agents earlier cannot replace the snapshot of one that read them
	// later.
	rebuild sync.Mutex
	// stored is the last list of stored agents read.
	stored []Stored

	mu   sync.RWMutex
	snap *Snapshot
	// versions are the stored agents built at a version other than their
	// current one (Version); emptied at every swap, since each was built
	// with the helpers of the snapshot it replaced.
	versions map[versionKey]*Agent
}

// New loads the agents once and returns the catalog.
func New(ctx context.Context, load LoadFunc, opts Options) *Catalog {
	c := &Catalog{load: load, opts: opts, versions: map[versionKey]*Agent{}}
	f := buildFiles(ctx, load(), opts)
	c.snap = c.withStored(ctx, f)
	return c
}

// Snapshot returns the current agents; it never changes afterwards.
func (c *Catalog) Snapshot() *Snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.snap
}

// Get returns one agent of the current snapshot.
func (c *Catalog) Get(slug string) (*Agent, error) {
	return c.Snapshot().Get(slug)
}

// Reload reads the agent files again, describes their tools and swaps the
// catalog. Sessions already running keep the *Agent they hold. The MCP
// servers no agent declares any more stop.
func (c *Catalog) Reload(ctx context.Context) *Snapshot {
	c.rebuild.Lock()
	defer c.rebuild.Unlock()
	return c.swap(c.withStored(ctx, buildFiles(ctx, c.load(), c.opts)))
}

// ReloadStored reads the stored agents again, keeping the agent files as
// they are, and swaps the catalog: after a stored agent changed, here or
// on another server sharing the database.
func (c *Catalog) ReloadStored(ctx context.Context) *Snapshot {
	c.rebuild.Lock()
	defer c.rebuild.Unlock()
	return c.swap(c.withStored(ctx, c.Snapshot().files))
}

func (c *Catalog) swap(snap *Snapshot) *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snap = snap
	c.versions = map[versionKey]*Agent{}
	if c.opts.MCP != nil {
		// Under the lock: a reload racing this one must not keep the
		// servers of a snapshot already replaced.
		c.opts.MCP.Retain(snap.toolboxes())
	}
	return snap
}

// Snapshot is one immutable generation of the catalog.
type Snapshot struct {
	bySlug map[string]*Agent
	// every is bySlug before Options.Only left agents out: the slugs a
	// new stored agent may not take, the helpers it may name.
	every  map[string]*Agent
	sorted []*Agent
	files  *files
	// Errors has one entry per agent file or tool that could not be loaded.
	Errors []*agentfile.Error
	// Warnings are the problems of the agent files that did not stop them
	// from loading (each agent also carries those of its own file).
	Warnings []*agentfile.Error
}

// toolboxes are the MCP servers every agent declares.
func (s *Snapshot) toolboxes() []*mcptools.Toolbox {
	var out []*mcptools.Toolbox
	for _, a := range s.sorted {
		out = append(out, a.mcp...)
	}
	return out
}

// only is s holding only the agent with this slug and its helpers,
// recursively; s itself when no agent has the slug. Errors and warnings
// are kept: they are still true.
func (s *Snapshot) only(slug string) *Snapshot {
	root := s.bySlug[slug]
	if root == nil {
		return s
	}
	out := &Snapshot{bySlug: map[string]*Agent{}, every: s.every, files: s.files, Errors: s.Errors, Warnings: s.Warnings}
	for queue := []*Agent{root}; len(queue) > 0; queue = queue[1:] {
		a := queue[0]
		if out.bySlug[a.Slug] != nil {
			continue
		}
		out.bySlug[a.Slug] = a
		for _, h := range a.HelperTools {
			if helper := s.bySlug[h.Slug]; helper != nil {
				queue = append(queue, helper)
			}
		}
	}
	for _, a := range s.sorted {
		if out.bySlug[a.Slug] != nil {
			out.sorted = append(out.sorted, a)
		}
	}
	return out
}

// Agents returns every agent sorted by slug.
func (s *Snapshot) Agents() []*Agent { return s.sorted }

// Get returns the agent with this slug, or an unknown_agent error.
func (s *Snapshot) Get(slug string) (*Agent, error) {
	if a, ok := s.bySlug[slug]; ok {
		return a, nil
	}
	known := make([]string, len(s.sorted))
	for i, a := range s.sorted {
		known[i] = a.Slug
	}
	if len(known) == 0 {
		return nil, errs.NotFound(errs.CodeUnknownAgent, "unknown agent %q (no agent is loaded)", slug)
	}
	return nil, errs.NotFound(errs.CodeUnknownAgent, "unknown agent %q (known: %s)", slug, strings.Join(known, ", "))
}
