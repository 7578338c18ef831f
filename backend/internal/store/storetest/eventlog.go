package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

func event(sessionID, owner, kind string, n int) store.Event {
	return store.Event{SessionID: sessionID, Owner: owner, Kind: kind, Time: at(0), Body: []byte(fmt.Sprintf("%s-%d", kind, n))}
}

func eventSeqs(evs []store.Event) []uint64 {
	out := []uint64{}
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

// testEventLog: events get increasing seqs in commit order, in batches of
// any size, read back by scope, and the log's position survives a reopen
// and pruning.
func testEventLog(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	o := fresh(t)
	s := o(t)
	mustCreate(t, s, newMeta("a", "alice", at(0)))
	mustCreate(t, s, newMeta("b", "bob", at(1)))

	var want []uint64
	last := uint64(0)
	for i, batch := range [][]store.Event{
		{event("a", "alice", events.KindRunStarted, 0)},
		{event("a", "alice", "x", 1), event("b", "bob", "x", 2), event("", "", events.KindAgentsChanged, 3)},
		{event("b", "bob", "x", 4), event("b", "bob", "x", 5), event("a", "alice", "x", 6), event("a", "alice", "x", 7), event("a", "alice", "x", 8), event("b", "bob", "x", 9)},
	} {
		c := &store.Change{Events: batch}
		noErr(t, s.Commit(ctx, c), "commit batch %d", i)
		for _, e := range c.Events {
			seq := committedSeq(t, s, e)
			if seq <= last {
				t.Fatalf("batch %d: seq %d after %d", i, seq, last)
			}
			last = seq
			want = append(want, seq)
		}
	}
	all, err := s.EventsAfter(ctx, store.EventFilter{All: true}, 0, 0)
	noErr(t, err, "read all")
	equal(t, "all seqs", eventSeqs(all), want)
	equal(t, "first body", string(all[0].Body), "run.started-0")
	equal(t, "a server-wide event", all[3].Kind, events.KindAgentsChanged)

	alice, err := s.EventsAfter(ctx, store.EventFilter{Owner: "alice"}, 0, 0)
	noErr(t, err, "read alice")
	// Alice's own events and the server-wide one.
	equal(t, "alice's events", len(alice), 6)
	one, err := s.EventsAfter(ctx, store.EventFilter{SessionID: "b"}, want[4], 2)
	noErr(t, err, "read b")
	equal(t, "b after the fifth, two of them", eventSeqs(one), []uint64{want[5], want[9]})

	oldest, newest, err := s.EventBounds(ctx)
	noErr(t, err, "bounds")
	equal(t, "bounds", []uint64{oldest, newest}, []uint64{want[0], want[len(want)-1]})

	// Pruning keeps the newest, so the position survives.
	n, err := s.PruneEvents(ctx, at(1), 0)
	noErr(t, err, "prune")
	equal(t, "pruned", n, len(want)-1)
	noErr(t, s.Close(), "close")

	s = open(t, o)
	_, newest2, err := s.EventBounds(ctx)
	noErr(t, err, "bounds after reopen")
	equal(t, "newest after reopen", newest2, newest)
	c := &store.Change{Events: []store.Event{event("a", "alice", "x", 10)}}
	noErr(t, s.Commit(ctx, c), "commit after reopen")
	if seq := committedSeq(t, s, c.Events[0]); seq <= newest {
		t.Fatalf("seq %d after a reopen at %d: positions went back", seq, newest)
	}
}

// committedSeq is the position of e, committed to s. Where positions are
// given after the commit (PostgreSQL), a commit that waited its time for
// them returns without (seq 0, see store.positionCommitted): it is then
// numbered here, and read back from the log by its body.
func committedSeq(t *testing.T, s store.Store, e store.Event) uint64 {
	t.Helper()
	if e.Seq != 0 {
		return e.Seq
	}
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, err := s.NumberEvents(ctx)
		noErr(t, err, "number events")
		all, err := s.EventsAfter(ctx, store.EventFilter{All: true}, 0, 0)
		noErr(t, err, "read all")
		for _, got := range all {
			if string(got.Body) == string(e.Body) {
				return got.Seq
			}
		}
	}
	t.Fatalf("event %q has no position 30s after its commit", e.Body)
	return 0
}

