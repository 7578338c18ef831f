package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// testRunOutcomes: a run's outcome lands on the firing that started it
// however the store learnt of the firing: claimed after outcomes that
// had none to land on, claimed in the same group commit as the outcome,
// or claimed before the store was opened again.
func testRunOutcomes(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	o := fresh(t)
	s := open(t, o)
	noErr(t, s.CreateSchedule(ctx, newSchedule("sc", "o", at(time.Minute))), "create schedule")
	mustCreate(t, s, newMeta("quiet", "o", at(0)))

	stop := func(s store.Store, id string, when time.Duration) *store.Change {
		m := mustGet(t, s, id)
		m.Status, m.Updated = session.StatusReady, at(when)
		return &store.Change{Meta: &m, RunOutcome: &store.RunOutcome{SessionID: id, Status: "ready", Reason: "done", At: at(when)}}
	}
	claim := func(id string, fireTime time.Duration) *store.Change {
		m := newMeta(id, "o", at(fireTime))
		m.Status, m.TurnCount = session.StatusRunning, 1
		return &store.Change{Create: true, Meta: &m, NewTurns: []session.Turn{userTurn(0, "tick")},
			Firing: &store.FiringClaim{Firing: store.Firing{ScheduleID: "sc", FireTime: at(fireTime), Fired: at(fireTime),
				Status: store.FiringStarted, SessionID: id}}}
	}
	finished := func(s store.Store, fireTime, stopped time.Duration) {
		t.Helper()
		firings, err := s.ListFirings(ctx, "sc", 10)
		noErr(t, err, "firings")
		for _, f := range firings {
			if f.FireTime.Equal(at(fireTime)) {
				equal(t, "the outcome of the firing at "+fireTime.String(), [3]any{f.Outcome, f.OutcomeReason, f.Finished}, [3]any{"ready", "done", at(stopped)})
				return
			}
		}
		t.Fatalf("no firing at %s in %+v", fireTime, firings)
	}

	// Runs stop with no firing anywhere.
	noErr(t, s.Commit(ctx, stop(s, "quiet", time.Second)), "a stop with no firing")
	noErr(t, s.Commit(ctx, stop(s, "quiet", 2*time.Second)), "another")

	noErr(t, s.Commit(ctx, claim("a", time.Minute)), "claim a")
	noErr(t, s.Commit(ctx, stop(s, "a", 90*time.Second)), "a stops")
	finished(s, time.Minute, 90*time.Second)

	// The claim and the stop in one group commit.
	group := claim("b", 2*time.Minute)
	m := *group.Meta
	m.Status, m.TurnCount, m.Updated = session.StatusReady, 2, at(150*time.Second)
	for i, err := range s.CommitAll(ctx, []*store.Change{group, {Meta: &m, NewTurns: []session.Turn{llmTurn(1, "done")},
		RunOutcome: &store.RunOutcome{SessionID: "b", Status: "ready", Reason: "done", At: at(150 * time.Second)}}}) {
		noErr(t, err, "group %d", i)
	}
	finished(s, 2*time.Minute, 150*time.Second)

	// A firing claimed before the store was opened again.
	noErr(t, s.Commit(ctx, claim("c", 3*time.Minute)), "claim c")
	noErr(t, s.Close(), "close")
	s = open(t, o)
	noErr(t, s.Commit(ctx, stop(s, "c", 210*time.Second)), "c stops")
	finished(s, 3*time.Minute, 210*time.Second)
}
