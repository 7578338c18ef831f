package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/config"
)

// loadCatalog loads the agents the resolved configuration names. An unknown
// --agent slug is an error; bad agent files are not (they are reported by
// the catalog and the others load). With stored agents (opts.Stored), a
// slug no agent file has may be a stored agent's: the files load whole,
// since its helpers may be any of them, the slug is looked for among all
// the agents, and the catalog keeps it and its helpers. opts says how
// tools run; the key lookup is added here.
func (a *app) loadCatalog(ctx context.Context, res *config.Resolved, keys config.Keys, opts catalog.Options) (*catalog.Catalog, error) {
	_, err := res.LoadAgents()
	maybeStored := errors.Is(err, agentfile.ErrUnknownAgent) && opts.Stored != nil
	if err != nil && !maybeStored {
		return nil, err
	}
	load := func() *agentfile.Set {
		// The slug was checked above; a reload keeps serving what loads,
		// and with a stored --agent, every file.
		set, _ := res.LoadAgents()
		return set
	}
	if maybeStored {
		opts.Only = res.Agent
	}
	opts.Models, opts.Compaction = res.Models, res.Compaction
	opts.HasKey = func(id string) bool {
		_, ok := keys.Lookup(id)
		return ok
	}
	opts.Key = func(id string) (string, bool) {
		s, ok := keys.Lookup(id)
		return s.Reveal(), ok
	}
	cat := catalog.New(ctx, load, opts)
	if maybeStored {
		if err := servedAgent(cat.Snapshot(), res.Agent); err != nil {
			return nil, err
		}
	}
	return cat, nil
}

// servedAgent says why --agent slug is not among the agents of snap: a
// stored agent the catalog refused, with its problem, or a slug no agent
// has, with those known.
func servedAgent(snap *catalog.Snapshot, slug string) error {
	_, err := snap.Get(slug)
	if err == nil {
		return nil
	}
	for _, e := range snap.Errors {
		if e.File == "" && e.Agent == slug {
			return fmt.Errorf("--agent: agent %q did not load: %w", slug, e)
		}
	}
	return fmt.Errorf("--agent: %w", err)
}
