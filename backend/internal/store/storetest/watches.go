package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

func testWatches(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		mustCreate(t, s, newMeta(id, "alice", at(0)))
	}
	put := func(w, tgt string, exp time.Time) {
		t.Helper()
		noErr(t, s.PutWatch(ctx, session.Watch{WatcherID: w, TargetID: tgt, Expires: exp}), "watch %s on %s", w, tgt)
	}
	list := func() []session.Watch {
		t.Helper()
		ws, err := s.ListWatches(ctx)
		noErr(t, err, "list")
		return ws
	}
	put("a", "b", at(1*time.Minute))
	put("c", "b", at(2*time.Minute))
	put("a", "c", at(3*time.Minute))
	put("a", "b", at(4*time.Minute)) // renewal moves the expiry
	equal(t, "watches", list(), []session.Watch{
		{WatcherID: "a", TargetID: "b", Expires: at(4 * time.Minute)},
		{WatcherID: "a", TargetID: "c", Expires: at(3 * time.Minute)},
		{WatcherID: "c", TargetID: "b", Expires: at(2 * time.Minute)},
	})

	n, err := s.DeleteExpiredWatches(ctx, at(2*time.Minute))
	noErr(t, err, "delete expired")
	equal(t, "expired", n, 1)
	noErr(t, s.DeleteWatch(ctx, "a", "c"), "unwatch")
	noErr(t, s.DeleteWatch(ctx, "a", "c"), "unwatch again")
	equal(t, "watches", list(), []session.Watch{{WatcherID: "a", TargetID: "b", Expires: at(4 * time.Minute)}})
	put("c", "b", at(5*time.Minute))
	of, err := s.WatchersOf(ctx, "b")
	noErr(t, err, "watchers of b")
	equal(t, "watchers of b", of, []session.Watch{
		{WatcherID: "a", TargetID: "b", Expires: at(4 * time.Minute)},
		{WatcherID: "c", TargetID: "b", Expires: at(5 * time.Minute)},
	})
	of, err = s.WatchersOf(ctx, "a")
	noErr(t, err, "watchers of a")
	equal(t, "watchers of a", len(of), 0)
	noErr(t, s.DeleteWatch(ctx, "c", "b"), "unwatch c")

	err = s.PutWatch(ctx, session.Watch{WatcherID: "a", TargetID: "ghost", Expires: at(time.Hour)})
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
	err = s.PutWatch(ctx, session.Watch{WatcherID: "ghost", TargetID: "a", Expires: at(time.Hour)})
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)

	// Deleting a session takes its watches, as watcher and as target, in
	// the delete's own transaction.
	mustCreate(t, s, newMeta("d", "alice", at(0)))
	put("d", "a", at(time.Hour))
	put("b", "d", at(time.Hour))
	noErr(t, s.Commit(ctx, &store.Change{Delete: []string{"d"}}), "delete d")
	equal(t, "watches after the delete", list(), []session.Watch{{WatcherID: "a", TargetID: "b", Expires: at(4 * time.Minute)}})
}