// testCommitChange: a change's parts are written together or not at all.
func testCommitChange(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	m := newMeta("s", "o", at(0))
	m.TurnCount = 1
	c := &store.Change{Create: true, Meta: &m, NewTurns: []session.Turn{userTurn(0, "hi")}, Events: []store.Event{event("s", "o", events.KindSessionCreated, 0)},
		Idempotency: &store.IdempotencyRecord{Owner: "o", Key: "k1", Op: "create", Result: `{"session_id":"s"}`, Created: at(0)}}
	noErr(t, s.Commit(ctx, c), "create")
	rec, err := s.Idempotent(ctx, "o", "k1")
	noErr(t, err, "idempotency key")
	equal(t, "recorded op", rec.Op, "create")
	_, err = s.Idempotent(ctx, "other", "k1")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownKey)

	// A change that fails (the second key is taken) leaves nothing behind:
	// not its turn, not its mail, not its events.
	_, before, err := s.EventBounds(ctx)
	noErr(t, err, "bounds")
	m.TurnCount = 2
	m.Status = session.StatusRunning
	mail := newMail("m1", "s", at(1))
	bad := &store.Change{Meta: &m, NewTurns: []session.Turn{llmTurn(1, "answer")}, NewMail: []session.Mail{mail},
		Events:      []store.Event{event("s", "o", events.KindSessionUpdated, 1)},
		Idempotency: &store.IdempotencyRecord{Owner: "o", Key: "k1", Op: "create", Result: "{}", Created: at(1)}}
	if err := s.Commit(ctx, bad); err == nil {
		t.Fatal("a change reusing an idempotency key committed")
	}
	got, turns, err := s.LoadSession(ctx, "s")
	noErr(t, err, "load")
	equal(t, "turns after a failed change", len(turns), 1)
	equal(t, "status after a failed change", got.Status, session.StatusReady)
	pending, err := s.PendingMail(ctx, "s")
	noErr(t, err, "mail")
	equal(t, "mail after a failed change", len(pending), 0)
	_, after, err := s.EventBounds(ctx)
	noErr(t, err, "bounds")
	equal(t, "events after a failed change", after, before)

	// Completing a call twice fails the second change.
	d := newDeferred("t1", "s", 1)
	m.TurnCount = 2
	noErr(t, s.Commit(ctx, &store.Change{Meta: &m, NewTurns: []session.Turn{llmTurn(1, "calls")}, NewDeferred: []session.DeferredCall{d}}), "defer a call")
	res := session.ToolResult{CallID: d.Call.ID, Text: "done", Status: session.ResultOK}
	noErr(t, s.Commit(ctx, &store.Change{Completed: []store.Completion{{Token: "t1", Result: res, At: at(2)}}}), "complete")
	err = s.Commit(ctx, &store.Change{Completed: []store.Completion{{Token: "t1", Result: res, At: at(3)}}})
	wantErr(t, err, errs.KindFailedPrecondition, errs.CodeCallCompleted)

	// Helper calls and deletes.
	noErr(t, s.Commit(ctx, &store.Change{HelperCalls: []store.HelperCall{{SessionID: "s", CallID: "c1", ChildID: "child", Created: at(2)}}}), "record helper")
	child, err := s.HelperChild(ctx, "s", "c1")
	noErr(t, err, "helper child")
	equal(t, "helper child", child, "child")
	noErr(t, s.Commit(ctx, &store.Change{Delete: []string{"s"}, Events: []store.Event{event("s", "o", events.KindSessionDeleted, 2)}}), "delete")
	_, err = s.GetMeta(ctx, "s")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	child, err = s.HelperChild(ctx, "s", "c1")
	noErr(t, err, "helper child after delete")
	equal(t, "helper child after delete", child, "")
}

// testPruneEvents: pruning by age and by count, whichever cuts more, in
// seq order, never the newest event.
func testPruneEvents(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	var seqs []uint64
	for i := range 10 {
		e := event("", "", "x", i)
		e.Time = at(time.Duration(i) * time.Minute)
		c := &store.Change{Events: []store.Event{e}}
		noErr(t, s.Commit(ctx, c), "commit %d", i)
		seqs = append(seqs, committedSeq(t, s, c.Events[0]))
	}
	left := func() []uint64 {
		all, err := s.EventsAfter(ctx, store.EventFilter{All: true}, 0, 0)
		noErr(t, err, "read")
		return eventSeqs(all)
	}
	n, err := s.PruneEvents(ctx, at(0), 8) // the count cuts
	noErr(t, err, "prune by count")
	equal(t, "pruned by count", n, 2)
	equal(t, "left by count", left(), seqs[2:])
	n, err = s.PruneEvents(ctx, at(5*time.Minute), 8) // the age cuts more
	noErr(t, err, "prune by age")
	equal(t, "pruned by age", n, 3)
	equal(t, "left by age", left(), seqs[5:])
	n, err = s.PruneEvents(ctx, at(time.Hour), 0) // all are old: the newest stays
	noErr(t, err, "prune all")
	equal(t, "pruned all but the newest", n, 4)
	equal(t, "left", left(), seqs[9:])
}

