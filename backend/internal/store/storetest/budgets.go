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

// reservation asks for a call of id in the tree root, at at(0), with
// input tokens of input that would like up to output tokens of output and
// starts with no less than 10.
func reservation(id, root, owner string, input, output int64) store.Reservation {
	return store.Reservation{
		SessionID: id, RootID: root, Owner: owner,
		Input: input, Output: output, MinOutput: 10,
		Now: at(0), Expires: at(time.Hour),
	}
}

// admitted fails the test unless adm admits its call with an output cap
// of output.
func admitted(t *testing.T, what string, adm store.Admission, output int64) {
	t.Helper()
	if adm.Exceeded != "" || adm.Output != output {
		t.Fatalf("%s: refused by %q (held %v), output cap %d; want admitted with %d", what, adm.Exceeded, adm.Held, adm.Output, output)
	}
}

// refused fails the test unless adm refuses its call by scope, held
// saying whether only other calls' reservations refused it.
func refused(t *testing.T, what string, adm store.Admission, scope string, held bool) {
	t.Helper()
	if adm.Exceeded != scope || adm.Held != held || adm.Output != 0 {
		t.Fatalf("%s: refused by %q (held %v), output cap %d; want refused by %q (held %v)", what, adm.Exceeded, adm.Held, adm.Output, scope, held)
	}
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

	// The root's call takes 20 of input and the 40 of output it asks for.
	adm, err := s.Reserve(ctx, reservation("root", "root", "alice", 20, 40))
	noErr(t, err, "reserve for root")
	admitted(t, "root's call", adm, 40)
	// The child's call sees the root's 60 held: 20 of output are left
	// after its input.
	adm, err = s.Reserve(ctx, reservation("child", "root", "alice", 20, 40))
	noErr(t, err, "reserve for child")
	admitted(t, "child's call beside 60 held", adm, 20)
	// The root's next call replaces its own reservation: the child's 40
	// are held.
	adm, err = s.Reserve(ctx, reservation("root", "root", "alice", 20, 40))
	noErr(t, err, "reserve again for root")
	admitted(t, "root's call beside the child's 40", adm, 40)

	// The root's answer settles: 70 spent, its reservation gone.
	root.Updated = at(2 * time.Second)
	noErr(t, s.Commit(ctx, &store.Change{Meta: &root, Spend: &store.SpendChange{
		SessionID: "root", RootID: "root", Owner: "alice", Spend: session.Spend{Tokens: 70, Cost: 5}, At: at(0), Reserved: true,
	}}), "settle root")
	if got := mustGet(t, s, "child"); got.TreeSpend != (session.Spend{Tokens: 70, Cost: 5}) {
		t.Fatalf("tree spent %+v, want 70 tokens", got.TreeSpend)
	}
	// 70 spent and the child's 40 held: no room, but only while the
	// child's call runs.
	adm, err = s.Reserve(ctx, reservation("root", "root", "alice", 20, 40))
	noErr(t, err, "reserve after settling")
	refused(t, "call beside the child's reservation", adm, store.ScopeSession, true)
	equal(t, "tree spend read by the admission", adm.TreeSpend, session.Spend{Tokens: 70, Cost: 5})
	// 70 spent leave no room for 40 of input: the budget is spent.
	adm, err = s.Reserve(ctx, reservation("root", "root", "alice", 40, 40))
	noErr(t, err, "reserve past the budget")
	refused(t, "call past the budget", adm, store.ScopeSession, false)

	// A reservation past its expiry holds nothing.
	late := reservation("root", "root", "alice", 20, 40)
	late.Now = at(2 * time.Hour)
	adm, err = s.Reserve(ctx, late)
	noErr(t, err, "reserve after the child's expired")
	admitted(t, "call once the child's reservation expired", adm, 10)

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
	adm, err = s.Reserve(ctx, reservation("other", "other", "alice", 10, 40))
	noErr(t, err, "reserve past the owner's budget")
	refused(t, "call past the owner's 50", adm, store.ScopeOwner, false)
	def := &session.OwnerBudget{Budget: session.Budget{Tokens: ptr(int64(1000))}, Period: session.PeriodTotal}
	bob := newMeta("bob1", "bob", at(4*time.Second))
	mustCreate(t, s, bob)
	r := reservation("bob1", "bob1", "bob", 10, 40)
	r.OwnerDefault = def
	adm, err = s.Reserve(ctx, r)
	noErr(t, err, "reserve under the default")
	equal(t, "bob's budget", adm.Owner.Source, "default")
	admitted(t, "bob's call", adm, 40)
	// A call under no budget is not capped.
	carol := newMeta("carol1", "carol", at(5*time.Second))
	mustCreate(t, s, carol)
	adm, err = s.Reserve(ctx, reservation("carol1", "carol1", "carol", 10, 40))
	noErr(t, err, "reserve under no budget")
	admitted(t, "carol's call", adm, 0)

	// Removing the tree's limits removes its budget.
	noErr(t, s.SetTreeBudget(ctx, "root", session.Budget{}, at(0)), "clear tree budget")
	if got := mustGet(t, s, "child"); got.Budget != nil {
		t.Fatalf("budget after clearing: %+v", got.Budget)
	}
}