func testLeases(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("x", "alice", at(0)))
	const ttl = 10 * time.Second
	sec := func(n int) time.Time { return at(time.Duration(n) * time.Second) }
	acquire := func(h string, now time.Time) (store.Lease, error) { return s.AcquireLease(ctx, "x", h, now, ttl) }
	mustAcquire := func(h string, now time.Time, epoch int64) store.Lease {
		t.Helper()
		l, err := acquire(h, now)
		noErr(t, err, "%s acquires", h)
		equal(t, h+"'s lease", l, store.Lease{SessionID: "x", Holder: h, Epoch: epoch, Expires: now.Add(ttl)})
		return l
	}
	renew := func(l store.Lease, now time.Time) []string {
		t.Helper()
		lost, err := s.RenewLeases(ctx, l.Holder, []store.Lease{l}, now, ttl)
		noErr(t, err, "renew")
		return lost
	}
	held := func(err error) { t.Helper(); wantErr(t, err, errs.KindConflict, errs.CodeLeaseHeld) }

	_, err := s.GetLease(ctx, "x")
	wantErr(t, err, errs.KindNotFound, errs.CodeNoLease)
	h1 := mustAcquire("h1", sec(0), 1)
	_, err = acquire("h2", sec(1))
	held(err)
	h1 = mustAcquire("h1", sec(2), 1) // its own live lease: same epoch, until 12
	equal(t, "h2 renews what it never held", renew(store.Lease{SessionID: "x", Holder: "h2", Epoch: 1}, sec(3)), []string{"x"})
	equal(t, "h1 renews", renew(h1, sec(5)), []string(nil)) // until 15
	got, err := s.GetLease(ctx, "x")
	noErr(t, err, "get lease")
	equal(t, "lease", got, store.Lease{SessionID: "x", Holder: "h1", Epoch: 1, Expires: sec(15)})
	equal(t, "live before expiry", got.Live(sec(14)), true)
	equal(t, "dead at expiry", got.Live(sec(15)), false)
	_, err = acquire("h2", sec(14))
	held(err)
	h2 := mustAcquire("h2", sec(15), 2) // the expired lease, a new epoch
	equal(t, "h1 renews what it lost", renew(h1, sec(16)), []string{"x"})

	noErr(t, s.ReleaseLease(ctx, "x", "h1", h1.Epoch), "h1 releases what it lost")
	_, err = acquire("h1", sec(16))
	held(err)
	noErr(t, s.ReleaseLease(ctx, "x", "h2", h2.Epoch), "h2 releases")
	h1 = mustAcquire("h1", sec(16), 1) // a new row starts again at 1

	// An expired lease nobody took is still its holder's to renew; once
	// it is taken again, by anyone, the epoch moves on.
	equal(t, "renew after expiry", renew(h1, sec(30)), []string(nil))
	mustAcquire("h1", sec(45), 2)

	_, err = s.AcquireLease(ctx, "ghost", "h1", sec(0), ttl)
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownSession)
}

// testExpireLeases: a server that starts under the id of one that died
// ends that one's leases at once. They are expired, so their sessions
// need a server again, and a lease taken again, by any holder, moves its
// epoch on; other holders' leases stay as they are.
func testExpireLeases(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	const ttl = 10 * time.Second
	sec := func(n int) time.Time { return at(time.Duration(n) * time.Second) }
	for _, id := range []string{"x", "y", "z"} {
		m := newMeta(id, "alice", at(0))
		m.Status = session.StatusRunning
		mustCreate(t, s, m)
	}
	lease := func(id, holder string) store.Lease {
		t.Helper()
		l, err := s.AcquireLease(ctx, id, holder, sec(0), ttl)
		noErr(t, err, "%s acquires %s", holder, id)
		return l
	}
	lease("x", "h1")
	lease("y", "h1")
	z := lease("z", "h2")

	n, err := s.ExpireLeases(ctx, "h1", sec(1))
	noErr(t, err, "expire h1's leases")
	equal(t, "leases expired", n, 2)
	orphans, err := s.Orphans(ctx, sec(1), 10)
	noErr(t, err, "orphans")
	equal(t, "orphans once h1's leases are expired", orphans, []string{"x", "y"})
	got, err := s.GetLease(ctx, "z")
	noErr(t, err, "get z's lease")
	equal(t, "h2's lease", got, z)
	l, err := s.AcquireLease(ctx, "x", "h1", sec(1), ttl)
	noErr(t, err, "h1 takes x again")
	equal(t, "x's lease taken again", l, store.Lease{SessionID: "x", Holder: "h1", Epoch: 2, Expires: sec(11)})

	n, err = s.ExpireLeases(ctx, "nobody", sec(1))
	noErr(t, err, "expire the leases of a holder with none")
	equal(t, "leases expired", n, 0)
}

