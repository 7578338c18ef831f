package catalog

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/confine"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/jsoncheck"
	"github.com/agents-os/agents/backend/internal/store"
)

// Stored is an agent stored in the database, at its current version.
type Stored struct {
	Slug    string
	Version int64
	// Definition is the agent file JSON text.
	Definition       string
	Created, Updated time.Time
	// Generation is the version the agent was created at (see
	// store.StoredAgent).
	Generation int64
}

// FromStore reads the stored agents of a store, for Options.Stored.
func FromStore(st store.Agents) func(ctx context.Context) ([]Stored, error) {
	return func(ctx context.Context) ([]Stored, error) {
		list, err := st.ListStoredAgents(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]Stored, len(list))
		for i, a := range list {
			out[i] = storedOf(a)
		}
		return out, nil
	}
}

// VersionFromStore reads one version of a stored agent, for
// Options.StoredVersion.
func VersionFromStore(st store.Agents) func(ctx context.Context, slug string, version int64) (Stored, error) {
	return func(ctx context.Context, slug string, version int64) (Stored, error) {
		a, err := st.StoredAgentVersion(ctx, slug, version)
		return storedOf(a), err
	}
}

func storedOf(a store.StoredAgent) Stored {
	return Stored{Slug: a.Slug, Version: a.Version, Definition: a.Definition, Created: a.Created, Updated: a.Updated, Generation: a.Generation}
}

// withStored reads the stored agents and assembles them with the file
// agents f. When the database does not answer, the stored agents read
// last are served, and the failure is a load problem.
func (c *Catalog) withStored(ctx context.Context, f *files) *Snapshot {
	var problems []*agentfile.Error
	if c.opts.Stored != nil {
		list, err := c.opts.Stored(ctx)
		if err != nil {
			problems = append(problems, &agentfile.Error{Reason: "read the stored agents: " + err.Error() + " (serving those read before)"})
		} else {
			c.stored = list
		}
	}
	return c.snapshotOf(ctx, f, c.stored, problems)
}

// snapshotOf builds the stored agents list beside the file agents f into
// a snapshot, with problems among its load errors.
func (c *Catalog) snapshotOf(ctx context.Context, f *files, list []Stored, problems []*agentfile.Error) *Snapshot {
	agents, more := c.buildStored(ctx, f, list)
	snap := assemble(f, agents, append(problems, more...))
	if c.opts.Only != "" {
		snap = snap.only(c.opts.Only)
	}
	return snap
}

// storedDef is a stored agent being built.
type storedDef struct {
	stored Stored
	def    *agentfile.Definition
}

// buildStored builds the stored agents beside the file agents f. A
// stored agent is refused when its definition is bad, its slug is a file
// agent's (files win: they are the operator's), it runs a program outside
// the allowed directories, or it names a helper no agent has (which
// refuses those naming it in turn).
func (c *Catalog) buildStored(ctx context.Context, f *files, list []Stored) ([]*Agent, []*agentfile.Error) {
	fileBySlug := map[string]*agentfile.Agent{}
	for _, a := range f.agents {
		fileBySlug[a.Slug] = a.Agent
	}
	var problems []*agentfile.Error
	live := map[string]*storedDef{}
	var order []string
	for _, s := range list {
		def, perr := c.parse([]byte(s.Definition))
		switch {
		case perr != nil:
		case def.Agent.Slug != s.Slug:
			perr = &agentfile.Error{Field: "contents.slug", Reason: fmt.Sprintf("%q is not the slug %q it is stored under", def.Agent.Slug, s.Slug)}
		case fileBySlug[s.Slug] != nil:
			perr = &agentfile.Error{Field: "contents.slug", Reason: fmt.Sprintf("the agent file %s has the slug %q too; the file agent is served", fileBySlug[s.Slug].File, s.Slug)}
		}
		if perr != nil {
			// The slug is the row's, as stored: a load error must be
			// UTF-8 to be reported at all.
			perr.Agent = strings.ToValidUTF8(s.Slug, "\uFFFD")
			problems = append(problems, perr)
			continue
		}
		live[s.Slug] = &storedDef{stored: s, def: def}
		order = append(order, s.Slug)
	}
	lookup := func(slug string) *agentfile.Agent {
		if a := fileBySlug[slug]; a != nil {
			return a
		}
		if d := live[slug]; d != nil {
			return d.def.Agent
		}
		return nil
	}
	for changed := true; changed; {
		changed = false
		for _, slug := range order {
			d := live[slug]
			if d == nil {
				continue
			}
			if perr := d.def.Resolve(lookup); perr != nil {
				perr.Agent = slug
				problems = append(problems, perr)
				delete(live, slug)
				changed = true
			}
		}
	}
	var defs []*storedDef
	var agents []*agentfile.Agent
	for _, slug := range order {
		if d := live[slug]; d != nil {
			defs = append(defs, d)
			agents = append(agents, d.def.Agent)
		}
	}
	built, more := buildAll(ctx, agents, lookup, c.storedOpts())
	var out []*Agent
	for i, a := range built {
		problems = append(problems, more[i]...)
		if a == nil {
			continue
		}
		s := defs[i].stored
		a.setStored(s)
		out = append(out, a)
	}
	return out, problems
}