// Sessions of one owner that ask at once for the last of its budget are
// admitted one at a time: only the first finds it free.
// TreeBudget reads a tree's budget and what the whole tree spent, and a
// budget keeps whether it resumes what it paused by itself: a tree's as
// every session of the tree reads it, an owner's as OwnerBudget does.
func testTreeBudgetAndAutoResume(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	root := newMeta("root", "alice", at(0))
	noErr(t, s.Commit(ctx, &store.Change{Create: true, Meta: &root, TreeBudget: &session.Budget{Tokens: ptr(int64(100)), AutoResume: true}}), "create root")
	child := newMeta("child", "alice", at(time.Second))
	child.ParentID, child.Depth = "root", 1
	mustCreate(t, s, child)
	child.Updated = at(2 * time.Second)
	noErr(t, s.Commit(ctx, &store.Change{Meta: &child, Spend: &store.SpendChange{
		SessionID: "child", RootID: "root", Owner: "alice", Spend: session.Spend{Tokens: 70, Cost: 5}, At: at(0),
	}}), "settle the child's call")

	b, spent, err := s.TreeBudget(ctx, "root")
	noErr(t, err, "read the tree's budget")
	if b == nil || b.Tokens == nil || *b.Tokens != 100 || !b.AutoResume || spent != (session.Spend{Tokens: 70, Cost: 5}) {
		t.Fatalf("tree budget %+v, spent %+v; want 100 tokens resuming by itself, 70 spent", b, spent)
	}
	if got := mustGet(t, s, "child"); got.Budget == nil || !got.Budget.AutoResume {
		t.Fatalf("the child reads the budget %+v, want it resuming by itself", got.Budget)
	}
	noErr(t, s.SetTreeBudget(ctx, "root", session.Budget{Tokens: ptr(int64(200))}, at(3*time.Second)), "replace the tree's budget")
	if b, _, err := s.TreeBudget(ctx, "root"); err != nil || b == nil || b.AutoResume {
		t.Fatalf("replaced budget %+v (%v), want one that does not resume by itself", b, err)
	}
	if b, spent, err := s.TreeBudget(ctx, "nosuch"); err != nil || b != nil || spent != (session.Spend{}) {
		t.Fatalf("a tree with no budget: %+v, %+v, %v", b, spent, err)
	}

	noErr(t, s.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "alice", Budget: session.Budget{Tokens: ptr(int64(5)), AutoResume: true}, Period: session.PeriodDay}, at(0)), "set the owner's budget")
	ob, found, err := s.OwnerBudget(ctx, "alice")
	noErr(t, err, "read the owner's budget")
	if !found || !ob.Budget.AutoResume || ob.Period != session.PeriodDay {
		t.Fatalf("owner budget %+v (found %v), want a day's that resumes by itself", ob, found)
	}
}

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
			adm, err := s.Reserve(ctx, reservation(id, id, "alice", 50, 50))
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

