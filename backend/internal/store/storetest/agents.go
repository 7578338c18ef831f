package storetest

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
)

func storedAgent(slug, def string, when time.Time) store.StoredAgent {
	return store.StoredAgent{Slug: slug, Definition: def, Author: "admin", Updated: when}
}

// writeAgent commits one change of a stored agent, a at version, and
// returns the agent as the change left it.
func writeAgent(ctx context.Context, s store.Store, op store.AgentOp, a store.StoredAgent, version int64) (store.StoredAgent, error) {
	a.Version = version
	ch := &store.AgentChange{Op: op, Agent: a}
	err := s.Commit(ctx, &store.Change{Agent: ch})
	return ch.Agent, err
}

func createAgent(ctx context.Context, s store.Store, a store.StoredAgent, version int64) (store.StoredAgent, error) {
	return writeAgent(ctx, s, store.AgentCreate, a, version)
}

func updateAgent(ctx context.Context, s store.Store, a store.StoredAgent, version int64) (store.StoredAgent, error) {
	return writeAgent(ctx, s, store.AgentUpdate, a, version)
}

func deleteAgent(ctx context.Context, s store.Store, slug string, version int64, when time.Time) error {
	_, err := writeAgent(ctx, s, store.AgentDelete, store.StoredAgent{Slug: slug, Updated: when}, version)
	return err
}

// testStoredAgents walks an agent through its life: created at version 1,
// updated, deleted with its versions kept, created
// again going on from the last version.
func testStoredAgents(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()

	list, err := s.ListStoredAgents(ctx)
	noErr(t, err, "list empty")
	equal(t, "none stored", len(list), 0)
	_, err = s.GetStoredAgent(ctx, "a")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownAgent)
	_, err = s.StoredAgentVersions(ctx, "a")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownAgent)

	a1, err := createAgent(ctx, s, storedAgent("a", `{"v":1}`, at(0)), 1)
	noErr(t, err, "create")
	equal(t, "created", a1, store.StoredAgent{Slug: "a", Version: 1, Definition: `{"v":1}`, Author: "admin", Created: at(0), Updated: at(0), Generation: 1})
	_, err = createAgent(ctx, s, storedAgent("a", `{"v":"again"}`, at(time.Second)), 1)
	wantErr(t, err, errs.KindConflict, errs.CodeAgentExists)
	_, err = createAgent(ctx, s, storedAgent("b", `{"b":1}`, at(time.Second)), 1)
	noErr(t, err, "create b")

	a2, err := updateAgent(ctx, s, storedAgent("a", `{"v":2}`, at(time.Minute)), 2)
	noErr(t, err, "update at 1")
	equal(t, "updated", a2, store.StoredAgent{Slug: "a", Version: 2, Definition: `{"v":2}`, Author: "admin", Created: at(0), Updated: at(time.Minute), Generation: 1})
	_, err = updateAgent(ctx, s, storedAgent("a", `{"v":"stale"}`, at(time.Minute)), 2)
	wantErr(t, err, errs.KindAborted, errs.CodeVersionMismatch)
	a3, err := updateAgent(ctx, s, storedAgent("a", `{"v":3}`, at(2*time.Minute)), 3)
	noErr(t, err, "update to 3")
	equal(t, "version", a3.Version, int64(3))
	_, err = updateAgent(ctx, s, storedAgent("ghost", `{}`, at(time.Minute)), 1)
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownAgent)

	got, err := s.GetStoredAgent(ctx, "a")
	noErr(t, err, "get")
	equal(t, "current", got, a3)
	list, err = s.ListStoredAgents(ctx)
	noErr(t, err, "list")
	equal(t, "listed", []string{list[0].Slug, list[1].Slug}, []string{"a", "b"})
	equal(t, "listed current", list[0], a3)

	err = deleteAgent(ctx, s, "a", 2, at(3*time.Minute))
	wantErr(t, err, errs.KindAborted, errs.CodeVersionMismatch)
	noErr(t, deleteAgent(ctx, s, "a", 3, at(3*time.Minute)), "delete")
	_, err = s.GetStoredAgent(ctx, "a")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownAgent)
	err = deleteAgent(ctx, s, "a", 3, at(3*time.Minute))
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownAgent)
	_, err = updateAgent(ctx, s, storedAgent("a", `{}`, at(4*time.Minute)), 4)
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownAgent)
	list, err = s.ListStoredAgents(ctx)
	noErr(t, err, "list after delete")
	equal(t, "left", len(list), 1)

	versions, err := s.StoredAgentVersions(ctx, "a")
	noErr(t, err, "versions of deleted")
	equal(t, "versions", versions, []store.AgentVersion{
		{Slug: "a", Version: 3, Definition: `{"v":3}`, Author: "admin", Created: at(2 * time.Minute)},
		{Slug: "a", Version: 2, Definition: `{"v":2}`, Author: "admin", Created: at(time.Minute)},
		{Slug: "a", Version: 1, Definition: `{"v":1}`, Author: "admin", Created: at(0)},
	})

	// A create names the version it writes: the one after the last.
	_, err = createAgent(ctx, s, storedAgent("a", `{"v":4}`, at(5*time.Minute)), 1)
	wantErr(t, err, errs.KindAborted, errs.CodeVersionMismatch)
	again, err := createAgent(ctx, s, storedAgent("a", `{"v":4}`, at(5*time.Minute)), 4)
	noErr(t, err, "create again")
	equal(t, "numbering goes on, a new generation", again, store.StoredAgent{Slug: "a", Version: 4, Definition: `{"v":4}`, Author: "admin", Created: at(5 * time.Minute), Updated: at(5 * time.Minute), Generation: 4})
	versions, err = s.StoredAgentVersions(ctx, "a")
	noErr(t, err, "versions")
	equal(t, "newest first", len(versions), 4)
	equal(t, "current", []bool{versions[0].Current, versions[1].Current}, []bool{true, false})

	// One version is read only from the agent's current generation.
	_, err = s.StoredAgentVersion(ctx, "a", 2)
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownVersion)
	_, err = s.StoredAgentVersion(ctx, "a", 9)
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownVersion)
	_, err = s.StoredAgentVersion(ctx, "ghost", 1)
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownAgent)
	restored := storedAgent("a", `{"v":4}`, at(6*time.Minute))
	restored.RestoredFrom = 4
	a5, err := updateAgent(ctx, s, restored, 5)
	noErr(t, err, "restore")
	v4, err := s.StoredAgentVersion(ctx, "a", 4)
	noErr(t, err, "version 4")
	equal(t, "version 4", v4, store.StoredAgent{Slug: "a", Version: 4, Definition: `{"v":4}`, Author: "admin", Created: at(5 * time.Minute), Updated: at(5 * time.Minute), Generation: 4})
	versions, err = s.StoredAgentVersions(ctx, "a")
	noErr(t, err, "versions after a restore")
	equal(t, "restored from", []int64{a5.Version, versions[0].RestoredFrom, versions[1].RestoredFrom}, []int64{5, 4, 0})
}

