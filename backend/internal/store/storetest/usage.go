package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// modelCall is one settled model call as a usage test makes it.
type modelCall struct {
	meta               session.Meta
	model              string
	prompt, completion int64
	cost               session.Nanos
	at                 time.Time
}

func (c modelCall) change() *store.Change {
	m := c.meta
	return &store.Change{Spend: &store.SpendChange{
		SessionID: m.ID, RootID: m.ID, Owner: m.Owner, At: c.at,
		Spend: session.Spend{Tokens: c.prompt + c.completion, Cost: c.cost},
		Agent: m.Agent, Model: c.model, Prompt: c.prompt, Completion: c.completion,
	}}
}

// commitCalls settles calls, in batches of CommitAll.
func commitCalls(t *testing.T, s store.Store, calls []modelCall) {
	t.Helper()
	ctx := context.Background()
	for len(calls) > 0 {
		batch := calls[:min(len(calls), 500)]
		calls = calls[len(batch):]
		changes := make([]*store.Change, len(batch))
		for i, c := range batch {
			changes[i] = c.change()
		}
		for i, err := range s.CommitAll(ctx, changes) {
			noErr(t, err, "call %d", i)
		}
	}
}

// wantSeries is the usage series of calls as q asks for it, summed here.
func wantSeries(calls []modelCall, q store.UsageQuery) []store.UsagePoint {
	type key struct {
		start               int64
		owner, agent, model string
	}
	sums := map[key]*store.UsagePoint{}
	for _, c := range calls {
		if c.at.Before(q.Since) || !c.at.Before(q.Until) || (q.Owner != "" && q.Owner != c.meta.Owner) {
			continue
		}
		start := c.at.Truncate(q.Bucket)
		k := key{start.UnixNano(), c.meta.Owner, c.meta.Agent, c.model}
		p := sums[k]
		if p == nil {
			p = &store.UsagePoint{Start: start, Owner: c.meta.Owner, Agent: c.meta.Agent, Model: c.model}
			sums[k] = p
		}
		p.Calls++
		p.Prompt += c.prompt
		p.Completion += c.completion
		p.Cost += c.cost
	}
	out := []store.UsagePoint{}
	for _, p := range sums {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b store.UsagePoint) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Owner, b.Owner), cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.Model, b.Model))
	})
	return out
}

// checkSeries compares every series of [since, until) the store answers
// (per hour and per day, every owner's and each of owners') with the sums
// of calls.
func checkSeries(t *testing.T, s store.Store, what string, calls []modelCall, since, until time.Time, owners ...string) {
	t.Helper()
	for _, bucket := range []time.Duration{time.Hour, 24 * time.Hour} {
		for _, owner := range append([]string{""}, owners...) {
			q := store.UsageQuery{Owner: owner, Since: since, Until: until, Bucket: bucket}
			got, err := s.UsageSeries(context.Background(), q)
			noErr(t, err, "%s: series of %+v", what, q)
			if got == nil {
				got = []store.UsagePoint{}
			}
			equal(t, fmt.Sprintf("%s: owner %q per %v", what, owner, bucket), got, wantSeries(calls, q))
		}
	}
}

