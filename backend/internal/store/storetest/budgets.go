package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

func ptr[T any](v T) *T { return &v }

// reservation asks for a call of id in the tree root, at at(0).
func reservation(id, root, owner string, tokens int64) store.Reservation {
	return store.Reservation{SessionID: id, RootID: root, Owner: owner, Tokens: tokens, Now: at(0), Expires: at(time.Hour)}
}

// A tree's budget is its root's; the spend a change settles counts for
// the tree and the owner in every period, and frees the reservation.
func testBudgets(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	root := newMeta("root", "alice", at(0))
	noErr(t, s.Commit(ctx, &store.Change{Create: true, Meta: &root, TreeBudget: &session.Budget{Tokens: ptr(int64(100))}}), "create root")
	child := newMeta("child", "alice", at(time.Second))
	child.ParentID, child.Depth = "root", 1
	mustCreate(t, s, child)

	got := mustGet(t, s, "child")
	if got.Root() != "root" || got.Budget == nil || *got.Budget.Tokens != 100 {
		t.Fatalf("child: root %s, budget %+v; want root's 100 tokens", got.Root(), got.Budget)
	}

	adm, err := s.Reserve(ctx, reservation("root", "root", "alice", 60))
	noErr(t, err, "reserve for root")
	equal(t, "root's admission", adm.Exceeded, "")
	// The child's call sees the root's reservation: 60 of 100 taken.
	adm, err = s.Reserve(ctx, reservation("child", "root", "alice", 60))
	noErr(t, err, "reserve for child")
	equal(t, "child's admission beside 60 reserved", adm.Exceeded, "")
	// Now 120 are held by others for the root's next call.
	adm, err = s.Reserve(ctx, reservation("root", "root", "alice", 60))
	noErr(t, err, "reserve again for root")
	equal(t, "root's admission beside the child's 60", adm.Exceeded, "")

	// The root's answer settles: 70 spent, its reservation gone.
	root.Updated = at(2 * time.Second)
	noErr(t, s.Commit(ctx, &store.Change{Meta: &root, Spend: &store.SpendChange{
		SessionID: "root", RootID: "root", Owner: "alice", Spend: session.Spend{Tokens: 70, Cost: 5}, At: at(0),
	}}), "settle root")
	if got := mustGet(t, s, "child"); got.TreeSpend != (session.Spend{Tokens: 70, Cost: 5}) {
		t.Fatalf("tree spend %+v, want 70 tokens", got.TreeSpend)
	}
	// 70 spent + the child's 60 held: over 100.
	adm, err = s.Reserve(ctx, reservation("root", "root", "alice", 10))
	noErr(t, err, "reserve after settling")
	equal(t, "admission past the budget", adm.Exceeded, store.ScopeSession)
	equal(t, "tree spend read by the admission", adm.TreeSpend, session.Spend{Tokens: 70, Cost: 5})

	// A reservation past its expiry holds nothing.
	late := reservation("root", "root", "alice", 10)
	late.Now = at(2 * time.Hour)
	adm, err = s.Reserve(ctx, late)
	noErr(t, err, "reserve after the child's expired")
	equal(t, "admission once the child's reservation expired", adm.Exceeded, "")

	in, total, err := s.OwnerSpend(ctx, "alice", session.PeriodDay, at(0))
	noErr(t, err, "owner spend")
	equal(t, "owner's day", in, session.Spend{Tokens: 70, Cost: 5})
	equal(t, "owner's total", total, session.Spend{Tokens: 70, Cost: 5})
	in, _, err = s.OwnerSpend(ctx, "alice", session.PeriodDay, at(48*time.Hour))
	noErr(t, err, "owner spend two days later")
	equal(t, "owner's day two days later", in, session.Spend{})

	// Owners: their own budget, else the default, else none.
	_, found, err := s.OwnerBudget(ctx, "alice")
	noErr(t, err, "owner budget")
	equal(t, "alice has a budget", found, false)
	ob := session.OwnerBudget{Owner: "alice", Budget: session.Budget{Tokens: ptr(int64(50))}, Period: session.PeriodMonth, Source: "owner"}
	noErr(t, s.SetOwnerBudget(ctx, ob, at(0)), "set owner budget")
	b, found, err := s.OwnerBudget(ctx, "alice")
	noErr(t, err, "owner budget")
	equal(t, "alice's budget", b, ob)
	equal(t, "found", found, true)
	other := newMeta("other", "alice", at(3*time.Second))
	mustCreate(t, s, other)
	adm, err = s.Reserve(ctx, reservation("other", "other", "alice", 10))
	noErr(t, err, "reserve past the owner's budget")
	equal(t, "admission past the owner's 50", adm.Exceeded, store.ScopeOwner)
	def := &session.OwnerBudget{Budget: session.Budget{Tokens: ptr(int64(1000))}, Period: session.PeriodTotal}
	bob := newMeta("bob1", "bob", at(4*time.Second))
	mustCreate(t, s, bob)
	r := reservation("bob1", "bob1", "bob", 10)
	r.OwnerDefault = def
	adm, err = s.Reserve(ctx, r)
	noErr(t, err, "reserve under the default")
	equal(t, "bob's budget", adm.Owner.Source, "default")
	equal(t, "bob's admission", adm.Exceeded, "")

	// Removing the tree's limits removes its budget.
	noErr(t, s.SetTreeBudget(ctx, "root", session.Budget{}, at(0)), "clear tree budget")
	if got := mustGet(t, s, "child"); got.Budget != nil {
		t.Fatalf("budget after clearing: %+v", got.Budget)
	}
}

// Sessions of one owner that ask at once for the last of its budget are
// admitted one at a time: only the first finds it free.
func testReserveRace(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	noErr(t, s.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "alice", Budget: session.Budget{Tokens: ptr(int64(100))}, Period: session.PeriodTotal}, at(0)), "set budget")
	const n = 8
	for i := range n {
		mustCreate(t, s, newMeta(fmt.Sprintf("s%d", i), "alice", at(time.Duration(i))))
	}
	var wg sync.WaitGroup
	admitted := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s%d", i)
			adm, err := s.Reserve(ctx, reservation(id, id, "alice", 100))
			if err != nil {
				t.Errorf("reserve %s: %v", id, err)
				return
			}
			if adm.Exceeded == "" {
				admitted <- id
			}
		}()
	}
	wg.Wait()
	close(admitted)
	var ids []string
	for id := range admitted {
		ids = append(ids, id)
	}
	if len(ids) != 1 {
		t.Fatalf("admitted %v, want exactly one", ids)
	}
}
