package runner_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"

	"github.com/agents-os/agents/backend/internal/cluster"
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
// why, with its event; the schedule goes on. (A schedule outlives its
// session only in a database an older server deleted the session from,
// which kept its schedules.)
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
	deleteLeavingSchedules(t, k, id)
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

// deleteLeavingSchedules deletes a session of k's SQLite database as an
// older server did: the session's rows go, the schedules that post to it
// stay.
func deleteLeavingSchedules(t *testing.T, k *kernel, id string) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", k.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{`PRAGMA busy_timeout = 10000`, `PRAGMA foreign_keys = ON`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	res, err := conn.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		t.Fatalf("delete the session under its schedule: %d, %v", n, err)
	}
}

// firingReads counts the reads of a schedule's firings.
type firingReads struct {
	store.Store
	n atomic.Int32
}

func (f *firingReads) ListFirings(ctx context.Context, id string, limit int) ([]store.Firing, error) {
	f.n.Add(1)
	return f.Store.ListFirings(ctx, id, limit)
}

// Listing schedules reads each one's last firing in the same query as
// the schedules, not with a query of its own.
func TestListingSchedulesReadsTheirLastFiringsWithThem(t *testing.T) {
	t.Parallel()
	reads := &firingReads{}
	k := newKernelWith(t, onSQLite, answer, kernelOptions{wrap: func(s store.Store) store.Store {
		reads.Store = s
		return reads
	}})
	ctx := context.Background()
	id := k.create(t, "hello")
	k.wait(t, id)
	var fired []store.Firing
	for i := range 3 {
		sc, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{SessionID: id, Every: "1h", Text: "x"}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			continue // never fired
		}
		f, err := k.run.FireSchedule(ctx, "me", sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		k.wait(t, id)
		fired = append(fired, f)
	}
	reads.n.Store(0)
	list, err := k.run.ListSchedules(ctx, "me", store.ScheduleFilter{})
	if err != nil || len(list) != 3 {
		t.Fatalf("%d schedules, %v", len(list), err)
	}
	if n := reads.n.Load(); n != 0 {
		t.Errorf("listing 3 schedules read firings %d times, want 0", n)
	}
	for i, want := range []*store.Firing{&fired[0], nil, &fired[1]} {
		got := list[i].Last
		if (got == nil) != (want == nil) || got != nil && (got.FireTime != want.FireTime || got.Status != want.Status) {
			t.Errorf("schedule %d: last firing %+v, want %+v", i, got, want)
		}
	}
}

// scheduleChanges lists the schedule.changed events of an owner in the
// log: each schedule's id and what happened to it.
func scheduleChanges(t *testing.T, db store.Store, owner string) []string {
	t.Helper()
	evs, err := db.EventsAfter(context.Background(), store.EventFilter{Owner: owner}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Kind != events.KindScheduleChanged {
			continue
		}
		ev := &agentsv1.Event{}
		if err := proto.Unmarshal(e.Body, ev); err != nil {
			t.Fatal(err)
		}
		c := ev.GetScheduleChanged()
		if e.SessionID != "" || ev.GetOwner() != owner {
			t.Errorf("schedule.changed of session %q, owner %q", e.SessionID, ev.GetOwner())
		}
		out = append(out, c.GetScheduleId()+" "+strings.TrimPrefix(c.GetChange().String(), "SCHEDULE_CHANGE_"))
	}
	return out
}