// testFences: a change written under a lease fails alone once the lease
// passed to another holder, and the others of its group commit.
func testFences(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	const ttl = 10 * time.Second
	for _, id := range []string{"x", "y"} {
		mustCreate(t, s, newMeta(id, "alice", at(0)))
	}
	old, err := s.AcquireLease(ctx, "x", "h1", at(0), ttl)
	noErr(t, err, "h1 acquires")
	fence := &store.Fence{SessionID: "x", Holder: "h1", Epoch: old.Epoch}
	mail := func(id, to string) []session.Mail { return []session.Mail{newMail(id, to, at(time.Second))} }
	noErr(t, s.Commit(ctx, &store.Change{Fence: fence, NewMail: mail("m1", "x")}), "fenced write of the holder")

	_, err = s.AcquireLease(ctx, "x", "h2", at(ttl), ttl)
	noErr(t, err, "h2 takes the expired lease")
	errs2 := s.CommitAll(ctx, []*store.Change{
		{Fence: fence, NewMail: mail("m2", "x")},
		{NewMail: mail("m3", "y")},
	})
	wantErr(t, errs2[0], errs.KindFailedPrecondition, errs.CodeLeaseLost)
	noErr(t, errs2[1], "unfenced change of the same group")
	pending, err := s.PendingMail(ctx, "x")
	noErr(t, err, "pending of x")
	equal(t, "x's mail", mailIDs(pending), []string{"m1"})
	pending, err = s.PendingMail(ctx, "y")
	noErr(t, err, "pending of y")
	equal(t, "y's mail", mailIDs(pending), []string{"m3"})
	wantErr(t, s.Commit(ctx, &store.Change{Fence: &store.Fence{SessionID: "y", Holder: "h1", Epoch: 1}}), errs.KindFailedPrecondition, errs.CodeLeaseLost)
}

// testFencedSteps: a step written under a lease (its metadata, with one
// new turn, several or none) commits while the lease is the writer's; once
// the lease passed to another holder it fails with lease_lost and writes
// nothing, and a step from the wrong turn under a valid lease fails with
// turn_conflict, as unfenced ones do, which commit the same way.
func testFencedSteps(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	const ttl = 10 * time.Second
	mustCreate(t, s, newMeta("x", "alice", at(0)), userTurn(0, "hi"))
	l, err := s.AcquireLease(ctx, "x", "h1", at(0), ttl)
	noErr(t, err, "h1 acquires")
	fence := &store.Fence{SessionID: "x", Holder: "h1", Epoch: l.Epoch}
	step := func(meta session.Meta, f *store.Fence, turns ...session.Turn) *store.Change {
		meta.TurnCount += len(turns)
		meta.Updated = meta.Updated.Add(time.Second)
		return &store.Change{Fence: f, Meta: &meta, NewTurns: turns,
			Events: []store.Event{{SessionID: "x", Owner: "alice", Kind: events.KindSessionUpdated, Time: meta.Updated, Body: []byte("e")}}}
	}

	meta := mustGet(t, s, "x")
	meta.Status = session.StatusRunning
	noErr(t, s.Commit(ctx, step(meta, fence, llmTurn(1, "one"))), "fenced step with a turn")
	noErr(t, s.Commit(ctx, step(mustGet(t, s, "x"), fence)), "fenced step without turns")
	noErr(t, s.Commit(ctx, step(mustGet(t, s, "x"), fence, userTurn(2, "two"), llmTurn(3, "three"))), "fenced step with two turns")
	got, turns, err := s.LoadSession(ctx, "x")
	noErr(t, err, "load")
	equal(t, "turn count", got.TurnCount, 4)
	equal(t, "status", got.Status, session.StatusRunning)
	equal(t, "turns", turns, []session.Turn{userTurn(0, "hi"), llmTurn(1, "one"), userTurn(2, "two"), llmTurn(3, "three")})

	stale := mustGet(t, s, "x")
	stale.TurnCount = 3
	wantErr(t, s.Commit(ctx, step(stale, fence, userTurn(3, "again"))), errs.KindConflict, errs.CodeTurnConflict)
	// Every committed event numbered first (a PostgreSQL commit may return
	// before its events have positions), so that the newest cannot move
	// below but by a failed change's event.
	_, err = s.NumberEvents(ctx)
	noErr(t, err, "number events")
	_, newest, err := s.EventBounds(ctx)
	noErr(t, err, "bounds")

	_, err = s.AcquireLease(ctx, "x", "h2", at(ttl), ttl)
	noErr(t, err, "h2 takes the expired lease")
	before := mustGet(t, s, "x")
	for _, turns := range [][]session.Turn{nil, {userTurn(4, "lost")}, {userTurn(4, "lost"), llmTurn(5, "lost")}} {
		c := step(before, fence, turns...)
		wantErr(t, s.Commit(ctx, c), errs.KindFailedPrecondition, errs.CodeLeaseLost)
		equal(t, "seq of a failed change's event", c.Events[0].Seq, uint64(0))
	}
	after, turns, err := s.LoadSession(ctx, "x")
	noErr(t, err, "load after the lost lease")
	equal(t, "meta after the lost lease", after, before)
	equal(t, "turns after the lost lease", len(turns), 4)
	_, newestAfter, err := s.EventBounds(ctx)
	noErr(t, err, "bounds after")
	equal(t, "events after the lost lease", newestAfter, newest)

	// The same steps unfenced, as one server writes them.
	noErr(t, s.Commit(ctx, step(before, nil, userTurn(4, "four"))), "unfenced step with a turn")
	noErr(t, s.Commit(ctx, step(mustGet(t, s, "x"), nil)), "unfenced step without turns")
	wantErr(t, s.Commit(ctx, step(before, nil, userTurn(4, "again"))), errs.KindConflict, errs.CodeTurnConflict)
	_, turns, err = s.LoadSession(ctx, "x")
	noErr(t, err, "load after unfenced steps")
	equal(t, "turns after unfenced steps", turns[4:], []session.Turn{userTurn(4, "four")})
}

