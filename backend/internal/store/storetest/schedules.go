package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

func newSchedule(id, owner string, due time.Time) store.Schedule {
	return store.Schedule{ID: id, Owner: owner, Agent: "coder", Spec: `{"every":"1m"}`, Enabled: true,
		NextDue: due, Created: at(0), Updated: at(0)}
}

// testSchedules: schedules are stored, listed by owner, updated, found
// when due, and deleted with their firings.
func testSchedules(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	a := newSchedule("a", "alice", at(time.Minute))
	b := newSchedule("b", "bob", at(2*time.Minute))
	b.Created = at(time.Second)
	noErr(t, s.CreateSchedule(ctx, a), "create a")
	noErr(t, s.CreateSchedule(ctx, b), "create b")
	wantErr(t, s.CreateSchedule(ctx, a), errs.KindConflict, errs.CodeAlreadyExists)

	got, err := s.GetSchedule(ctx, "a")
	noErr(t, err, "get a")
	equal(t, "schedule a", got, a)
	_, err = s.GetSchedule(ctx, "nope")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSchedule)

	all, err := s.ListSchedules(ctx, store.ScheduleFilter{})
	noErr(t, err, "list")
	equal(t, "every schedule", len(all), 2)
	mine, err := s.ListSchedules(ctx, store.ScheduleFilter{Owner: "bob"})
	noErr(t, err, "list bob's")
	equal(t, "bob's schedules", len(mine), 1)
	equal(t, "bob's schedule", mine[0].ID, "b")

	due, err := s.DueSchedules(ctx, at(90*time.Second), 10)
	noErr(t, err, "due")
	equal(t, "due schedules", len(due), 1)
	next, err := s.NextDue(ctx)
	noErr(t, err, "next due")
	equal(t, "next due", next, at(time.Minute))

	// A paused schedule is never due.
	a.Enabled, a.Updated = false, at(time.Second)
	noErr(t, s.UpdateSchedule(ctx, a), "pause a")
	next, err = s.NextDue(ctx)
	noErr(t, err, "next due")
	equal(t, "next due once a is paused", next, at(2*time.Minute))
	wantErr(t, s.UpdateSchedule(ctx, newSchedule("nope", "x", time.Time{})), errs.KindNotFound, errs.CodeUnknownSchedule)

	// Advancing moves the next time only from the one read.
	ok, err := s.AdvanceSchedule(ctx, "b", at(2*time.Minute), at(3*time.Minute))
	noErr(t, err, "advance")
	equal(t, "advanced", ok, true)
	ok, err = s.AdvanceSchedule(ctx, "b", at(2*time.Minute), at(4*time.Minute))
	noErr(t, err, "advance again")
	equal(t, "advanced from a stale time", ok, false)

	claim := &store.FiringClaim{Firing: store.Firing{ScheduleID: "b", FireTime: at(3 * time.Minute), Fired: at(3 * time.Minute), Status: store.FiringSkipped, Reason: "busy"}}
	noErr(t, s.Commit(ctx, &store.Change{Firing: claim}), "fire b")
	noErr(t, s.DeleteSchedule(ctx, "b"), "delete b")
	wantErr(t, s.DeleteSchedule(ctx, "b"), errs.KindNotFound, errs.CodeUnknownSchedule)
	firings, err := s.ListFirings(ctx, "b", 10)
	noErr(t, err, "firings of a deleted schedule")
	equal(t, "firings of a deleted schedule", len(firings), 0)
}

