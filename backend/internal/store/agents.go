package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
)

// Agents reads the agents stored in the database and every version of
// each. Versions of one slug run 1, 2, … and are never reused: a deleted
// agent keeps its versions, and one created again under its slug goes on
// from the last. They are written by a Change (Change.Agent), in the
// transaction that logs the event announcing them.
type Agents interface {
	// ListStoredAgents returns the current version of every agent not
	// deleted, by slug.
	ListStoredAgents(ctx context.Context) ([]StoredAgent, error)
	// GetStoredAgent returns an agent's current version; a deleted or
	// unknown slug is errs.NotFound (unknown_agent).
	GetStoredAgent(ctx context.Context, slug string) (StoredAgent, error)
	// StoredAgentVersion returns one version of an agent as it is now: a
	// version of its current generation. Another version, or a deleted or
	// unknown agent, is errs.NotFound (unknown_version, unknown_agent).
	// Generation is the agent's; Updated is when the version was written.
	StoredAgentVersion(ctx context.Context, slug string, version int64) (StoredAgent, error)
	// StoredAgentVersions returns every version of a slug, newest first,
	// also of a deleted agent; a slug never stored is errs.NotFound
	// (unknown_agent).
	StoredAgentVersions(ctx context.Context, slug string) ([]AgentVersion, error)
}

// AgentOp is what an AgentChange does to its agent.
type AgentOp int

const (
	// AgentCreate stores the first version of a new agent, or the next
	// version of a deleted one.
	AgentCreate AgentOp = iota + 1
	// AgentUpdate stores the next version of an agent.
	AgentUpdate
	// AgentDelete marks an agent deleted, keeping its versions.
	AgentDelete
)

// AgentChange writes one stored agent in a Change. The version is the
// caller's to name, so that the event announcing the change, written in
// the same transaction, can say it: Agent.Version must follow the agent's
// newest version (a create: 1 for a slug never stored; an update), or be
// its current one (a delete); another is errs.Aborted (version_mismatch).
// A create of a slug an agent not deleted has, in any case, is
// errs.Conflict (agent_exists); an update or delete of a deleted or
// unknown slug errs.NotFound (unknown_agent).
type AgentChange struct {
	Op AgentOp
	// Agent is the version written: Slug, Version, Definition, Author,
	// RestoredFrom, and Updated, the time of the change. On success
	// Created and Generation are set as stored.
	Agent StoredAgent
	// Check, when set, judges the stored agents as the transaction reads
	// them (current versions, by slug) before the write; its error fails
	// the change. Every change of the stored agents takes one lock
	// first, so what Check read is what the write commits beside: a rule
	// between agents (a helper named must exist) cannot be broken by
	// two changes at once.
	Check func(current []StoredAgent) error
}

// StoredAgent is a stored agent at one version.
type StoredAgent struct {
	Slug    string
	Version int64
	// Definition is the agent file JSON text, as given.
	Definition string
	// Author is the identity that wrote this version.
	Author string
	// Created is when the agent was created (its first version since it
	// was last deleted); Updated when this version was written.
	Created, Updated time.Time
	// Generation is the version the agent was created at: an agent
	// deleted and created again under its slug is a new generation.
	Generation int64
	// RestoredFrom is the version this one restored (a rollback); 0 for
	// a create or an ordinary update.
	RestoredFrom int64
}

// AgentVersion is one version of a stored agent.
type AgentVersion struct {
	Slug       string
	Version    int64
	Definition string
	Author     string
	Created    time.Time
	// Current is set for the version an agent not deleted runs.
	Current bool
	// RestoredFrom is the version this one restored, or 0.
	RestoredFrom int64
}

func unknownAgent(slug string) *errs.Error {
	return errs.NotFound(errs.CodeUnknownAgent, "no stored agent %q", slug)
}