// testStoredAgentRaces races writers on one agent: guarded updates of one
// version let exactly one through, and creations of one slug too.
func testStoredAgentRaces(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	const n = 6
	var wg sync.WaitGroup
	created := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, created[i] = createAgent(ctx, s, storedAgent("a", `{}`, at(0)), 1)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range created {
		if err == nil {
			wins++
		} else {
			wantErr(t, err, errs.KindConflict, errs.CodeAgentExists)
		}
	}
	equal(t, "creations that won", wins, 1)

	updated := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, updated[i] = updateAgent(ctx, s, storedAgent("a", `{"u":1}`, at(time.Second)), 2)
		}()
	}
	wg.Wait()
	wins = 0
	for _, err := range updated {
		if err == nil {
			wins++
		} else {
			wantErr(t, err, errs.KindAborted, errs.CodeVersionMismatch)
		}
	}
	equal(t, "guarded updates that won", wins, 1)
	got, err := s.GetStoredAgent(ctx, "a")
	noErr(t, err, "get")
	equal(t, "version", got.Version, int64(2))

	// Slugs differing only in case created at once: one agent (issue 33,
	// item 8), whichever spelling wins.
	for round := range 10 {
		variants := []string{"probe", "PROBE", "Probe", "pRobe", "prObe", "proBe"}
		for i := range variants {
			variants[i] += strconv.Itoa(round)
		}
		results := make([]error, len(variants))
		for i, slug := range variants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, results[i] = createAgent(ctx, s, storedAgent(slug, `{}`, at(0)), 1)
			}()
		}
		wg.Wait()
		wins = 0
		for _, err := range results {
			if err == nil {
				wins++
			} else {
				wantErr(t, err, errs.KindConflict, errs.CodeAgentExists)
			}
		}
		equal(t, fmt.Sprintf("round %d: creations of one slug in six cases that won", round), wins, 1)
	}
}