// Deleting a session deletes the schedules that post to it, on each
// database, for a session deleted alone or with the sessions below it;
// each deletion is announced. The schedules of agents stay.
func TestDeletingASessionDeletesItsSchedules(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		ctx := context.Background()
		root := k.create(t, "hello")
		k.wait(t, root)
		child, err := k.run.CreateSession(ctx, "me", runner.CreateRequest{Agent: "bench", ParentID: root, Message: &runner.Message{Text: "below"}})
		if err != nil {
			t.Fatal(err)
		}
		k.wait(t, child.Meta.ID)
		alone := k.create(t, "alone")
		k.wait(t, alone)
		target := func(sessionID string) string {
			spec := schedule.Spec{SessionID: sessionID, Every: "1h", Text: "x"}
			if sessionID == "" {
				spec.Agent = "bench"
			}
			sc, err := k.run.CreateSchedule(ctx, "me", spec, true, "")
			if err != nil {
				t.Fatal(err)
			}
			return sc.ID
		}
		onRoot, onChild, onAlone, onAgent := target(root), target(child.Meta.ID), target(alone), target("")

		if _, err := k.run.DeleteSession(ctx, "me", alone, runner.DeleteSingle); err != nil {
			t.Fatal(err)
		}
		if _, err := k.run.DeleteSession(ctx, "me", root, runner.DeleteCascade); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{onRoot, onChild, onAlone} {
			if _, err := k.run.GetSchedule(ctx, "me", id); errs.CodeOf(err) != errs.CodeUnknownSchedule {
				t.Errorf("schedule %s of a deleted session: %v", id, err)
			}
		}
		list, err := k.run.ListSchedules(ctx, "me", store.ScheduleFilter{})
		var left []string
		for _, sc := range list {
			left = append(left, sc.ID)
		}
		if err != nil || !slices.Equal(left, []string{onAgent}) {
			t.Errorf("schedules left: %v, %v; want %s", left, err, onAgent)
		}
		got := scheduleChanges(t, k.db, "me")
		want := []string{onRoot + " CREATED", onChild + " CREATED", onAlone + " CREATED", onAgent + " CREATED",
			onAlone + " DELETED", onChild + " DELETED", onRoot + " DELETED"}
		if !slices.Equal(got, want) {
			t.Errorf("schedule.changed events:\n got  %v\n want %v", got, want)
		}
		// No schedule is made to post to a session that is gone.
		if _, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{SessionID: root, Every: "1h", Text: "x"}, true, ""); errs.CodeOf(err) != errs.CodeUnknownSession {
			t.Errorf("a schedule of a deleted session: %v", err)
		}
	})
}

// Creating, changing, pausing, resuming and deleting a schedule each
// emit schedule.changed, to its owner.
func TestEveryChangeOfAScheduleIsAnnounced(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onSQLite, answer)
	ctx := context.Background()
	sc, err := k.run.CreateSchedule(ctx, "me", schedule.Spec{Agent: "bench", Every: "1h", Text: "x"}, true, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, change := range []func(spec *schedule.Spec, enabled *bool){
		func(spec *schedule.Spec, _ *bool) { spec.Text = "y" },
		func(_ *schedule.Spec, enabled *bool) { *enabled = false },
		func(spec *schedule.Spec, _ *bool) { spec.Every = "2h" },
		func(_ *schedule.Spec, enabled *bool) { *enabled = true },
	} {
		if _, err := k.run.UpdateSchedule(ctx, "me", sc.ID, func(spec *schedule.Spec, enabled *bool) error {
			change(spec, enabled)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.run.DeleteSchedule(ctx, "me", sc.ID); err != nil {
		t.Fatal(err)
	}
	got := scheduleChanges(t, k.db, "me")
	var want []string
	for _, c := range []string{"CREATED", "UPDATED", "PAUSED", "UPDATED", "RESUMED", "DELETED"} {
		want = append(want, sc.ID+" "+c)
	}
	if !slices.Equal(got, want) {
		t.Errorf("schedule.changed events:\n got  %v\n want %v", got, want)
	}
}

// A schedule made on one server fires on another sharing the database
// once it is due, though that server polls the store only hourly here:
// schedule.changed wakes its scheduler.
func TestAScheduleMadeOnOneServerWakesTheOthersScheduler(t *testing.T) {
	t.Parallel()
	f := newFleet(t, answer, time.Minute)
	hourly := func(o *runner.Options) {
		o.SchedulePoll = time.Hour
		// Each server reads the others' events from the log, as serve's
		// do (cli/cluster.go).
		seq := cluster.NewSequencer(o.Hub, o.Store, f.bus, cluster.SequencerOptions{Poll: 50 * time.Millisecond})
		o.Publish = seq.Committed
		t.Cleanup(seq.Close)
	}
	a, b := f.start(t, "a", hourly), f.start(t, "b", hourly)
	ctx := context.Background()
	// a fires nothing: b must.
	if err := a.run.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	sc, err := a.run.CreateSchedule(ctx, "me", schedule.Spec{Agent: "bench", At: time.Now().Add(time.Second), Text: "from a"}, true, "")
	if err != nil {
		t.Fatal(err)
	}
	var fired []store.Firing
	eventually.That(t, "b fires the schedule", func() bool {
		fired, err = b.run.ListFirings(ctx, "me", sc.ID, 10)
		return err == nil && len(fired) == 1
	})
	if fired[0].Status != store.FiringStarted {
		t.Errorf("the firing: %+v", fired[0])
	}
	// The session may have finished and handed its lease back already;
	// while it holds one, it is b's (a is drained).
	if l, err := f.db.GetLease(ctx, fired[0].SessionID); err == nil && l.Holder != "b" {
		t.Errorf("the firing's session is held by %s", l.Holder)
	} else if err != nil && errs.CodeOf(err) != errs.CodeNoLease {
		t.Fatal(err)
	}
}