type storedAgentRow struct {
	Slug       string `db:"slug"`
	Version    int64  `db:"version"`
	Definition string `db:"definition"`
	Author     string `db:"author"`
	Created    int64  `db:"created"`
	Updated    int64  `db:"updated"`
	Generation int64  `db:"generation"`
	Restored   int64  `db:"restored_from"`
}

func (r storedAgentRow) agent() StoredAgent {
	return StoredAgent{Slug: r.Slug, Version: r.Version, Definition: r.Definition, Author: r.Author,
		Created: fromNanos(r.Created), Updated: fromNanos(r.Updated), Generation: r.Generation, RestoredFrom: r.Restored}
}

const sqlStoredAgents = `SELECT a.slug, a.version, v.definition, v.author, a.created, a.updated, a.generation, v.restored_from
	FROM stored_agents a JOIN agent_versions v ON v.slug = a.slug AND v.version = a.version
	WHERE a.deleted = 0`

// ListStoredAgents implements Agents.
func (s *SQL) ListStoredAgents(ctx context.Context) ([]StoredAgent, error) {
	var rows []storedAgentRow
	if err := s.read.SelectContext(ctx, &rows, sqlStoredAgents+` ORDER BY a.slug`); err != nil {
		return nil, s.translate(err, nil, "list stored agents")
	}
	out := make([]StoredAgent, len(rows))
	for i, r := range rows {
		out[i] = r.agent()
	}
	return out, nil
}

// GetStoredAgent implements Agents.
func (s *SQL) GetStoredAgent(ctx context.Context, slug string) (StoredAgent, error) {
	return s.getStoredAgent(ctx, s.read, slug)
}

func (s *SQL) getStoredAgent(ctx context.Context, q sqlx.QueryerContext, slug string) (StoredAgent, error) {
	var r storedAgentRow
	if err := sqlx.GetContext(ctx, q, &r, s.read.Rebind(sqlStoredAgents+` AND a.slug = ?`), slug); err != nil {
		return StoredAgent{}, s.translate(err, unknownAgent(slug), "get stored agent %s", slug)
	}
	return r.agent(), nil
}

// writeAgent applies an AgentChange inside tx.
func (s *SQL) writeAgent(ctx context.Context, tx *sqlx.Tx, c *AgentChange) error {
	a := &c.Agent
	if s.dialect.LockName != "" {
		// One lock for every change of the stored agents: two servers
		// creating one slug in two cases each find the other, and a Check
		// reads what no other change alters before this one commits.
		if _, err := tx.ExecContext(ctx, tx.Rebind(s.dialect.LockName), "stored-agents"); err != nil {
			return s.translate(err, nil, "lock the stored agents")
		}
	}
	if c.Check != nil {
		var rows []storedAgentRow
		if err := tx.SelectContext(ctx, &rows, sqlStoredAgents+` ORDER BY a.slug`); err != nil {
			return s.translate(err, nil, "list stored agents")
		}
		current := make([]StoredAgent, len(rows))
		for i, r := range rows {
			current[i] = r.agent()
		}
		if err := c.Check(current); err != nil {
			return err
		}
	}
	switch c.Op {
	case AgentCreate:
		return s.createAgent(ctx, tx, a)
	case AgentUpdate:
		return s.updateAgent(ctx, tx, a)
	case AgentDelete:
		return s.deleteAgent(ctx, tx, a)
	}
	return fmt.Errorf("change of stored agent %s: unknown operation %d", a.Slug, c.Op)
}

