package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

func testCommitStep(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("s1", "alice", at(0)), userTurn(0, "hi"))
	mustAddMail(t, s, newMail("m1", "s1", at(0)), newMail("m2", "s1", at(0)))

	meta := mustGet(t, s, "s1")
	meta.TurnCount = 3
	meta.Status = session.StatusWaiting
	meta.Usage = meta.Usage.Add(session.Usage{Prompt: 100, Completion: 20})
	meta.Updated = at(time.Minute)
	turns := []session.Turn{llmTurn(1, "calling"), userTurn(2, "results")}
	// Tokens sort against their order, which must win.
	deferred := []session.DeferredCall{newDeferred("zz", "s1", 1), newDeferred("aa", "s1", 1)}
	noErr(t, s.CommitStep(ctx, store.StepCommit{
		Meta:          meta,
		NewTurns:      turns,
		DeliveredMail: []string{"m1"},
		NewDeferred:   deferred,
	}), "commit")

	got, gotTurns, err := s.LoadSession(ctx, "s1")
	noErr(t, err, "load")
	want := meta
	want.PendingMail = 1
	want.PendingCalls = 2
	equal(t, "meta", got, want)
	equal(t, "turns", gotTurns, append([]session.Turn{userTurn(0, "hi")}, turns...))

	pending, err := s.PendingMail(ctx, "s1")
	noErr(t, err, "pending mail")
	equal(t, "pending mail", mailIDs(pending), []string{"m2"})
	all, err := s.ListMail(ctx, "s1", false)
	noErr(t, err, "all mail")
	delivered := meta.Updated
	m1 := newMail("m1", "s1", at(0))
	m1.Delivered = &delivered
	equal(t, "delivered mail", all[1], m1)

	calls, err := s.PendingDeferred(ctx, "s1")
	noErr(t, err, "pending calls")
	equal(t, "pending calls", calls, deferred)

	// A step without new turns still needs the count to match.
	meta = mustGet(t, s, "s1")
	meta.Status = session.StatusReady
	noErr(t, s.CommitStep(ctx, store.StepCommit{Meta: meta}), "commit without turns")
	equal(t, "status", mustGet(t, s, "s1").Status, session.StatusReady)
	meta.TurnCount = 2
	wantErr(t, s.CommitStep(ctx, store.StepCommit{Meta: meta}), errs.KindConflict, errs.CodeTurnConflict)
}

// snapshot is everything a commit may touch.
type snapshot struct {
	meta     session.Meta
	turns    []session.Turn
	mail     []session.Mail
	deferred []session.DeferredCall
}

func takeSnapshot(t *testing.T, s store.Store, id string) snapshot {
	t.Helper()
	ctx := context.Background()
	var sn snapshot
	var err error
	sn.meta, sn.turns, err = s.LoadSession(ctx, id)
	noErr(t, err, "load")
	sn.mail, err = s.ListMail(ctx, id, false)
	noErr(t, err, "mail")
	sn.deferred, err = s.DeferredRound(ctx, id, 1)
	noErr(t, err, "deferred")
	return sn
}

