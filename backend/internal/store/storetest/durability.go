package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// testReopen writes through one Store, closes it, and reads everything back
// through a new one over the same database, as a restart would; opening a
// third time also shows that migrations are not applied twice.
func testReopen(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	o := fresh(t)
	s1 := open(t, o)
	mustCreate(t, s1, newMeta("s1", "alice", at(0)), userTurn(0, "q"))
	mustCreate(t, s1, newMeta("s2", "bob", at(time.Second)))
	mustAddMail(t, s1, newMail("m1", "s1", at(0)), newMail("m2", "s1", at(0)))
	meta := mustGet(t, s1, "s1")
	meta.TurnCount = 2
	meta.Status = session.StatusWaiting
	noErr(t, s1.CommitStep(ctx, store.StepCommit{
		Meta:          meta,
		NewTurns:      []session.Turn{llmTurn(1, "a")},
		DeliveredMail: []string{"m1"},
		NewDeferred:   []session.DeferredCall{newDeferred("t1", "s1", 1), newDeferred("t2", "s1", 1)},
	}), "commit")
	_, err := s1.CompleteDeferred(ctx, "t1", session.ToolResult{CallID: "call-t1", Text: "ok", Status: session.ResultOK}, at(time.Hour))
	noErr(t, err, "complete")
	watch := session.Watch{WatcherID: "s2", TargetID: "s1", Expires: at(time.Hour)}
	noErr(t, s1.PutWatch(ctx, watch), "watch")
	_, err = s1.AcquireLease(ctx, "s1", "h1", at(0), time.Hour)
	noErr(t, err, "lease")
	before := takeSnapshot(t, s1, "s1")
	noErr(t, s1.Close(), "close")

	s2 := open(t, o)
	equal(t, "after reopening", takeSnapshot(t, s2, "s1"), before)
	equal(t, "second session", mustGet(t, s2, "s2").Owner, "bob")
	watches, err := s2.ListWatches(ctx)
	noErr(t, err, "watches")
	equal(t, "watches", watches, []session.Watch{watch})
	_, err = s2.AcquireLease(ctx, "s1", "h2", at(time.Minute), time.Hour)
	wantErr(t, err, errs.KindConflict, errs.CodeLeaseHeld)

	// Sequences continue where they were: new mail is still delivered last.
	mustAddMail(t, s2, newMail("m3", "s1", at(0)))
	pending, err := s2.PendingMail(ctx, "s1")
	noErr(t, err, "pending")
	equal(t, "pending", mailIDs(pending), []string{"m2", "m3"})
	meta = mustGet(t, s2, "s1")
	meta.TurnCount = 3
	noErr(t, s2.CommitStep(ctx, store.StepCommit{Meta: meta, NewTurns: []session.Turn{userTurn(2, "b")}}), "commit after reopening")
	after := takeSnapshot(t, s2, "s1")
	noErr(t, s2.Close(), "close again")

	s3 := open(t, o)
	equal(t, "after reopening twice", takeSnapshot(t, s3, "s1"), after)
}

// testConcurrentWriters has goroutines write at once, as the runner's
// session actors do, while others read. Every operation must succeed: the
// store, not its callers, deals with write contention.
func testConcurrentWriters(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	const (
		writers = 8
		steps   = 15
	)
	mustCreate(t, s, newMeta("inbox", "alice", at(0)))
	for w := range writers {
		mustCreate(t, s, newMeta(fmt.Sprintf("w%d", w), "alice", at(time.Duration(w))))
	}

	errc := make(chan error, 2*writers)
	var wg sync.WaitGroup
	for w := range writers {
		id := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			errc <- writeSteps(ctx, s, id, steps)
		})
		wg.Go(func() {
			errc <- readWhileWriting(ctx, s, id, steps)
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}

	for w := range writers {
		id := fmt.Sprintf("w%d", w)
		meta, turns, err := s.LoadSession(ctx, id)
		noErr(t, err, "load %s", id)
		equal(t, "turns of "+id, len(turns), 2*steps)
		equal(t, "turn count of "+id, meta.TurnCount, 2*steps)
		equal(t, "pending calls of "+id, meta.PendingCalls, steps)
	}
	equal(t, "mail in the shared inbox", mustGet(t, s, "inbox").PendingMail, writers*steps)
}

// writeSteps runs the writes of a busy session: mail to itself and to a
// shared inbox, then a step that folds its mail and defers a call.
func writeSteps(ctx context.Context, s store.Store, id string, steps int) error {
	for i := range steps {
		mine := fmt.Sprintf("%s-m%d", id, i)
		for _, m := range []session.Mail{newMail(mine, id, at(0)), newMail(fmt.Sprintf("%s-i%d", id, i), "inbox", at(0))} {
			if err := s.AddMail(ctx, m); err != nil {
				return fmt.Errorf("%s step %d: %w", id, i, err)
			}
		}
		meta, err := s.GetMeta(ctx, id)
		if err != nil {
			return fmt.Errorf("%s step %d: %w", id, i, err)
		}
		meta.TurnCount += 2
		meta.Updated = at(time.Duration(i) * time.Second)
		err = s.CommitStep(ctx, store.StepCommit{
			Meta:          meta,
			NewTurns:      []session.Turn{llmTurn(2*i, "a"), userTurn(2*i+1, "b")},
			DeliveredMail: []string{mine},
			NewDeferred:   []session.DeferredCall{newDeferred(fmt.Sprintf("%s-t%d", id, i), id, 2*i)},
		})
		if err != nil {
			return fmt.Errorf("%s step %d: %w", id, i, err)
		}
	}
	return nil
}

// readWhileWriting reads what a writer is writing: every snapshot it sees
// must be consistent.
func readWhileWriting(ctx context.Context, s store.Store, id string, rounds int) error {
	for range rounds {
		meta, turns, err := s.LoadSession(ctx, id)
		if err != nil {
			return fmt.Errorf("load %s: %w", id, err)
		}
		if meta.TurnCount != len(turns) {
			return fmt.Errorf("load %s: turn count %d but %d turns", id, meta.TurnCount, len(turns))
		}
		if _, _, err := s.ListSessions(ctx, store.ListFilter{Owner: "alice", PageSize: 3}); err != nil {
			return fmt.Errorf("list: %w", err)
		}
		if _, err := s.PendingMail(ctx, "inbox"); err != nil {
			return fmt.Errorf("pending mail: %w", err)
		}
	}
	return nil
}

func testCanceled(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("s1", "alice", at(0)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.GetMeta(ctx, "s1")
	if !errors.Is(err, context.Canceled) || errs.KindOf(err) != errs.KindInternal {
		t.Fatalf("get with a canceled context: %v, want context.Canceled left unclassified", err)
	}
	err = s.AddMail(ctx, newMail("m1", "s1", at(0)))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("add mail with a canceled context: %v, want context.Canceled", err)
	}
	// Nothing was written.
	pending, err := s.PendingMail(context.Background(), "s1")
	noErr(t, err, "pending")
	equal(t, "pending", mailIDs(pending), []string{})
}