// testStoredAgentsReopen: stored agents and the agent version of a
// session survive a restart.
func testStoredAgentsReopen(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	o := fresh(t)
	s1 := open(t, o)
	_, err := createAgent(ctx, s1, storedAgent("a", `{"v":1}`, at(0)), 1)
	noErr(t, err, "create")
	a2, err := updateAgent(ctx, s1, storedAgent("a", `{"v":2}`, at(time.Second)), 2)
	noErr(t, err, "update")
	m := newMeta("s1", "alice", at(0))
	m.Agent, m.AgentVersion, m.AgentGen, m.AgentPin = "a", 2, 1, 1
	mustCreate(t, s1, m)
	noErr(t, s1.Close(), "close")

	s2 := open(t, o)
	got, err := s2.GetStoredAgent(ctx, "a")
	noErr(t, err, "get after reopening")
	equal(t, "after reopening", got, a2)
	versions, err := s2.StoredAgentVersions(ctx, "a")
	noErr(t, err, "versions after reopening")
	equal(t, "versions", len(versions), 2)
	got1 := mustGet(t, s2, "s1")
	equal(t, "session's agent version, generation and pin", []int64{got1.AgentVersion, got1.AgentGen, got1.AgentPin}, []int64{2, 1, 1})
}

// testStoredAgentChangesAndTheirEvents: a change of a stored agent and
// the event announcing it are one transaction: a change that fails leaves
// neither the agent nor its event, one that commits exactly one event. A
// Check reads the stored agents as the transaction does, and its refusal
// fails the change alone.
func testStoredAgentChangesAndTheirEvents(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	announce := func(op store.AgentOp, a store.StoredAgent, check func([]store.StoredAgent) error) error {
		return s.Commit(ctx, &store.Change{
			Agent:  &store.AgentChange{Op: op, Agent: a, Check: check},
			Events: []store.Event{event("", "", events.KindAgentsChanged, int(a.Version))},
		})
	}
	logged := func() int {
		t.Helper()
		all, err := s.EventsAfter(ctx, store.EventFilter{All: true}, 0, 0)
		noErr(t, err, "read the log")
		return len(all)
	}

	helper := storedAgent("helper", `{}`, at(0))
	helper.Version = 1
	noErr(t, announce(store.AgentCreate, helper, nil), "create")
	equal(t, "events after a create", logged(), 1)

	again := helper
	again.Definition = `{"again":1}`
	wantErr(t, announce(store.AgentCreate, again, nil), errs.KindConflict, errs.CodeAgentExists)
	stale := helper
	stale.Definition = `{"stale":1}`
	wantErr(t, announce(store.AgentUpdate, stale, nil), errs.KindAborted, errs.CodeVersionMismatch)
	equal(t, "events after two failed changes", logged(), 1)

	// A Check refusing: nothing of the change is written.
	var seen []string
	inUse := errs.FailedPrecondition(errs.CodeAgentInUse, "in use")
	gone := helper
	gone.Updated = at(time.Minute)
	err := announce(store.AgentDelete, gone, func(current []store.StoredAgent) error {
		for _, a := range current {
			seen = append(seen, a.Slug)
		}
		return inUse
	})
	wantErr(t, err, errs.KindFailedPrecondition, errs.CodeAgentInUse)
	equal(t, "what the check read", seen, []string{"helper"})
	_, err = s.GetStoredAgent(ctx, "helper")
	noErr(t, err, "the agent a refused delete left")
	equal(t, "events after a refused delete", logged(), 1)

	// In a group, a refused change fails alone.
	chief := storedAgent("chief", `{}`, at(time.Second))
	chief.Version = 1
	outcomes := s.CommitAll(ctx, []*store.Change{
		{Agent: &store.AgentChange{Op: store.AgentDelete, Agent: gone, Check: func([]store.StoredAgent) error { return inUse }},
			Events: []store.Event{event("", "", events.KindAgentsChanged, 9)}},
		{Agent: &store.AgentChange{Op: store.AgentCreate, Agent: chief},
			Events: []store.Event{event("", "", events.KindAgentsChanged, 10)}},
	})
	wantErr(t, outcomes[0], errs.KindFailedPrecondition, errs.CodeAgentInUse)
	noErr(t, outcomes[1], "the other change of the group")
	equal(t, "events after a group with one refused change", logged(), 2)

	noErr(t, announce(store.AgentDelete, gone, nil), "delete")
	equal(t, "events after a delete", logged(), 3)
	_, err = s.GetStoredAgent(ctx, "helper")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownAgent)
}