// testUsageFold: folding model calls into hours changes no usage series,
// per hour or per day, one owner's or every owner's, whether the fold
// stops at an hour's start or in the middle of one, with calls on both
// sides of a day's boundary; a call made late in an hour folded already
// adds to it; folding again folds nothing.
func testUsageFold(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ctx := context.Background()
	day := func(d int, h, m time.Duration) time.Time {
		return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC).Add(h*time.Hour + m*time.Minute)
	}
	alice := newMeta("a", "alice", day(1, 0, 0))
	bob := newMeta("b", "bob", day(1, 0, 0))
	bob.Agent = "reviewer"
	mustCreate(t, s, alice)
	mustCreate(t, s, bob)
	calls := []modelCall{
		{alice, "small", 100, 10, 1000, day(1, 23, 10)},
		{alice, "small", 200, 20, 2000, day(1, 23, 50)},
		{bob, "large", 7, 8, 9, day(1, 23, 30)},
		{alice, "small", 1, 2, 3, day(2, 0, 0)},
		{alice, "small", 3, 4, 5, day(2, 0, 5)},
		{alice, "small", 10, 1, 100, day(2, 10, 10)},
		{alice, "large", 50, 5, 0, day(2, 10, 15)},
		{alice, "small", 20, 2, 200, day(2, 10, 20)},
		{bob, "large", 30, 3, 300, day(2, 10, 25)},
		{bob, "large", 40, 4, 400, day(2, 10, 35)},
		{alice, "small", 60, 6, 600, day(2, 10, 40)},
		{alice, "large", 70, 7, 700, day(2, 10, 45)},
		{alice, "small", 80, 8, 800, day(2, 10, 50)},
		{bob, "large", 90, 9, 900, day(2, 11, 0)},
		{alice, "small", 5, 5, 5, day(3, 5, 0)},
	}
	commitCalls(t, s, calls)
	since, until := day(1, 0, 0), day(4, 0, 0)
	checkSeries(t, s, "before folding", calls, since, until, "alice", "bob", "carol")
	checkSeries(t, s, "before folding, the hour folded in part", calls, day(2, 10, 0), day(2, 11, 0), "alice", "bob")

	folded := func(before time.Time, want int) {
		t.Helper()
		n, err := s.FoldModelCalls(ctx, before)
		noErr(t, err, "fold before %v", before)
		equal(t, fmt.Sprintf("calls folded before %v", before), n, want)
	}
	// In the middle of an hour: the calls of 10:00 to 10:30 are folded,
	// those after are kept, and the hour reads both.
	folded(day(2, 10, 30), 9)
	checkSeries(t, s, "folded to 10:30", calls, since, until, "alice", "bob", "carol")
	checkSeries(t, s, "folded to 10:30, the hour folded in part", calls, day(2, 10, 0), day(2, 11, 0), "alice", "bob")
	folded(day(2, 10, 30), 0)
	checkSeries(t, s, "folded to 10:30 twice", calls, since, until, "alice", "bob")

	// Calls made late, in hours folded already, in full and in part.
	late := []modelCall{
		{alice, "small", 1000, 100, 10000, day(2, 10, 5)},
		{bob, "large", 2000, 200, 20000, day(1, 23, 55)},
		{bob, "new", 1, 1, 1, day(2, 10, 29)},
	}
	commitCalls(t, s, late)
	calls = append(calls, late...)
	checkSeries(t, s, "late calls", calls, since, until, "alice", "bob")

	// At an hour's start: the rest of 10:00 joins its folded part.
	folded(day(2, 11, 0), 3+4)
	checkSeries(t, s, "folded to 11:00", calls, since, until, "alice", "bob", "carol")
	checkSeries(t, s, "folded to 11:00, one hour", calls, day(2, 10, 0), day(2, 11, 0), "alice", "bob")
	folded(until, 2)
	checkSeries(t, s, "all folded", calls, since, until, "alice", "bob", "carol")
	checkSeries(t, s, "all folded, the 2nd", calls, day(2, 0, 0), day(3, 0, 0), "alice", "bob")
}

// testUsageFoldRace: folds running at once, while calls are made, fold
// each call once: the series reads as the calls made, and the folds
// together fold as many calls as were made before the last one's time.
func testUsageFoldRace(t *testing.T, fresh func(t *testing.T) Opener) {
	s := open(t, fresh(t))
	ConcurrentFolds(t, s, s, s, s)
}

// ConcurrentFolds makes calls through the first store, then folds them
// through every store at once, several times each, to several times,
// while more calls are made: every call must be folded exactly once.
// Given stores of one database, as servers sharing it, it tests that they
// may fold at once; given one store several times, its connections.
func ConcurrentFolds(t *testing.T, stores ...store.Store) {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var metas []session.Meta
	for i := range 3 {
		m := newMeta(fmt.Sprintf("s%d", i), []string{"alice", "bob"}[i%2], start)
		m.Agent = []string{"coder", "reviewer", "coder"}[i]
		mustCreate(t, stores[0], m)
		metas = append(metas, m)
	}
	// More than a transaction of folding takes at once, every 17 s over
	// two days.
	const made = 2 * 5000
	mkcall := func(i int) modelCall {
		return modelCall{metas[i%len(metas)], []string{"small", "large"}[i/3%2], int64(i), int64(i % 7), session.Nanos(i % 11), start.Add(time.Duration(i) * 17 * time.Second)}
	}
	var calls []modelCall
	for i := range made {
		calls = append(calls, mkcall(i))
	}
	commitCalls(t, stores[0], calls)
	end := start.Add(made * 17 * time.Second)

	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		folded int
	)
	begin := make(chan struct{})
	for i, s := range stores {
		wg.Go(func() {
			<-begin
			// Every store folds to each sixth of the range in turn, to
			// the end, so that they fold the same calls at once.
			for k := range 6 {
				cut := start.Add(time.Duration(k+1) * end.Sub(start) / 6)
				n, err := s.FoldModelCalls(ctx, cut)
				if err != nil {
					t.Errorf("store %d: fold before %v: %v", i, cut, err)
					return
				}
				mu.Lock()
				folded += n
				mu.Unlock()
			}
		})
	}
	// Meanwhile, calls made later than any fold's time.
	var later []modelCall
	for i := range 50 {
		later = append(later, mkcall(made+i))
	}
	wg.Go(func() {
		<-begin
		commitCalls(t, stores[0], later)
	})
	close(begin)
	wg.Wait()
	if t.Failed() {
		return
	}
	equal(t, "calls folded", folded, made)
	calls = append(calls, later...)
	for i, s := range stores {
		checkSeries(t, s, fmt.Sprintf("store %d after the folds", i), calls, start, start.Add(3*24*time.Hour), "alice", "bob")
	}
}