// testCommitAllEvents: a group whose changes all succeed stores every
// event of every change, more than one INSERT holds, with seqs in the
// changes' order and each change's own order.
func testCommitAllEvents(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	var changes []*store.Change
	for i := range 6 {
		id := fmt.Sprintf("s%d", i)
		mustCreate(t, s, newMeta(id, "o", at(0)))
		m := mustGet(t, s, id)
		m.TurnCount++
		c := &store.Change{Meta: &m, NewTurns: []session.Turn{userTurn(0, "hi")}}
		for e := range 7 {
			c.Events = append(c.Events, event(id, "o", events.KindSessionUpdated, i*10+e))
		}
		changes = append(changes, c)
	}
	for i, err := range s.CommitAll(ctx, changes) {
		noErr(t, err, "change %d", i)
	}
	var want []uint64
	for _, c := range changes {
		for _, e := range c.Events {
			seq := committedSeq(t, s, e)
			if len(want) > 0 && seq <= want[len(want)-1] {
				t.Fatalf("seq %d after %d: not in the changes' order", seq, want[len(want)-1])
			}
			want = append(want, seq)
		}
	}
	all, err := s.EventsAfter(ctx, store.EventFilter{All: true}, 0, 0)
	noErr(t, err, "read events")
	equal(t, "events stored", eventSeqs(all), want)
	for _, c := range changes {
		equal(t, c.Meta.ID+"'s turns", mustGet(t, s, c.Meta.ID).TurnCount, 1)
	}
}

// testCommitAll: a group commit writes its changes in order, each with its
// own outcome: a failing one leaves nothing, the others all commit.
func testCommitAll(t *testing.T, fresh func(t *testing.T) Opener) {
	ctx := context.Background()
	s := open(t, fresh(t))
	mustCreate(t, s, newMeta("a", "o", at(0)))
	mustCreate(t, s, newMeta("b", "o", at(0)))
	good := func(id string, n int) *store.Change {
		m := mustGet(t, s, id)
		m.TurnCount++
		return &store.Change{Meta: &m, NewTurns: []session.Turn{userTurn(m.TurnCount-1, "hi")}, Events: []store.Event{event(id, "o", events.KindSessionUpdated, n)}}
	}
	stale := mustGet(t, s, "b")
	stale.TurnCount += 2 // appends at a turn the session does not have
	bad := &store.Change{Meta: &stale, NewTurns: []session.Turn{userTurn(1, "no")}, NewMail: []session.Mail{newMail("m-bad", "b", at(0))},
		Events: []store.Event{event("b", "o", events.KindSessionUpdated, 99)}}
	changes := []*store.Change{good("a", 1), bad, good("b", 2), {Events: []store.Event{event("", "", events.KindAgentsChanged, 3)}}}
	out := s.CommitAll(ctx, changes)
	noErr(t, out[0], "first change")
	wantErr(t, out[1], errs.KindConflict, errs.CodeTurnConflict)
	noErr(t, out[2], "third change")
	noErr(t, out[3], "fourth change")
	equal(t, "the failed change's event seq", changes[1].Events[0].Seq, uint64(0))
	seqs := []uint64{committedSeq(t, s, changes[0].Events[0]), committedSeq(t, s, changes[2].Events[0]), committedSeq(t, s, changes[3].Events[0])}
	if !(seqs[0] < seqs[1] && seqs[1] < seqs[2]) {
		t.Fatalf("seqs %v are not in the changes' order", seqs)
	}
	all, err := s.EventsAfter(ctx, store.EventFilter{All: true}, 0, 0)
	noErr(t, err, "read events")
	equal(t, "events stored", eventSeqs(all), seqs)
	equal(t, "a's turns", mustGet(t, s, "a").TurnCount, 1)
	equal(t, "b's turns", mustGet(t, s, "b").TurnCount, 1)
	pending, err := s.PendingMail(ctx, "b")
	noErr(t, err, "b's mail")
	equal(t, "the failed change's mail", len(pending), 0)
}