// A call is granted the output its budgets leave after what is spent,
// what the other calls in flight hold and its own input: tokens under a
// token limit, what the money buys at the output price under a cost
// limit, the least over the tree's and the owner's budgets.
func testReserveGrants(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	noErr(t, s.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "alice", Budget: session.Budget{Tokens: ptr(int64(1000))}, Period: session.PeriodTotal}, at(0)), "set budget")
	for i := range 5 {
		mustCreate(t, s, newMeta(fmt.Sprintf("s%d", i), "alice", at(time.Duration(i))))
	}

	// Tokens, under the owner's 1,000.
	adm, err := s.Reserve(ctx, reservation("s1", "s1", "alice", 300, 500))
	noErr(t, err, "reserve s1")
	admitted(t, "s1, alone", adm, 500)
	adm, err = s.Reserve(ctx, reservation("s2", "s2", "alice", 100, 500))
	noErr(t, err, "reserve s2")
	admitted(t, "s2 beside s1's 800", adm, 100)
	adm, err = s.Reserve(ctx, reservation("s3", "s3", "alice", 100, 500))
	noErr(t, err, "reserve s3")
	refused(t, "s3 beside 1,000 held", adm, store.ScopeOwner, true)
	// s1 spends less than it held.
	s1 := newMeta("s1", "alice", at(time.Second))
	noErr(t, s.Commit(ctx, &store.Change{Meta: &s1, Spend: &store.SpendChange{
		SessionID: "s1", RootID: "s1", Owner: "alice", Spend: session.Spend{Tokens: 350}, At: at(0), Reserved: true,
	}}), "settle s1")
	adm, err = s.Reserve(ctx, reservation("s3", "s3", "alice", 100, 500))
	noErr(t, err, "reserve s3 again")
	admitted(t, "s3 beside 350 spent and s2's 200", adm, 350)
	adm, err = s.Reserve(ctx, reservation("s4", "s4", "alice", 700, 500))
	noErr(t, err, "reserve s4")
	refused(t, "s4, its input past what is spent", adm, store.ScopeOwner, false)

	// A tree's $0.01 and 8,000 tokens, output at $4 and input at $1 a
	// million tokens: 4,000 and 1,000 nanodollars a token.
	price := session.Price{InputPerMTok: 1, OutputPerMTok: 4, CachedInputPerMTok: 0.1}
	root := newMeta("t", "bob", at(0))
	noErr(t, s.Commit(ctx, &store.Change{Create: true, Meta: &root, TreeBudget: &session.Budget{Cost: ptr(session.DollarsToNanos(0.01)), Tokens: ptr(int64(8000))}}), "create t")
	child := newMeta("c", "bob", at(time.Second))
	child.ParentID, child.Depth = "t", 1
	mustCreate(t, s, child)
	priced := func(id string, input int64) store.Reservation {
		r := reservation(id, "t", "bob", input, 4096)
		r.Price = price
		return r
	}
	settle := func(id string, sp session.Spend) {
		t.Helper()
		m := mustGet(t, s, id)
		noErr(t, s.Commit(ctx, &store.Change{Meta: &m, Spend: &store.SpendChange{SessionID: id, RootID: "t", Owner: "bob", Spend: sp, At: at(0), Reserved: true}}), "settle %s", id)
	}
	adm, err = s.Reserve(ctx, priced("t", 2000))
	noErr(t, err, "reserve t")
	// $0.002 of input leaves $0.008: 2,000 output tokens.
	admitted(t, "t under $0.01", adm, 2000)
	adm, err = s.Reserve(ctx, priced("c", 1000))
	noErr(t, err, "reserve c")
	refused(t, "c beside t's $0.01 held", adm, store.ScopeSession, true)
	settle("t", session.Spend{Tokens: 2500, Cost: session.DollarsToNanos(0.003)})
	adm, err = s.Reserve(ctx, priced("c", 1000))
	noErr(t, err, "reserve c again")
	// $0.007 left, $0.001 of it for the input: 1,500 output tokens.
	admitted(t, "c under $0.007 left", adm, 1500)
	adm, err = s.Reserve(ctx, priced("t", 2900))
	noErr(t, err, "reserve t beside c")
	refused(t, "t beside c's $0.007 held", adm, store.ScopeSession, true)
	settle("c", session.Spend{Tokens: 1000, Cost: session.DollarsToNanos(0.001)})
	// 3,500 tokens and $0.004 spent: the tighter limit caps the call.
	adm, err = s.Reserve(ctx, priced("t", 4200))
	noErr(t, err, "reserve a long input")
	admitted(t, "t, tokens the tighter", adm, 300)
	settle("t", session.Spend{})
	adm, err = s.Reserve(ctx, priced("t", 1000))
	noErr(t, err, "reserve a short input")
	admitted(t, "t, cost the tighter", adm, 1250)
	settle("t", session.Spend{})

	// Under the owner's budget too, the least of the two caps the call,
	// and the tree is judged first.
	noErr(t, s.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "bob", Budget: session.Budget{Tokens: ptr(int64(3800))}, Period: session.PeriodDay}, at(0)), "set bob's budget")
	adm, err = s.Reserve(ctx, priced("c", 100))
	noErr(t, err, "reserve under both")
	admitted(t, "c, the owner's the tighter", adm, 200)
	adm, err = s.Reserve(ctx, priced("c", 400))
	noErr(t, err, "reserve past the owner's")
	refused(t, "c past the owner's budget", adm, store.ScopeOwner, false)
	adm, err = s.Reserve(ctx, priced("c", 5000))
	noErr(t, err, "reserve past both")
	refused(t, "c past both budgets", adm, store.ScopeSession, false)
}