func (s *SQL) createAgent(ctx context.Context, tx *sqlx.Tx, a *StoredAgent) error {
	var prev struct {
		Version int64 `db:"version"`
		Deleted int64 `db:"deleted"`
	}
	found := tx.GetContext(ctx, &prev, tx.Rebind(`SELECT version, deleted FROM stored_agents WHERE slug = ?`), a.Slug)
	exists := errs.Conflict(errs.CodeAgentExists, "an agent with the slug %q is already stored", a.Slug)
	// Slugs differing only in case name one agent (slugs are ASCII,
	// so lower is the same on both databases).
	var other string
	err := tx.GetContext(ctx, &other, tx.Rebind(`SELECT slug FROM stored_agents WHERE deleted = 0 AND lower(slug) = lower(?) AND slug <> ?`), a.Slug, a.Slug)
	switch {
	case err == nil:
		return errs.Conflict(errs.CodeAgentExists, "the slug %q is the stored agent %q's in other case; slugs differing only in case name one agent", a.Slug, other)
	case !errors.Is(err, sql.ErrNoRows):
		return s.translate(err, nil, "create stored agent %s", a.Slug)
	}
	at := nanos(a.Updated)
	switch err := found; {
	case errors.Is(err, sql.ErrNoRows):
		if a.Version != 1 {
			return VersionMismatch(a.Slug, 0, a.Version-1)
		}
		_, err = tx.ExecContext(ctx, tx.Rebind(`INSERT INTO stored_agents (slug, version, created, updated, generation) VALUES (?, 1, ?, ?, 1)`), a.Slug, at, at)
		if errs.KindOf(s.translate(err, nil, "")) == errs.KindConflict {
			return exists // created meanwhile by another server
		}
		if err != nil {
			return s.translate(err, nil, "create stored agent %s", a.Slug)
		}
	case err != nil:
		return s.translate(err, nil, "create stored agent %s", a.Slug)
	case prev.Deleted == 0:
		return exists
	case a.Version != prev.Version+1:
		return VersionMismatch(a.Slug, prev.Version, a.Version-1)
	default:
		// Guarded by the version read: a concurrent creation makes it
		// change no row.
		res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE stored_agents SET version = ?, generation = ?, created = ?, updated = ?, deleted = 0
			WHERE slug = ? AND version = ? AND deleted <> 0`), a.Version, a.Version, at, at, a.Slug, prev.Version)
		if err := s.oneRow(res, err, exists, "create stored agent %s", a.Slug); err != nil {
			return err
		}
	}
	a.Created, a.Generation, a.RestoredFrom = a.Updated, a.Version, 0
	return s.insertAgentVersion(ctx, tx, *a)
}

func (s *SQL) updateAgent(ctx context.Context, tx *sqlx.Tx, a *StoredAgent) error {
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE stored_agents SET version = ?, updated = ?
		WHERE slug = ? AND deleted = 0 AND version = ?`), a.Version, nanos(a.Updated), a.Slug, a.Version-1)
	if err := s.oneRow(res, err, nil, "update stored agent %s", a.Slug); err != nil {
		if errors.Is(err, errNoRow) {
			return s.whyNot(ctx, tx, a.Slug, a.Version-1)
		}
		return err
	}
	var r storedAgentRow
	if err := tx.GetContext(ctx, &r, tx.Rebind(`SELECT slug, version, created, updated, generation FROM stored_agents WHERE slug = ?`), a.Slug); err != nil {
		return s.translate(err, nil, "update stored agent %s", a.Slug)
	}
	a.Created, a.Generation = fromNanos(r.Created), r.Generation
	return s.insertAgentVersion(ctx, tx, *a)
}

