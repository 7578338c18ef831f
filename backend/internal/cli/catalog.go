package cli

import (
	"context"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/config"
)

// loadCatalog loads the agents the resolved configuration names. An unknown
// --agent slug is an error; bad agent files are not (they are reported by
// the catalog and the others load). opts says how tools run; the key
// lookup is added here.
func (a *app) loadCatalog(ctx context.Context, res *config.Resolved, keys config.Keys, opts catalog.Options) (*catalog.Catalog, error) {
	if _, err := res.LoadAgents(); err != nil {
		return nil, err
	}
	load := func() *agentfile.Set {
		set, _ := res.LoadAgents() // the slug was checked above; a reload keeps serving what loads
		return set
	}
	opts.HasKey = func(id string) bool {
		_, ok := keys.Lookup(id)
		return ok
	}
	return catalog.New(ctx, load, opts), nil
}
