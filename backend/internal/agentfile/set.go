package agentfile

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrUnknownAgent is wrapped by the error Select and Only return for a slug
// no loaded agent has.
var ErrUnknownAgent = errors.New("unknown agent")

// Set is the result of a load: the agents that loaded, by slug, and the
// problems found. It is read-only and safe for concurrent use.
type Set struct {
	agents   map[string]*Agent
	roots    []string
	rejected map[string]*Error // slugs of agents read but rejected, and why

	// Errors has one entry per file that did not load.
	Errors []*Error
	// Warnings are problems that did not stop a file from loading.
	Warnings []*Error
}

// Get returns the agent with this slug, or nil.
func (s *Set) Get(slug string) *Agent {
	return s.agents[slug]
}

// Len is the number of agents, roots and helpers.
func (s *Set) Len() int {
	return len(s.agents)
}

// List returns every agent, roots and helpers, sorted by slug.
func (s *Set) List() []*Agent {
	list := make([]*Agent, 0, len(s.agents))
	for _, a := range s.agents {
		list = append(list, a)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Slug < list[j].Slug })
	return list
}

// Roots returns the root agents in load order: files first, as given, then
// each directory's files by name.
func (s *Set) Roots() []*Agent {
	roots := make([]*Agent, 0, len(s.roots))
	for _, slug := range s.roots {
		roots = append(roots, s.agents[slug])
	}
	return roots
}

// Err joins Errors into one error, or returns nil when there are none.
func (s *Set) Err() error {
	errs := make([]error, 0, len(s.Errors))
	for _, e := range s.Errors {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Select returns the agent with this slug. When there is none the error
// says why: the agent's file did not load, or no agent has that slug (and
// which slugs exist); the latter wraps ErrUnknownAgent.
func (s *Set) Select(slug string) (*Agent, error) {
	if a := s.agents[slug]; a != nil {
		return a, nil
	}
	if err, ok := s.rejected[slug]; ok {
		return nil, fmt.Errorf("agent %q did not load: %w", slug, err)
	}
	if len(s.agents) == 0 {
		return nil, fmt.Errorf("%w %q (no agents loaded)", ErrUnknownAgent, slug)
	}
	slugs := make([]string, 0, len(s.agents))
	for _, a := range s.List() {
		slugs = append(slugs, a.Slug)
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownAgent, slug, strings.Join(slugs, ", "))
}

// Only returns a Set holding the agent with this slug, as the only root,
// and its helpers, recursively. Errors and warnings are kept: they are
// still true of the files. The agents are copies; s is unchanged.
func (s *Set) Only(slug string) (*Set, error) {
	if _, err := s.Select(slug); err != nil {
		return nil, err
	}
	subset := &Set{
		agents:   map[string]*Agent{},
		roots:    []string{slug},
		rejected: s.rejected,
		Errors:   s.Errors,
		Warnings: s.Warnings,
	}
	queue := []string{slug}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		if _, done := subset.agents[next]; done {
			continue
		}
		agent := *s.agents[next]
		subset.agents[next] = &agent
		queue = append(queue, agent.Helpers...)
	}
	assignParents(subset.agents, subset.roots)
	return subset, nil
}