// A budget set after calls were admitted under none (a server that has
// learned there is none anywhere) judges the next call: on a session
// being created with one, on a tree, on an owner.
func testBudgetSetAfterCallsUnderNone(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	mustCreate(t, s, newMeta("free", "alice", at(0)))
	for range 2 {
		adm, err := s.Reserve(ctx, reservation("free", "free", "alice", 20, 40))
		noErr(t, err, "reserve under no budget")
		admitted(t, "under no budget", adm, 0)
	}

	capped := newMeta("capped", "bob", at(0))
	noErr(t, s.Commit(ctx, &store.Change{Create: true, Meta: &capped, TreeBudget: &session.Budget{Tokens: ptr(int64(30))}}), "create with a budget")
	adm, err := s.Reserve(ctx, reservation("capped", "capped", "bob", 20, 40))
	noErr(t, err, "reserve under a new session's budget")
	admitted(t, "under a new session's budget of 30", adm, 10)

	noErr(t, s.SetTreeBudget(ctx, "free", session.Budget{Tokens: ptr(int64(25))}, at(0)), "set a tree budget")
	adm, err = s.Reserve(ctx, reservation("free", "free", "alice", 20, 40))
	noErr(t, err, "reserve under a tree budget set later")
	refused(t, "under a tree budget of 25 set later", adm, store.ScopeSession, false)

	mustCreate(t, s, newMeta("carol1", "carol", at(0)))
	noErr(t, s.SetOwnerBudget(ctx, session.OwnerBudget{Owner: "carol", Budget: session.Budget{Tokens: ptr(int64(15))}, Period: session.PeriodTotal}, at(0)), "set an owner budget")
	adm, err = s.Reserve(ctx, reservation("carol1", "carol1", "carol", 20, 40))
	noErr(t, err, "reserve under an owner budget set later")
	refused(t, "under an owner budget of 15 set later", adm, store.ScopeOwner, false)
}