// testFiringsClaimOnce: a firing is claimed with the change that does it,
// once: the second claim of a time fails the whole change (its session
// is not created), and so does a claim whose schedule moved on.
func testFiringsClaimOnce(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	noErr(t, s.CreateSchedule(ctx, newSchedule("sc", "o", at(time.Minute))), "create schedule")

	fire := func(id string, fireTime time.Time, adv *store.Advance) error {
		m := newMeta(id, "o", at(time.Minute))
		m.Status = session.StatusRunning
		m.TurnCount = 1
		return s.Commit(ctx, &store.Change{Create: true, Meta: &m, NewTurns: []session.Turn{userTurn(0, "tick")},
			Firing: &store.FiringClaim{Firing: store.Firing{ScheduleID: "sc", FireTime: fireTime, Fired: at(time.Minute),
				Status: store.FiringStarted, SessionID: id}, Advance: adv}})
	}
	noErr(t, fire("s1", at(time.Minute), &store.Advance{From: at(time.Minute), To: at(2 * time.Minute)}), "first claim")
	// The schedule moved on: a server that read it before fires nothing.
	wantErr(t, fire("s2", at(time.Minute), &store.Advance{From: at(time.Minute), To: at(2 * time.Minute)}), errs.KindConflict, errs.CodeFiringClaimed)
	// The same time again, without advancing (a manual firing): the key
	// refuses it.
	wantErr(t, fire("s3", at(time.Minute), nil), errs.KindConflict, errs.CodeFiringClaimed)
	for _, id := range []string{"s2", "s3"} {
		_, err := s.GetMeta(ctx, id)
		wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	}

	// The run's outcome lands on its firing when it stops.
	m := mustGet(t, s, "s1")
	m.Status, m.Updated = session.StatusReady, at(90*time.Second)
	noErr(t, s.Commit(ctx, &store.Change{Meta: &m, RunOutcome: &store.RunOutcome{SessionID: "s1", Status: "ready", Reason: "done", At: at(90 * time.Second)}}), "run stops")
	firings, err := s.ListFirings(ctx, "sc", 10)
	noErr(t, err, "firings")
	equal(t, "firings", len(firings), 1)
	f := firings[0]
	equal(t, "firing", f, store.Firing{ScheduleID: "sc", FireTime: at(time.Minute), Fired: at(time.Minute), Status: store.FiringStarted,
		SessionID: "s1", Outcome: "ready", OutcomeReason: "done", Finished: at(90 * time.Second)})

	// Many claims of one time at once: one wins.
	due := at(2 * time.Minute)
	var wg sync.WaitGroup
	won := make(chan string, 8)
	for i := range 8 {
		id := "race" + string(rune('a'+i))
		wg.Go(func() {
			if err := fire(id, due, &store.Advance{From: due, To: at(3 * time.Minute)}); err == nil {
				won <- id
			} else if errs.KindOf(err) != errs.KindConflict {
				t.Errorf("claim %s: %v", id, err)
			}
		})
	}
	wg.Wait()
	close(won)
	equal(t, "claims won", len(won), 1)
}

// testSchedulesWithTheirLastFiring: a schedule is read and listed with
// its newest firing, none before the first.
func testSchedulesWithTheirLastFiring(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	for i, id := range []string{"a", "b", "c"} {
		sc := newSchedule(id, "o", at(time.Minute))
		sc.Created = at(time.Duration(i) * time.Second)
		noErr(t, s.CreateSchedule(ctx, sc), "create %s", id)
	}
	fire := func(id string, fireTime time.Duration, status string) store.Firing {
		f := store.Firing{ScheduleID: id, FireTime: at(fireTime), Fired: at(fireTime + time.Second), Status: status, Reason: "r" + id}
		noErr(t, s.Commit(ctx, &store.Change{Firing: &store.FiringClaim{Firing: f}}), "fire %s", id)
		return f
	}
	fire("a", time.Minute, store.FiringSkipped)
	lastA := fire("a", 3*time.Minute, store.FiringFailed)
	fire("a", 2*time.Minute, store.FiringSkipped) // an older time, fired later
	lastC := fire("c", time.Minute, store.FiringSkipped)

	list, err := s.ListSchedules(ctx, store.ScheduleFilter{Owner: "o"})
	noErr(t, err, "list")
	equal(t, "schedules", len(list), 3)
	equal(t, "a's last firing", list[0].Last, &lastA)
	equal(t, "b's last firing", list[1].Last, (*store.Firing)(nil))
	equal(t, "c's last firing", list[2].Last, &lastC)
	got, err := s.GetSchedule(ctx, "a")
	noErr(t, err, "get a")
	equal(t, "a's last firing, read alone", got.Last, &lastA)
	got, err = s.GetSchedule(ctx, "b")
	noErr(t, err, "get b")
	equal(t, "b's last firing, read alone", got.Last, (*store.Firing)(nil))
}