// testOrphans: sessions that need a server are found once their lease is
// gone or expired.
func testOrphans(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	const ttl = 10 * time.Second
	running := func(id string, created time.Time) {
		m := newMeta(id, "alice", created)
		m.Status = session.StatusRunning
		mustCreate(t, s, m)
	}
	running("r1", at(0))
	running("r2", at(time.Second))
	mustCreate(t, s, newMeta("idle", "alice", at(2*time.Second)))
	mustCreate(t, s, newMeta("mailed", "alice", at(3*time.Second)))
	mustAddMail(t, s, newMail("m1", "mailed", at(0)))
	// Mail of a session that waits for a client waits with it.
	failed := newMeta("failed", "alice", at(4*time.Second))
	failed.Status = session.StatusFailed
	mustCreate(t, s, failed)
	mustAddMail(t, s, newMail("m2", "failed", at(0)))
	// A command is a client's request, whatever the session's status;
	// a finished one asks for nothing (issue 33: an idle session's command
	// was stranded when its servers both died).
	paused := newMeta("commanded", "alice", at(5*time.Second))
	paused.Status = session.StatusPaused
	mustCreate(t, s, paused)
	noErr(t, s.AddCommand(ctx, store.Command{ID: "c1", SessionID: "commanded", Owner: "alice", Kind: "resume", Body: `{}`, Created: at(0)}), "add c1")
	mustCreate(t, s, newMeta("answered", "alice", at(6*time.Second)))
	noErr(t, s.AddCommand(ctx, store.Command{ID: "c2", SessionID: "answered", Owner: "alice", Kind: "pause", Body: `{}`, Created: at(0)}), "add c2")
	_, err := s.FinishCommand(ctx, "c2", `{}`, at(time.Second))
	noErr(t, err, "finish c2")
	orphans := func(now time.Time) []string {
		t.Helper()
		ids, err := s.Orphans(ctx, now, 100)
		noErr(t, err, "orphans")
		return ids
	}
	equal(t, "without leases", orphans(at(0)), []string{"r1", "r2", "mailed", "commanded"})
	_, err = s.AcquireLease(ctx, "r1", "h1", at(0), ttl)
	noErr(t, err, "lease r1")
	_, err = s.AcquireLease(ctx, "commanded", "h1", at(0), ttl)
	noErr(t, err, "lease commanded")
	equal(t, "r1 and commanded held", orphans(at(time.Second)), []string{"r2", "mailed"})
	equal(t, "their leases expired", orphans(at(ttl)), []string{"r1", "r2", "mailed", "commanded"})
	ids, err := s.Orphans(ctx, at(ttl), 1)
	noErr(t, err, "orphans with a limit")
	equal(t, "limited", ids, []string{"r1"})
}