// Every settled model call counts in the usage series: summed per UTC
// bucket, owner, agent and model, in the range asked, one owner's or
// every owner's; a batch of calls settles as single ones do.
func testUsageSeries(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	day := func(d int, h time.Duration) time.Time {
		return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC).Add(h)
	}
	a := newMeta("a", "alice", day(1, 0))
	b := newMeta("b", "bob", day(1, 0))
	b.Agent = "reviewer"
	mustCreate(t, s, a)
	mustCreate(t, s, b)
	call := func(m session.Meta, model string, prompt, completion int64, cost session.Nanos, when time.Time) *store.Change {
		return &store.Change{Meta: &m, Spend: &store.SpendChange{
			SessionID: m.ID, RootID: m.ID, Owner: m.Owner, Spend: session.Spend{Tokens: prompt + completion, Cost: cost}, At: when,
			Agent: m.Agent, Model: model, Prompt: prompt, Completion: completion,
		}}
	}
	// Alice: two calls of one model on the 1st (one a second before
	// midnight), one of another on the 1st, one on the 2nd. Bob: one on
	// the 2nd, committed in one batch with one of Alice's.
	noErr(t, s.Commit(ctx, call(a, "small", 100, 10, 1000, day(1, 9*time.Hour))), "alice 1")
	noErr(t, s.Commit(ctx, call(a, "small", 200, 20, 2000, day(2, -time.Second))), "alice 2")
	noErr(t, s.Commit(ctx, call(a, "large", 50, 5, 0, day(1, 10*time.Hour))), "alice 3")
	for i, err := range s.CommitAll(ctx, []*store.Change{
		call(a, "small", 1, 2, 3, day(2, 0)),
		call(b, "large", 7, 8, 9, day(2, 23*time.Hour)),
	}) {
		noErr(t, err, "batch %d", i)
	}

	series, err := s.UsageSeries(ctx, store.UsageQuery{Owner: "alice", Since: day(1, 0), Until: day(3, 0), Bucket: 24 * time.Hour})
	noErr(t, err, "alice's series")
	equal(t, "alice's days", series, []store.UsagePoint{
		{Start: day(1, 0), Owner: "alice", Agent: "coder", Model: "large", Calls: 1, Prompt: 50, Completion: 5},
		{Start: day(1, 0), Owner: "alice", Agent: "coder", Model: "small", Calls: 2, Prompt: 300, Completion: 30, Cost: 3000},
		{Start: day(2, 0), Owner: "alice", Agent: "coder", Model: "small", Calls: 1, Prompt: 1, Completion: 2, Cost: 3},
	})

	series, err = s.UsageSeries(ctx, store.UsageQuery{Since: day(2, 0), Until: day(3, 0), Bucket: time.Hour})
	noErr(t, err, "every owner's hours of the 2nd")
	equal(t, "every owner's hours", series, []store.UsagePoint{
		{Start: day(2, 0), Owner: "alice", Agent: "coder", Model: "small", Calls: 1, Prompt: 1, Completion: 2, Cost: 3},
		{Start: day(2, 23*time.Hour), Owner: "bob", Agent: "reviewer", Model: "large", Calls: 1, Prompt: 7, Completion: 8, Cost: 9},
	})

	series, err = s.UsageSeries(ctx, store.UsageQuery{Owner: "carol", Since: day(1, 0), Until: day(3, 0), Bucket: time.Hour})
	noErr(t, err, "carol's series")
	if len(series) != 0 {
		t.Fatalf("carol made no call, series %+v", series)
	}
}

// testSpendOfAGroup: a group commit of many calls, over several trees and
// owners, adds every call's spend to its rows and records every call, so
// however the store splits the rows into statements none is lost or
// counted twice.
func testSpendOfAGroup(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	when := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	const trees = 7
	var changes []*store.Change
	for i := range trees {
		owner := "alice"
		if i%3 == 2 {
			owner = "bob"
		}
		m := newMeta(fmt.Sprintf("t%d", i), owner, when)
		mustCreate(t, s, m)
		// Every tree makes i+1 calls in the group.
		for c := range i + 1 {
			changes = append(changes, &store.Change{Spend: &store.SpendChange{
				SessionID: m.ID, RootID: m.ID, Owner: owner, Spend: session.Spend{Tokens: 10, Cost: 100}, At: when.Add(time.Duration(c) * time.Second),
				Agent: m.Agent, Model: "m", Prompt: 7, Completion: 3,
			}})
		}
	}
	for i, err := range s.CommitAll(ctx, changes) {
		noErr(t, err, "call %d", i)
	}
	for i := range trees {
		_, spent, err := s.TreeBudget(ctx, fmt.Sprintf("t%d", i))
		noErr(t, err, "tree %d", i)
		equal(t, fmt.Sprintf("tree %d's spend", i), spent, session.Spend{Tokens: 10 * int64(i+1), Cost: 100 * session.Nanos(i+1)})
	}
	for owner, n := range map[string]int64{"alice": 1 + 2 + 4 + 5 + 7, "bob": 3 + 6} {
		day, total, err := s.OwnerSpend(ctx, owner, session.PeriodDay, when)
		noErr(t, err, "%s's spend", owner)
		want := session.Spend{Tokens: 10 * n, Cost: 100 * session.Nanos(n)}
		equal(t, owner+"'s day", day, want)
		equal(t, owner+"'s total", total, want)
		month, _, err := s.OwnerSpend(ctx, owner, session.PeriodMonth, when)
		noErr(t, err, "%s's month", owner)
		equal(t, owner+"'s month", month, want)
		series, err := s.UsageSeries(ctx, store.UsageQuery{Owner: owner, Since: when, Until: when.Add(time.Hour), Bucket: time.Hour})
		noErr(t, err, "%s's series", owner)
		equal(t, owner+"'s calls", series, []store.UsagePoint{
			{Start: when, Owner: owner, Agent: "coder", Model: "m", Calls: n, Prompt: 7 * n, Completion: 3 * n, Cost: 100 * session.Nanos(n)},
		})
	}
}
