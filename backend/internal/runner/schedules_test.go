package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/eventually"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/schedule"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// An interval schedule of an agent starts one session per tick, each
// stored with its firing, and each firing gets its run's outcome once
// the run stops.
func TestAnIntervalScheduleStartsOneSessionPerTick(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		ctx := context.Background()
		sc, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{Agent: "bench", Every: "1s", Text: "tick"}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.Next) != schedule.Upcoming || sc.Next[1].Sub(sc.Next[0]) != time.Second {
			t.Fatalf("next firings %v", sc.Next)
		}
		eventually.That(t, "three firings", func() bool {
			f, err := k.run.ListFirings(ctx, "me", sc.ID, 10)
			return err == nil && len(f) >= 3
		})
		if _, err := k.run.UpdateSchedule(ctx, "me", sc.ID, func(_ *schedule.Spec, enabled *bool) error {
			*enabled = false
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		firings, err := k.run.ListFirings(ctx, "me", sc.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for i, f := range firings {
			if f.Status != store.FiringStarted || f.SessionID == "" || seen[f.SessionID] {
				t.Fatalf("firing %d: %+v", i, f)
			}
			seen[f.SessionID] = true
			if i > 0 && firings[i-1].FireTime.Sub(f.FireTime) != time.Second {
				t.Errorf("firings %d and %d are %s apart", i-1, i, firings[i-1].FireTime.Sub(f.FireTime))
			}
			v := k.wait(t, f.SessionID)
			if v.Meta.Agent != "bench" || v.Turns[0].User.Text != "tick" {
				t.Errorf("session %s: agent %s, first turn %+v", f.SessionID, v.Meta.Agent, v.Turns[0].User)
			}
			if n := firedEvents(t, k.db, f.SessionID); n != 1 {
				t.Errorf("session %s has %d schedule.fired events, want 1", f.SessionID, n)
			}
		}
		eventually.That(t, "every firing has its outcome", func() bool {
			list, err := k.run.ListFirings(ctx, "me", sc.ID, 100)
			if err != nil {
				return false
			}
			for _, f := range list {
				if f.Outcome != string(session.StatusReady) || f.OutcomeReason != "done" {
					return false
				}
			}
			return true
		})
	})
}

// A schedule of a session posts to it; while the session is busy a
// firing is skipped or queued as mail, as its overlap says.
func TestAScheduleOfABusySessionSkipsOrQueues(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		ctx := context.Background()
		id := k.create(t, "hello")
		k.wait(t, id)
		skip, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{SessionID: id, Cron: "0 7 * * 1-5", Timezone: "Europe/Paris", Text: "check"}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		queue, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{SessionID: id, Every: "1h", Text: "queued", Overlap: schedule.OverlapQueue}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		f, err := k.run.FireSchedule(ctx, "me", skip.ID)
		if err != nil || f.Status != store.FiringPosted || f.SessionID != id || !f.Manual {
			t.Fatalf("fire on an idle session: %+v, %v", f, err)
		}
		k.wait(t, id)

		hold := k.model.HoldAfter(1)
		if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "busy"}, runner.RunOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		<-hold.Held()
		if f, err = k.run.FireSchedule(ctx, "me", skip.ID); err != nil || f.Status != store.FiringSkipped {
			t.Fatalf("fire on a busy session with overlap skip: %+v, %v", f, err)
		}
		if f, err = k.run.FireSchedule(ctx, "me", queue.ID); err != nil || f.Status != store.FiringQueued {
			t.Fatalf("fire on a busy session with overlap queue: %+v, %v", f, err)
		}
		hold.Release()
		v := k.wait(t, id)
		if n := userTurns(v.Turns, "check"); n != 1 {
			t.Errorf("the posted message is in %d turns", n)
		}
		folded := false
		for _, tn := range v.Turns {
			if tn.User != nil {
				for _, m := range tn.User.Mail {
					folded = folded || m.Body.Text == "queued"
				}
			}
		}
		if !folded {
			t.Error("the queued message was not folded into the run")
		}
	})
}

// Another owner's schedule is not found, for every operation on it.
func TestAnotherOwnersScheduleIsNotFound(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	sc, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{Agent: "bench", Every: "1h", Text: "x"}, true, "")
	if err != nil {
		t.Fatal(err)
	}
	notFound := func(what string, err error) {
		t.Helper()
		if errs.CodeOf(err) != errs.CodeUnknownSchedule {
			t.Errorf("%s: got %v, want unknown_schedule", what, err)
		}
	}
	_, err = k.run.GetSchedule(ctx, "eve", sc.ID)
	notFound("get", err)
	_, err = k.run.FireSchedule(ctx, "eve", sc.ID)
	notFound("fire", err)
	_, err = k.run.ListFirings(ctx, "eve", sc.ID, 10)
	notFound("firings", err)
	notFound("delete", k.run.DeleteSchedule(ctx, "eve", sc.ID))
	_, err = k.run.UpdateSchedule(ctx, "eve", sc.ID, func(*schedule.Spec, *bool) error { return nil })
	notFound("update", err)
	if list, err := k.run.ListSchedules(ctx, "eve", store.ScheduleFilter{}); err != nil || len(list) != 0 {
		t.Errorf("eve lists %d schedules, %v", len(list), err)
	}
	// A schedule of another owner's session cannot be made either.
	id := k.create(t, "mine")
	if _, err := k.run.CreateSchedule(ctx, "eve", schedule.Spec{SessionID: id, Every: "1h", Text: "x"}, true, ""); errs.CodeOf(err) != errs.CodeUnknownSession {
		t.Errorf("a schedule of another owner's session: %v", err)
	}
}

