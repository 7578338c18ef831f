package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
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

	err = s.PutWatch(ctx, session.Watch{WatcherID: "a", TargetID: "ghost", Expires: at(time.Hour)})
	wantErr(t, err, errs.KindNotFound, store.CodeUnknownSession)
	err = s.PutWatch(ctx, session.Watch{WatcherID: "ghost", TargetID: "a", Expires: at(time.Hour)})
	wantErr(t, err, errs.KindNotFound, store.CodeUnknownSession)

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
	acquire := func(h string, now time.Time) error { return s.AcquireLease(ctx, "x", h, now, ttl) }
	renew := func(h string, now time.Time) error { return s.RenewLease(ctx, "x", h, now, ttl) }
	held := func(err error) { t.Helper(); wantErr(t, err, errs.KindConflict, store.CodeLeaseHeld) }
	lost := func(err error) { t.Helper(); wantErr(t, err, errs.KindFailedPrecondition, store.CodeLeaseLost) }

	noErr(t, acquire("h1", sec(0)), "h1 acquires")
	held(acquire("h2", sec(1)))
	noErr(t, acquire("h1", sec(2)), "h1 acquires again") // now until 12
	lost(renew("h2", sec(3)))
	noErr(t, renew("h1", sec(5)), "h1 renews") // now until 15
	held(acquire("h2", sec(14)))
	noErr(t, acquire("h2", sec(15)), "h2 takes the expired lease")
	lost(renew("h1", sec(16)))

	noErr(t, s.ReleaseLease(ctx, "x", "h1"), "h1 releases what it lost")
	held(acquire("h1", sec(16)))
	noErr(t, s.ReleaseLease(ctx, "x", "h2"), "h2 releases")
	noErr(t, acquire("h1", sec(16)), "h1 acquires the free lease")

	// A holder cannot renew past expiry; it must acquire again.
	lost(renew("h1", sec(26)))
	noErr(t, acquire("h1", sec(26)), "h1 acquires after expiry")

	err := s.AcquireLease(ctx, "ghost", "h1", sec(0), ttl)
	wantErr(t, err, errs.KindNotFound, store.CodeUnknownSession)
}