// setStored makes a the stored agent s.
func (a *Agent) setStored(s Stored) {
	a.Source, a.Version, a.Definition, a.Created, a.Updated, a.Generation = SourceStored, s.Version, s.Definition, s.Created, s.Updated, s.Generation
}

// versionKey names one version of one generation of a stored agent.
type versionKey struct {
	slug                string
	generation, version int64
}

// Version returns a stored agent at one version of its current
// generation: the agent served when that is its current version, else
// that version built as stored agents are, with the helpers served now.
// A version built is kept until the catalog next changes. A file agent
// has no versions (errs.Invalid, unknown_version); a version the agent
// does not have is errs.NotFound (unknown_version); one that no longer
// loads (a helper it names was deleted) errs.Invalid.
func (c *Catalog) Version(ctx context.Context, slug string, version int64) (*Agent, error) {
	snap := c.Snapshot()
	cur, err := snap.Get(slug)
	switch {
	case err != nil:
		return nil, err
	case cur.Source != SourceStored:
		return nil, errs.Invalid(errs.CodeUnknownVersion, "agent %q comes from an agent file, which has no versions", slug)
	case cur.Version == version:
		return cur, nil
	case c.opts.StoredVersion == nil:
		return nil, errs.NotFound(errs.CodeUnknownVersion, "agent %q has no version %d", slug, version)
	}
	key := versionKey{slug: slug, generation: cur.Generation, version: version}
	c.mu.RLock()
	built := c.versions[key]
	c.mu.RUnlock()
	if built != nil {
		return built, nil
	}
	s, err := c.opts.StoredVersion(ctx, slug, version)
	if err != nil {
		return nil, err
	}
	if s.Generation != cur.Generation {
		return nil, errs.NotFound(errs.CodeUnknownVersion, "agent %q has no version %d as it is now", slug, version)
	}
	def, perr := c.parse([]byte(s.Definition))
	if perr != nil {
		return nil, errs.Invalid(errs.CodeInvalidAgent, "version %d of agent %q does not load: %s", version, slug, perr.Error())
	}
	lookup := func(h string) *agentfile.Agent {
		if h == slug {
			return def.Agent
		}
		if a := snap.every[h]; a != nil {
			return a.Agent
		}
		return nil
	}
	if perr := def.Resolve(lookup); perr != nil {
		return nil, errs.Invalid(errs.CodeInvalidAgent, "version %d of agent %q does not load: %s", version, slug, perr.Error())
	}
	a, problems := buildAgent(ctx, lookup, def.Agent, c.storedOpts())
	if a == nil {
		return nil, errs.Invalid(errs.CodeInvalidAgent, "version %d of agent %q does not load: %s", version, slug, problems[0].Error())
	}
	a.setStored(s)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snap == snap {
		// Kept only while the helpers it was built with are served.
		c.versions[key] = a
	}
	return a, nil
}