func testCommitStepAtomic(t *testing.T, fresh func(t *testing.T) Opener) {
	// Each case starts from a valid commit and breaks one thing; the store
	// checks some things before writing and some only after earlier parts
	// of the commit were written, and either way nothing may remain.
	valid := func(meta session.Meta) store.StepCommit {
		meta.TurnCount = 4
		meta.Status = session.StatusWaiting
		meta.Title = "changed"
		meta.Updated = at(time.Hour)
		return store.StepCommit{
			Meta:          meta,
			NewTurns:      []session.Turn{llmTurn(2, "x"), userTurn(3, "y")},
			DeliveredMail: []string{"m1"},
			NewDeferred:   []session.DeferredCall{newDeferred("new", "s1", 1)},
		}
	}
	tests := []struct {
		name   string
		mutate func(c *store.StepCommit)
		kind   errs.Kind
		code   string
	}{
		{"turn gap", func(c *store.StepCommit) {
			c.Meta.TurnCount = 5
			c.NewTurns = []session.Turn{llmTurn(3, "x"), userTurn(4, "y")}
		}, errs.KindConflict, errs.CodeTurnConflict},
		{"stale writer", func(c *store.StepCommit) {
			c.Meta.TurnCount = 2
			c.NewTurns = []session.Turn{llmTurn(1, "x")}
		}, errs.KindConflict, errs.CodeTurnConflict},
		{"turns not contiguous", func(c *store.StepCommit) {
			c.NewTurns = []session.Turn{llmTurn(2, "x"), userTurn(4, "y")}
		}, errs.KindInvalid, errs.CodeInvalidTurns},
		{"more turns than count", func(c *store.StepCommit) {
			c.Meta.TurnCount = 1
		}, errs.KindInvalid, errs.CodeInvalidTurns},
		{"mail already delivered", func(c *store.StepCommit) {
			c.DeliveredMail = []string{"m1", "m0"}
		}, errs.KindFailedPrecondition, errs.CodeMailDelivered},
		{"unknown mail", func(c *store.StepCommit) {
			c.DeliveredMail = []string{"m1", "nope"}
		}, errs.KindNotFound, errs.CodeUnknownMail},
		{"another session's mail", func(c *store.StepCommit) {
			c.DeliveredMail = []string{"other-mail"}
		}, errs.KindNotFound, errs.CodeUnknownMail},
		{"duplicate token", func(c *store.StepCommit) {
			c.NewDeferred = append(c.NewDeferred, newDeferred("old", "s1", 1))
		}, errs.KindConflict, errs.CodeAlreadyExists},
		{"call of another session", func(c *store.StepCommit) {
			c.NewDeferred = []session.DeferredCall{newDeferred("new", "other", 1)}
		}, errs.KindInvalid, errs.CodeInvalidCall},
		{"unknown session", func(c *store.StepCommit) {
			c.Meta.ID = "ghost"
			c.NewDeferred = nil
		}, errs.KindNotFound, errs.CodeUnknownSession},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t, fresh(t))
			ctx := context.Background()
			mustCreate(t, s, newMeta("s1", "alice", at(0)), userTurn(0, "q"))
			mustCreate(t, s, newMeta("other", "alice", at(0)))
			mustAddMail(t, s, newMail("m0", "s1", at(0)), newMail("m1", "s1", at(0)), newMail("other-mail", "other", at(0)))
			meta := mustGet(t, s, "s1")
			meta.TurnCount = 2
			noErr(t, s.CommitStep(ctx, store.StepCommit{
				Meta:          meta,
				NewTurns:      []session.Turn{llmTurn(1, "a")},
				DeliveredMail: []string{"m0"},
				NewDeferred:   []session.DeferredCall{newDeferred("old", "s1", 1)},
			}), "setup commit")
			before := takeSnapshot(t, s, "s1")
			beforeOther := takeSnapshot(t, s, "other")

			c := valid(before.meta)
			tc.mutate(&c)
			wantErr(t, s.CommitStep(ctx, c), tc.kind, tc.code)

			equal(t, "after a failed commit", takeSnapshot(t, s, "s1"), before)
			equal(t, "other session", takeSnapshot(t, s, "other"), beforeOther)
			// The valid commit still goes through: the failure held no lock.
			noErr(t, s.CommitStep(ctx, valid(before.meta)), "valid commit")
		})
	}
}

// testCommitStepSingleWriter races writers that all append the same step:
// exactly one may win.
func testCommitStepSingleWriter(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("s1", "alice", at(0)), userTurn(0, "q"))
	meta := mustGet(t, s, "s1")
	meta.TurnCount = 2

	const writers = 8
	errc := make(chan error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			m := meta
			m.Title = "writer " + string(rune('a'+i))
			errc <- s.CommitStep(ctx, store.StepCommit{Meta: m, NewTurns: []session.Turn{llmTurn(1, m.Title)}})
		})
	}
	wg.Wait()
	close(errc)
	won := 0
	for err := range errc {
		if err == nil {
			won++
			continue
		}
		wantErr(t, err, errs.KindConflict, errs.CodeTurnConflict)
	}
	equal(t, "winners", won, 1)
	got, turns, err := s.LoadSession(ctx, "s1")
	noErr(t, err, "load")
	equal(t, "turn count", got.TurnCount, 2)
	// The stored turn is the winner's, consistent with its title.
	equal(t, "winner's turn", turns[1].LLM.Text, got.Title)
}