func (s *SQL) deleteAgent(ctx context.Context, tx *sqlx.Tx, a *StoredAgent) error {
	cur, err := s.getStoredAgent(ctx, tx, a.Slug)
	if err != nil {
		return err
	}
	if cur.Version != a.Version {
		return VersionMismatch(a.Slug, cur.Version, a.Version)
	}
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE stored_agents SET deleted = ?, updated = ?
		WHERE slug = ? AND deleted = 0 AND version = ?`), nanos(a.Updated), nanos(a.Updated), a.Slug, cur.Version)
	if err := s.oneRow(res, err, nil, "delete stored agent %s", a.Slug); err != nil {
		if errors.Is(err, errNoRow) {
			return s.whyNot(ctx, tx, a.Slug, a.Version)
		}
		return err
	}
	a.Created, a.Generation = cur.Created, cur.Generation
	return nil
}

// StoredAgentVersions implements Agents.
func (s *SQL) StoredAgentVersions(ctx context.Context, slug string) ([]AgentVersion, error) {
	var rows []struct {
		storedAgentRow
		Current bool `db:"current"`
	}
	err := s.read.SelectContext(ctx, &rows, s.read.Rebind(`SELECT v.slug, v.version, v.definition, v.author, v.created, v.created AS updated,
		a.generation, v.restored_from, (a.deleted = 0 AND a.version = v.version) AS current
		FROM agent_versions v JOIN stored_agents a ON a.slug = v.slug
		WHERE v.slug = ? ORDER BY v.version DESC`), slug)
	if err != nil {
		return nil, s.translate(err, nil, "list versions of %s", slug)
	}
	if len(rows) == 0 {
		return nil, unknownAgent(slug)
	}
	out := make([]AgentVersion, len(rows))
	for i, r := range rows {
		out[i] = AgentVersion{Slug: r.Slug, Version: r.Version, Definition: r.Definition, Author: r.Author,
			Created: fromNanos(r.Created), Current: r.Current, RestoredFrom: r.Restored}
	}
	return out, nil
}

// StoredAgentVersion implements Agents.
func (s *SQL) StoredAgentVersion(ctx context.Context, slug string, version int64) (StoredAgent, error) {
	var r storedAgentRow
	err := s.read.GetContext(ctx, &r, s.read.Rebind(`SELECT v.slug, v.version, v.definition, v.author, a.created, v.created AS updated, a.generation, v.restored_from
		FROM agent_versions v JOIN stored_agents a ON a.slug = v.slug
		WHERE v.slug = ? AND v.version = ? AND a.deleted = 0 AND v.version >= a.generation`), slug, version)
	if err == nil {
		return r.agent(), nil
	}
	if errs.KindOf(s.translate(err, unknownAgent(slug), "")) != errs.KindNotFound {
		return StoredAgent{}, s.translate(err, nil, "read version %d of agent %s", version, slug)
	}
	cur, err := s.GetStoredAgent(ctx, slug)
	if err != nil {
		return StoredAgent{}, err
	}
	return StoredAgent{}, errs.NotFound(errs.CodeUnknownVersion, "agent %q has no version %d as it is now (it has versions %d to %d)",
		slug, version, cur.Generation, cur.Version)
}

func (s *SQL) insertAgentVersion(ctx context.Context, tx *sqlx.Tx, a StoredAgent) error {
	_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO agent_versions (slug, version, definition, author, created, restored_from) VALUES (?, ?, ?, ?, ?, ?)`),
		a.Slug, a.Version, a.Definition, a.Author, nanos(a.Updated), a.RestoredFrom)
	return s.translate(err, nil, "store version %d of agent %s", a.Version, a.Slug)
}

// errNoRow is oneRow's answer for a statement that changed no row when
// the caller gives no error of its own for it.
var errNoRow = errors.New("no row changed")

// oneRow checks that a guarded statement changed a row: none is none
// (or errNoRow).
func (s *SQL) oneRow(res sql.Result, err error, none error, format string, args ...any) error {
	if err != nil {
		return s.translate(err, nil, format, args...)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf(format+": %w", append(args, err)...)
	}
	if n == 0 {
		if none != nil {
			return none
		}
		return errNoRow
	}
	return nil
}

// whyNot says why a guarded write of a stored agent changed nothing: the
// agent is deleted or unknown, or its version is not the one expected.
func (s *SQL) whyNot(ctx context.Context, tx *sqlx.Tx, slug string, expected int64) error {
	cur, err := s.getStoredAgent(ctx, tx, slug)
	if err != nil {
		return err
	}
	return VersionMismatch(slug, cur.Version, expected)
}

// VersionMismatch is the error of a change of a stored agent based on a
// version that is not its current one.
func VersionMismatch(slug string, current, expected int64) *errs.Error {
	return errs.Aborted(errs.CodeVersionMismatch, "agent %q is at version %d, not %d: read it again and retry", slug, current, expected)
}
