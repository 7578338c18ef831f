// Package storedagents changes the agents stored in the database: it
// creates, updates, deletes and rolls them back under the rules of stored
// agents (a definition checked as the catalog checks it, file agents
// read-only, a version per change, a helper in use kept), and writes each
// change in one transaction with the agents.changed event that announces
// it. The server is its protocol adapter: it decodes a request, calls
// one method here and encodes the answer.
package storedagents

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/wire"
)

// Kernel is what a change needs of the runner: the committer that writes
// it with its event, and the other servers on the database told of it.
type Kernel interface {
	WriteAgent(ctx context.Context, ch *store.AgentChange, ev *agentsv1.Event) error
	StoredAgentsChanged(ctx context.Context) error
}

// Service changes the stored agents. It is safe for concurrent use.
type Service struct {
	catalog *catalog.Catalog
	store   store.Agents
	kernel  Kernel
	log     *slog.Logger
	now     func() time.Time
}

// New returns a service over the catalog that serves the agents, the
// store that holds them and the kernel that writes their changes.
func New(cat *catalog.Catalog, st store.Agents, kernel Kernel, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{catalog: cat, store: st, kernel: kernel, log: log, now: time.Now}
}

// Create validates a definition and stores it as a new agent written by
// author; it returns the agent as now served.
func (s *Service) Create(ctx context.Context, author, definition string) (*catalog.Agent, error) {
	slug, err := s.catalog.Validate(ctx, "", []byte(definition), false)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, store.AgentCreate, store.StoredAgent{Slug: slug, Definition: definition, Author: author}, 0)
}

// Update validates a definition and stores it as the agent's next
// version; with expected > 0 only if the agent is at that version
// (errs.Aborted, version_mismatch).
func (s *Service) Update(ctx context.Context, author, slug, definition string, expected int64) (*catalog.Agent, error) {
	if slug == "" {
		return nil, slugRequired()
	}
	if _, err := s.catalog.Validate(ctx, slug, []byte(definition), true); err != nil {
		return nil, err
	}
	return s.write(ctx, store.AgentUpdate, store.StoredAgent{Slug: slug, Definition: definition, Author: author}, expected)
}

// Delete deletes a stored agent, keeping its versions, and returns its
// last version; its sessions stay. An agent that another stored agent
// names as a helper is not deleted (errs.FailedPrecondition,
// agent_in_use).
func (s *Service) Delete(ctx context.Context, slug string, expected int64) (int64, error) {
	if slug == "" {
		return 0, slugRequired()
	}
	if err := s.catalog.Snapshot().Writable(slug); err != nil {
		return 0, err
	}
	a := store.StoredAgent{Slug: slug}
	if _, err := s.change(ctx, store.AgentDelete, &a, expected); err != nil {
		return 0, err
	}
	return a.Version, nil
}

// Rollback makes an earlier version current again, as a new version
// holding its definition (restored from it): the history keeps the
// rollback as a change of its own.
func (s *Service) Rollback(ctx context.Context, author, slug string, version, expected int64) (*catalog.Agent, error) {
	if slug == "" {
		return nil, slugRequired()
	}
	if version <= 0 {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "version: %d is not a version (versions start at 1)", version)
	}
	if err := s.catalog.Snapshot().Writable(slug); err != nil {
		return nil, err
	}
	old, err := s.store.StoredAgentVersion(ctx, slug, version)
	if err != nil {
		return nil, err
	}
	// It must load as it is now: a helper it names may be gone.
	if _, err := s.catalog.Validate(ctx, slug, []byte(old.Definition), true); err != nil {
		return nil, err
	}
	return s.write(ctx, store.AgentUpdate, store.StoredAgent{Slug: slug, Definition: old.Definition, Author: author, RestoredFrom: version}, expected)
}

// Versions lists a stored agent's versions, newest first; a file agent
// has none.
func (s *Service) Versions(ctx context.Context, slug string) ([]store.AgentVersion, error) {
	if slug == "" {
		return nil, slugRequired()
	}
	if a, err := s.catalog.Get(slug); err == nil && a.Source == catalog.SourceFile {
		return nil, nil
	}
	return s.store.StoredAgentVersions(ctx, slug)
}

// write stores a created or updated agent and returns it as now served.
func (s *Service) write(ctx context.Context, op store.AgentOp, a store.StoredAgent, expected int64) (*catalog.Agent, error) {
	snap, err := s.change(ctx, op, &a, expected)
	if err != nil {
		return nil, err
	}
	served, err := snap.Get(a.Slug)
	if err != nil {
		// Stored, but not among the agents this server serves (it
		// serves one alone): the load errors say why.
		return nil, fmt.Errorf("agent %q was stored at version %d but does not load: %w", a.Slug, a.Version, err)
	}
	return served, nil
}

// attempts bounds the tries of a change that names no version, each
// beaten by another change of the agent that came first.
const attempts = 5

// change commits one change of a, with the event announcing it in the
// same transaction, and serves it. The version it writes is named before
// the transaction, since its event says it: without expected, it follows
// the current one, read again when another change took it first. It
// sets a's version, and returns the catalog the event announced, now
// served.
func (s *Service) change(ctx context.Context, op store.AgentOp, a *store.StoredAgent, expected int64) (*catalog.Snapshot, error) {
	for try := 1; ; try++ {
		if err := s.next(ctx, op, a, expected); err != nil {
			return nil, err
		}
		deleted := op == store.AgentDelete
		ch := &store.AgentChange{Op: op, Agent: *a}
		change := catalog.Change{Deleted: deleted, Agent: catalog.Stored{
			Slug: a.Slug, Version: a.Version, Definition: a.Definition, Created: a.Created, Updated: a.Updated, Generation: a.Generation,
		}}
		snap, err := s.catalog.ChangeStored(ctx, change, func(next *catalog.Snapshot, check catalog.Check) error {
			ch.Check = check
			return s.kernel.WriteAgent(ctx, ch, wire.StoredAgentChanged(next, a.Slug, a.Version, deleted))
		})
		if err != nil && expected == 0 && try < attempts && errs.CodeOf(err) == errs.CodeVersionMismatch {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := s.kernel.StoredAgentsChanged(ctx); err != nil {
			s.log.Warn("tell the other servers of a changed agent", "agent", a.Slug, "error", err.Error())
		}
		return snap, nil
	}
}

// next names the version op writes and the times it keeps: a create
// follows the slug's last version (of an agent deleted before), an
// update the current version, and a delete is of the current version.
func (s *Service) next(ctx context.Context, op store.AgentOp, a *store.StoredAgent, expected int64) error {
	a.Updated = s.now()
	if op == store.AgentCreate {
		a.Version = 1
		versions, err := s.store.StoredAgentVersions(ctx, a.Slug)
		switch {
		case errs.CodeOf(err) == errs.CodeUnknownAgent:
		case err != nil:
			return err
		default:
			a.Version = versions[0].Version + 1
		}
		a.Created, a.Generation = a.Updated, a.Version
		return nil
	}
	cur, err := s.store.GetStoredAgent(ctx, a.Slug)
	if err != nil {
		return err
	}
	if expected > 0 && cur.Version != expected {
		return store.VersionMismatch(a.Slug, cur.Version, expected)
	}
	a.Version, a.Created, a.Generation = cur.Version, cur.Created, cur.Generation
	if op == store.AgentDelete {
		a.Definition = cur.Definition
	} else {
		a.Version++
	}
	return nil
}

func slugRequired() error {
	return errs.Invalid(errs.CodeInvalidArgument, "slug is required")
}