// testSchedulesGoWithTheirSession: deleting sessions deletes, in the
// same change, the schedules that post to them, with their firings; a
// schedule cannot be made to post to a session that is gone. A change
// also updates and deletes a schedule, with its event.
func testSchedulesGoWithTheirSession(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("root", "o", at(0)))
	child := newMeta("child", "o", at(time.Second))
	child.ParentID = "root"
	mustCreate(t, s, child)
	mustCreate(t, s, newMeta("other", "o", at(2*time.Second)))
	onSession := func(id, sessionID string) store.Schedule {
		sc := newSchedule(id, "o", at(time.Minute))
		sc.Agent, sc.SessionID = "", sessionID
		noErr(t, s.CreateSchedule(ctx, sc), "create %s", id)
		return sc
	}
	onSession("to-root", "root")
	onSession("to-child", "child")
	onSession("to-other", "other")
	noErr(t, s.CreateSchedule(ctx, newSchedule("to-agent", "o", at(time.Minute))), "create to-agent")
	claim := &store.FiringClaim{Firing: store.Firing{ScheduleID: "to-child", FireTime: at(time.Minute), Fired: at(time.Minute), Status: store.FiringSkipped}}
	noErr(t, s.Commit(ctx, &store.Change{Firing: claim}), "fire to-child")

	noErr(t, s.Commit(ctx, &store.Change{Delete: []string{"child", "root"}}), "delete the tree")
	list, err := s.ListSchedules(ctx, store.ScheduleFilter{})
	noErr(t, err, "list")
	var left []string
	for _, sc := range list {
		left = append(left, sc.ID)
	}
	equal(t, "schedules left", left, []string{"to-agent", "to-other"})
	firings, err := s.ListFirings(ctx, "to-child", 10)
	noErr(t, err, "firings of a deleted schedule")
	equal(t, "firings of a deleted schedule", len(firings), 0)

	// No schedule is made, or moved, to post to a session that is gone.
	gone := newSchedule("late", "o", at(time.Minute))
	gone.Agent, gone.SessionID = "", "root"
	wantErr(t, s.CreateSchedule(ctx, gone), errs.KindNotFound, errs.CodeUnknownSession)
	wantErr(t, s.Commit(ctx, &store.Change{Schedule: &gone}), errs.KindNotFound, errs.CodeUnknownSession)
	moved := list[0]
	moved.Last, moved.SessionID = nil, "child"
	wantErr(t, s.UpdateSchedule(ctx, moved), errs.KindNotFound, errs.CodeUnknownSession)
	wantErr(t, s.Commit(ctx, &store.Change{ScheduleChange: &store.ScheduleChange{Update: &moved}}), errs.KindNotFound, errs.CodeUnknownSession)

	// A change updates a schedule, or deletes one, with its event.
	paused := list[0]
	paused.Last, paused.Enabled, paused.NextDue, paused.Updated = nil, false, time.Time{}, at(time.Hour)
	ev := event("", "o", events.KindScheduleChanged, 1)
	noErr(t, s.Commit(ctx, &store.Change{ScheduleChange: &store.ScheduleChange{Update: &paused}, Events: []store.Event{ev}}), "pause")
	got, err := s.GetSchedule(ctx, paused.ID)
	noErr(t, err, "get paused")
	equal(t, "paused", got, paused)
	noErr(t, s.Commit(ctx, &store.Change{ScheduleChange: &store.ScheduleChange{Delete: "to-agent"}, Events: []store.Event{ev}}), "delete to-agent")
	_, err = s.GetSchedule(ctx, "to-agent")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSchedule)
	wantErr(t, s.Commit(ctx, &store.Change{ScheduleChange: &store.ScheduleChange{Delete: "to-agent"}, Events: []store.Event{ev}}), errs.KindNotFound, errs.CodeUnknownSchedule)
	logged, err := s.EventsAfter(ctx, store.EventFilter{Owner: "o"}, 0, 10)
	noErr(t, err, "events")
	equal(t, "schedule.changed events logged", len(logged), 2)
}

// testSchedulesGoWithDeletedSessions: DeleteSessions, like a change that
// deletes sessions, deletes the schedules that post to them with their
// firings, and leaves the others.
func testSchedulesGoWithDeletedSessions(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("a", "o", at(0)))
	mustCreate(t, s, newMeta("b", "o", at(time.Second)))
	for id, sessionID := range map[string]string{"to-a": "a", "to-b": "b"} {
		sc := newSchedule(id, "o", at(time.Minute))
		sc.Agent, sc.SessionID = "", sessionID
		noErr(t, s.CreateSchedule(ctx, sc), "create %s", id)
	}
	noErr(t, s.CreateSchedule(ctx, newSchedule("to-agent", "o", at(time.Minute))), "create to-agent")
	claim := &store.FiringClaim{Firing: store.Firing{ScheduleID: "to-a", FireTime: at(time.Minute), Fired: at(time.Minute), Status: store.FiringSkipped}}
	noErr(t, s.Commit(ctx, &store.Change{Firing: claim}), "fire to-a")

	n, err := s.DeleteSessions(ctx, "a", "ghost")
	noErr(t, err, "delete a")
	equal(t, "deleted", n, 1)
	list, err := s.ListSchedules(ctx, store.ScheduleFilter{})
	noErr(t, err, "list")
	var left []string
	for _, sc := range list {
		left = append(left, sc.ID)
	}
	equal(t, "schedules left", left, []string{"to-agent", "to-b"})
	firings, err := s.ListFirings(ctx, "to-a", 10)
	noErr(t, err, "firings of a deleted schedule")
	equal(t, "firings of a deleted schedule", len(firings), 0)
}