// parse reads a stored definition and applies the rules of stored agents
// that need no other agent: it is UTF-8, and the programs it runs lie in
// the allowed directories. A definition that is not UTF-8 cannot be
// served (every answer carrying it would fail to encode), so it is
// refused when stored, and a row an older server stored so is a load
// error of its own rather than every listing's failure.
func (c *Catalog) parse(data []byte) (*agentfile.Definition, *agentfile.Error) {
	if !utf8.Valid(data) {
		return nil, &agentfile.Error{Reason: fmt.Sprintf("the definition is not UTF-8 (byte %d is not): an agent file's JSON is UTF-8 text", invalidAt(data))}
	}
	def, _, perr := agentfile.Loader{WorkDir: c.opts.WorkDir}.ParseDefinition(data)
	if perr != nil {
		return nil, perr
	}
	if perr := c.checkPrograms(def.Agent); perr != nil {
		return nil, perr
	}
	return def, nil
}

// Validate checks a definition for a stored agent as `agents check`
// checks an agent file, and with the rules of stored agents: a stored
// agent is created (update false) under a slug no agent has, or updates
// the stored agent slug names, keeping its slug. Problems of the
// definition are errs.Invalid naming the field (metadata "field"); a slug
// another agent has is errs.Conflict (agent_exists), a file agent to
// update errs.Conflict (agent_read_only), a stored agent that is not
// there errs.NotFound (unknown_agent). It returns the definition's slug.
func (c *Catalog) Validate(ctx context.Context, slug string, data []byte, update bool) (string, error) {
	snap := c.Snapshot()
	if update {
		if err := snap.Writable(slug); err != nil {
			return "", err
		}
	}
	// A key given twice would keep its last value silently: refused, as
	// every JSON body the API reads refuses it. Only here, not when the
	// stored agents are read, so rows stored before keep loading.
	if field, twice := jsoncheck.RepeatedKey(data); twice {
		return "", invalid(&agentfile.Error{Field: field, Reason: "is given twice: give each key once"})
	}
	def, perr := c.parse(data)
	if perr != nil {
		return "", invalid(perr)
	}
	a := def.Agent
	switch existing := snap.every[a.Slug]; {
	case update && a.Slug != slug:
		return "", invalid(&agentfile.Error{Field: "contents.slug", Reason: fmt.Sprintf("is %q, but the agent updated is %q: a stored agent keeps its slug (create one under the new slug and delete this one)", a.Slug, slug)})
	case update:
	case existing != nil && existing.Source == SourceFile:
		return "", errs.Conflict(errs.CodeAgentExists, "the slug %q is the agent file %s's; file agents are read-only to the API, and a slug is unique across files and stored agents", a.Slug, existing.File)
	case existing != nil:
		return "", errs.Conflict(errs.CodeAgentExists, "an agent with the slug %q is already stored; update it instead", a.Slug)
	case !update:
		if other := snap.folded(a.Slug); other != nil {
			return "", errs.Conflict(errs.CodeAgentExists, "the slug %q is the agent %q's in other case; slugs differing only in case name one agent", a.Slug, other.Slug)
		}
	}
	lookup := func(s string) *agentfile.Agent {
		if s == a.Slug {
			return a // a recursive agent is its own helper
		}
		if h := snap.every[s]; h != nil {
			return h.Agent
		}
		return nil
	}
	if perr := def.Resolve(lookup); perr != nil {
		return "", invalid(perr)
	}
	built, problems := buildAgent(ctx, lookup, a, c.storedOpts())
	if len(problems) > 0 {
		return "", invalid(problems[0])
	}
	if built == nil {
		return "", errs.Invalid(errs.CodeInvalidAgent, "the agent does not load")
	}
	return a.Slug, nil
}

// Writable says whether the API may update or delete the agent with this
// slug: a stored agent, not a file agent (errs.Conflict, agent_read_only).
// A slug no agent has is errs.NotFound (unknown_agent); a stored agent the
// catalog refused is writable, which is how it is mended.
func (s *Snapshot) Writable(slug string) error {
	a := s.every[slug]
	switch {
	case a != nil && a.Source == SourceFile:
		return errs.Conflict(errs.CodeAgentReadOnly, "agent %q comes from the agent file %s: file agents are read-only to the API (edit the file and reload)", slug, a.File)
	case a == nil && s.files != nil && s.files.set.Get(slug) != nil:
		return errs.Conflict(errs.CodeAgentReadOnly, "agent %q comes from the agent file %s: file agents are read-only to the API (edit the file and reload)", slug, s.files.set.Get(slug).File)
	}
	return nil
}

