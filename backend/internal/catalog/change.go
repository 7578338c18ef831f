package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// Change is a change of one stored agent.
type Change struct {
	// Agent is the agent as the change stores it (its slug alone for a
	// delete).
	Agent Stored
	// Deleted says the change deletes the agent.
	Deleted bool
}

// Check judges the stored agents as the transaction of a change reads
// them (see store.AgentChange.Check).
type Check = func(current []store.StoredAgent) error

// ChangeStored serves a change of a stored agent once commit stored it.
// Rebuilds wait meanwhile: it reads the stored agents, builds them with
// the change applied, and gives commit that snapshot, the catalog the
// change's event announces, with the rule between agents that the
// change's transaction must judge, since the agents read here may change
// before it: a helper a created or updated agent names must still be
// stored, and an agent another names as a helper may not be deleted
// (errs.FailedPrecondition, agent_in_use). The snapshot is served once
// commit succeeds. A created or updated agent that would not load (a
// helper it names is gone) is refused before commit: errs.Invalid
// (invalid_agent).
func (c *Catalog) ChangeStored(ctx context.Context, ch Change, commit func(next *Snapshot, check Check) error) (*Snapshot, error) {
	c.rebuild.Lock()
	defer c.rebuild.Unlock()
	list := c.stored
	if c.opts.Stored != nil {
		fresh, err := c.opts.Stored(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the stored agents: %w", err)
		}
		list = fresh
	}
	slug := ch.Agent.Slug
	next := slices.DeleteFunc(slices.Clone(list), func(s Stored) bool { return s.Slug == slug })
	if !ch.Deleted {
		next = append(next, ch.Agent)
		slices.SortFunc(next, func(a, b Stored) int { return strings.Compare(a.Slug, b.Slug) })
	}
	snap := c.snapshotOf(ctx, c.Snapshot().files, next, nil)
	check := c.noDependents(slug)
	if !ch.Deleted {
		a := snap.every[slug]
		if a == nil {
			return nil, refused(snap, slug)
		}
		check = helpersStored(snap, a)
	}
	if err := commit(snap, check); err != nil {
		return nil, err
	}
	c.stored = next
	return c.swap(snap), nil
}

// refused is why snap does not serve the stored agent slug.
func refused(snap *Snapshot, slug string) error {
	for _, e := range snap.Errors {
		if e.Agent == slug {
			return invalid(e)
		}
	}
	return errs.Invalid(errs.CodeInvalidAgent, "agent %q does not load", slug)
}

// noDependents refuses to delete slug while a stored agent names it as
// a helper: deleting it would silently stop them loading. A stored agent
// refused for another reason counts too, since it would not load once
// mended.
func (c *Catalog) noDependents(slug string) Check {
	return func(current []store.StoredAgent) error {
		var deps []string
		for _, a := range current {
			if a.Slug == slug {
				continue
			}
			def, _, perr := agentfile.Loader{WorkDir: c.opts.WorkDir}.ParseDefinition([]byte(a.Definition))
			if perr == nil && slices.Contains(def.Names(), slug) {
				deps = append(deps, a.Slug)
			}
		}
		if len(deps) == 0 {
			return nil
		}
		return errs.FailedPrecondition(errs.CodeAgentInUse, "agent %q is a helper of %s: update them to name it no more, then delete it", slug, strings.Join(deps, ", ")).
			With("dependents", strings.Join(deps, ","))
	}
}

// helpersStored is the check that the stored agents a names as helpers
// are still stored; nil when it names none.
func helpersStored(snap *Snapshot, a *Agent) Check {
	var need []string
	for _, h := range a.Helpers {
		if helper := snap.every[h]; h != a.Slug && helper != nil && helper.Source == SourceStored {
			need = append(need, h)
		}
	}
	if len(need) == 0 {
		return nil
	}
	return func(current []store.StoredAgent) error {
		for _, h := range need {
			if !slices.ContainsFunc(current, func(s store.StoredAgent) bool { return s.Slug == h }) {
				return invalid(&agentfile.Error{Field: "contents.extraAgents", Reason: fmt.Sprintf("no agent has the slug %q: it was deleted meanwhile", h)})
			}
		}
		return nil
	}
}