// testCommands: a command is added, found by the holder of its session's
// lease, finished once, read back, and pruned once finished.
func testCommands(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("x", "alice", at(0)))
	mustCreate(t, s, newMeta("y", "alice", at(0)))
	_, err := s.AcquireLease(ctx, "x", "h1", at(0), time.Minute)
	noErr(t, err, "lease")
	c1 := store.Command{ID: "c1", SessionID: "x", Owner: "alice", Kind: "cancel", Body: `{"a":1}`, Created: at(time.Second)}
	c2 := store.Command{ID: "c2", SessionID: "x", Owner: "alice", Kind: "pause", Body: `{}`, Created: at(2 * time.Second)}
	c3 := store.Command{ID: "c3", SessionID: "y", Owner: "alice", Kind: "pause", Body: `{}`, Created: at(time.Second)}
	for _, c := range []store.Command{c2, c1, c3} {
		noErr(t, s.AddCommand(ctx, c), "add %s", c.ID)
	}
	wantErr(t, s.AddCommand(ctx, c1), errs.KindConflict, errs.CodeAlreadyExists)
	pending, err := s.PendingCommands(ctx, "h1")
	noErr(t, err, "pending")
	equal(t, "pending of h1", pending, []store.Command{c1, c2})
	pending, err = s.PendingCommands(ctx, "h2")
	noErr(t, err, "pending of h2")
	equal(t, "pending of h2", len(pending), 0)
	for id, want := range map[string]bool{"x": true, "y": true, "z": false} {
		has, err := s.HasPendingCommands(ctx, id)
		noErr(t, err, "has pending %s", id)
		equal(t, "has pending "+id, has, want)
	}

	ok, err := s.FinishCommand(ctx, "c1", `{"ok":true}`, at(3*time.Second))
	noErr(t, err, "finish")
	equal(t, "first finish", ok, true)
	ok, err = s.FinishCommand(ctx, "c1", `{"ok":false}`, at(4*time.Second))
	noErr(t, err, "finish again")
	equal(t, "second finish", ok, false)
	got, err := s.GetCommand(ctx, "c1")
	noErr(t, err, "get")
	done := c1
	done.Body, done.Result, done.Done = "", `{"ok":true}`, at(3*time.Second)
	equal(t, "finished command", got, done)
	pending, err = s.PendingCommands(ctx, "h1")
	noErr(t, err, "pending after finish")
	equal(t, "pending after finish", pending, []store.Command{c2})
	_, err = s.GetCommand(ctx, "ghost")
	wantErr(t, err, errs.KindNotFound, errs.CodeUnknownCommand)

	// Pruning removes finished commands and those of sessions that are
	// gone, never one still waiting for its holder, however old (issue 33:
	// a command whose servers both died was deleted unapplied).
	c4 := store.Command{ID: "c4", SessionID: "gone", Owner: "alice", Kind: "pause", Body: `{}`, Created: at(time.Second)}
	noErr(t, s.AddCommand(ctx, c4), "add c4")
	n, err := s.PruneCommands(ctx, at(2*time.Second))
	noErr(t, err, "prune")
	equal(t, "pruned", n, 2)
	for _, id := range []string{"c1", "c4"} {
		_, err = s.GetCommand(ctx, id)
		wantErr(t, err, errs.KindNotFound, errs.CodeUnknownCommand)
	}
	for _, id := range []string{"c2", "c3"} {
		_, err = s.GetCommand(ctx, id)
		noErr(t, err, "%s kept", id)
	}
}