// Times missed while no server ran follow the schedule's missed rule:
// skip fires none of them, once fires one catch-up for them all.
func TestMissedTimesAreSkippedOrCaughtUpOnce(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	for _, missed := range []schedule.Missed{schedule.MissedSkip, schedule.MissedOnce} {
		sc, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{Agent: "bench", Every: "1m", Text: string(missed), Missed: missed}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		// As if every server had been down for an hour.
		row, err := k.db.GetSchedule(ctx, sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		row.NextDue = row.NextDue.Add(-time.Hour)
		if err := k.db.UpdateSchedule(ctx, row); err != nil {
			t.Fatal(err)
		}
		eventually.That(t, "the schedule goes on from now", func() bool {
			v, err := k.run.GetSchedule(ctx, "me", sc.ID)
			return err == nil && v.NextDue.After(time.Now())
		})
		firings, err := k.run.ListFirings(ctx, "me", sc.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := map[schedule.Missed]int{schedule.MissedSkip: 0, schedule.MissedOnce: 1}[missed]
		if len(firings) != want {
			t.Fatalf("missed %s: %d firings, want %d", missed, len(firings), want)
		}
		if want == 1 && (!firings[0].CatchUp || !firings[0].FireTime.Equal(row.NextDue)) {
			t.Errorf("the catch-up firing: %+v", firings[0])
		}
	}
}

// A schedule fired on one server posts to a session another server
// holds through that server, as any operation: the message is in the
// session once, with its firing.
func TestAFiringForASessionHeldElsewhereIsForwardedToItsHolder(t *testing.T) {
	t.Parallel()
	f := newFleet(t, answer, time.Minute)
	a, b := f.start(t, "a"), f.start(t, "b")
	ctx := context.Background()
	id := a.create(t, "bench", "hello")
	a.wait(t, id)
	sc, err := b.run.CreateSchedule(ctx, "me", schedule.Spec{SessionID: id, Every: "1h", Text: "from b"}, true, "")
	if err != nil {
		t.Fatal(err)
	}
	fired, err := b.run.FireSchedule(ctx, "me", sc.ID)
	if err != nil || fired.Status != store.FiringPosted || fired.SessionID != id {
		t.Fatalf("fire through b: %+v, %v", fired, err)
	}
	if h := f.holder(t, id); h != "a" || b.run.LiveSessions() != 0 {
		t.Fatalf("after the firing: held by %s, %d sessions loaded on b", h, b.run.LiveSessions())
	}
	v := a.wait(t, id)
	if n := userTurns(v.Turns, "from b"); n != 1 {
		t.Fatalf("the fired message is in %d turns", n)
	}
	firings, err := a.run.ListFirings(ctx, "me", sc.ID, 10)
	if err != nil || len(firings) != 1 {
		t.Fatalf("firings: %v, %v", firings, err)
	}
}

// A create retried with its idempotency key answers with the schedule
// the first made; the key with another body is refused.
func TestACreateRetriedWithItsKeyMakesOneSchedule(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	spec := schedule.Spec{Agent: "bench", Every: "1h", Text: "x"}
	first, err := k.run.CreateSchedule(ctx, "me", spec, true, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := k.run.CreateSchedule(ctx, "me", spec, true, "key-1")
	if err != nil || again.ID != first.ID {
		t.Fatalf("the retry made %s (%v), want %s", again.ID, err, first.ID)
	}
	spec.Text = "y"
	if _, err := k.run.CreateSchedule(ctx, "me", spec, true, "key-1"); errs.CodeOf(err) != errs.CodeIdempotencyKeyReused {
		t.Fatalf("the key with another body: %v", err)
	}
	if list, err := k.run.ListSchedules(ctx, "me", store.ScheduleFilter{}); err != nil || len(list) != 1 {
		t.Fatalf("%d schedules, %v; want 1", len(list), err)
	}
}

// firedEvents counts the schedule.fired events of a session in the log.
func firedEvents(t *testing.T, db store.Store, id string) int {
	t.Helper()
	evs, err := db.EventsAfter(context.Background(), store.EventFilter{SessionID: id}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == events.KindScheduleFired {
			n++
		}
	}
	return n
}

// A firing that cannot send its message is recorded as failed, saying
// why, with its event; the schedule goes on.
func TestAFiringThatCannotPostIsRecordedAsFailed(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	id := k.create(t, "hello")
	k.wait(t, id)
	sc, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{SessionID: id, Every: "1h", Text: "x"}, true, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.run.DeleteSession(ctx, "me", id, runner.DeleteSingle); err != nil {
		t.Fatal(err)
	}
	f, err := k.run.FireSchedule(ctx, "me", sc.ID)
	if err != nil || f.Status != store.FiringFailed || f.Reason != "unknown session "+id {
		t.Fatalf("fire at a deleted session: %+v, %v", f, err)
	}
	if v, err := k.run.GetSchedule(ctx, "me", sc.ID); err != nil || !v.Enabled || v.Last == nil || v.Last.Status != store.FiringFailed {
		t.Fatalf("the schedule after a failed firing: %+v, %v", v, err)
	}
	if n := firedEvents(t, k.db, id); n != 1 {
		t.Errorf("%d schedule.fired events for the failed firing, want 1", n)
	}
}