// folded is the agent whose slug is slug in other case, if any.
func (s *Snapshot) folded(slug string) *Agent {
	for other, a := range s.every {
		if other != slug && strings.EqualFold(other, slug) {
			return a
		}
	}
	return nil
}

// invalid is a definition's problem as the API reports it: the field
// first, as `agents check` prints it.
func invalid(e *agentfile.Error) *errs.Error {
	switch {
	case e.Line > 0:
		return errs.Invalid(errs.CodeInvalidAgent, "line %d, column %d: %s", e.Line, e.Column, e.Reason)
	case e.Field != "":
		return errs.Invalid(errs.CodeInvalidAgent, "%s: %s", e.Field, e.Reason).With("field", e.Field)
	}
	return errs.Invalid(errs.CodeInvalidAgent, "%s", e.Reason)
}

// invalidAt is the offset of the first byte of data that is not UTF-8.
func invalidAt(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// checkPrograms refuses a stored agent that would run a program outside
// the directories the operator allows: its bash toolboxes, its tool
// directory and the commands of its MCP servers. An API call must never
// be a way to run an arbitrary executable.
func (c *Catalog) checkPrograms(a *agentfile.Agent) *agentfile.Error {
	for i, box := range a.BashToolboxes {
		if why := c.outside(box.Path); why != "" {
			return &agentfile.Error{Field: fmt.Sprintf("contents.bashToolboxes[%d]", i), Reason: why}
		}
	}
	if a.ToolDirectory != "" {
		if why := c.outside(a.ToolDirectory); why != "" {
			return &agentfile.Error{Field: "contents.toolDirectory", Reason: why}
		}
	}
	for _, src := range a.SkillSources {
		// A skill holds scripts, and files its model reads.
		if why := c.outside(src.Path); why != "" {
			return &agentfile.Error{Field: src.Field, Reason: why}
		}
	}
	if e := c.checkBuiltin(a); e != nil {
		return e
	}
	for i, m := range a.MCPServers {
		if m.Kind != agentfile.MCPKindSimpleBinary {
			continue
		}
		field := fmt.Sprintf("contents.mcpServers[%d].executable", i)
		program := m.Executable
		if !strings.ContainsRune(program, filepath.Separator) {
			found, err := exec.LookPath(program)
			if err != nil {
				return &agentfile.Error{Field: field, Reason: fmt.Sprintf("%q is not found in PATH: %v", program, err)}
			}
			program = found
		}
		if why := c.outside(program); why != "" {
			return &agentfile.Error{Field: field, Reason: why}
		}
	}
	return nil
}

// outside says why path is not under an allowed directory, or "" when it
// is. Symbolic links are followed on both sides, also where the path
// does not exist yet, so a link cannot lead out of an allowed directory.
// (The program is checked again when it starts: see confine.)
func (c *Catalog) outside(path string) string {
	if len(c.opts.ToolDirs) == 0 {
		return fmt.Sprintf("%s: a stored agent runs no program unless the server allows directories for them (agents serve --stored-agent-tool-dirs), and this one allows none", path)
	}
	if why := confine.Outside(c.absolute(path), c.storedOpts().within); why != "" {
		return fmt.Sprintf("%s is not under a directory this server allows for the programs of stored agents (%s)", path, strings.Join(c.opts.ToolDirs, ", "))
	}
	return ""
}

// storedOpts are the options stored agents are built with: their
// programs are judged again, in the allowed folders, when they start.
func (c *Catalog) storedOpts() Options {
	opts := c.opts
	opts.within = make([]string, len(c.opts.ToolDirs))
	for i, dir := range c.opts.ToolDirs {
		opts.within[i] = c.absolute(dir)
	}
	return opts
}

// absolute is path made absolute from the catalog's working directory;
// not cleaned, since a ".." after a link is confine's to follow.
func (c *Catalog) absolute(path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	base := c.opts.WorkDir
	if base == "" {
		base, _ = os.Getwd()
	}
	return base + string(filepath.Separator) + path
}
