package runner_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/agentfile"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	llmclient "github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/placement/leased"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/runner/modelfault"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// Issue 21, items 2 and 5: several runners on one PostgreSQL database,
// each a server of its own, with leases, fencing and failover.

// fleet is servers sharing one database, one model server and one bus.
type fleet struct {
	db  store.Store
	dsn string
	cat *catalog.Catalog
	bus *cluster.MemoryBus
	ttl time.Duration
}

func newFleet(t *testing.T, rules fakellm.Rules, ttl time.Duration) *fleet {
	t.Helper()
	ctx := context.Background()
	llm := fakellmtest.Start(t, rules)
	dsn := pgtest.DSN(t)
	db, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	// Closed once every server is (cleanups run last first).
	bus := cluster.NewMemoryBus()
	t.Cleanup(func() { _ = bus.Close() })
	cat := catalog.New(ctx, func() *agentfile.Set {
		return agentfile.Load(nil, []string{"testdata/bench/agents", "testdata/cluster/agents"})
	}, catalog.Options{HasKey: func(string) bool { return false }, OfflineModelURL: llm.URL()})
	return &fleet{db: db, dsn: dsn, cat: cat, bus: bus, ttl: ttl}
}

// server is one runner of a fleet.
type server struct {
	name   string
	run    *runner.Runner
	place  *leased.Placement
	hub    *events.Hub
	model  *modelfault.Faults
	store  *crashable
	closed bool
}

// crashable is the database as one server sees it; crashed makes the
// server give up no lease, as one that died would not.
type crashable struct {
	store.Store
	crashed atomic.Bool
}

func (c *crashable) ReleaseLease(ctx context.Context, id, holder string, epoch int64) error {
	if c.crashed.Load() {
		return nil
	}
	return c.Store.ReleaseLease(ctx, id, holder, epoch)
}

func (f *fleet) start(t *testing.T, name string, tune ...func(*runner.Options)) *server {
	t.Helper()
	ctx := context.Background()
	s := &server{name: name, model: &modelfault.Faults{}, store: &crashable{Store: f.db}}
	var err error
	if s.hub, err = runner.NewHub(ctx, s.store, events.Options{}); err != nil {
		t.Fatal(err)
	}
	opts := runner.Options{
		Store:   s.store,
		Hub:     s.hub,
		Catalog: f.cat,
		Models:  s.model.Factory(runner.LLMModels(func(string) (string, bool) { return "", false }, llmclient.Limits{}, nil)),
	}
	for _, fn := range tune {
		fn(&opts)
	}
	if opts.Placement == nil {
		opts.Placement = leased.New(leased.Options{Holder: name, LeaseTTL: f.ttl, Bus: f.bus, Store: opts.Store})
	}
	s.place = opts.Placement.(*leased.Placement)
	s.run = runner.New(opts)
	if err := s.run.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

func (s *server) close() {
	if !s.closed {
		s.closed = true
		s.run.Close()
		s.hub.Shutdown()
	}
}

// crash stops the server as a kill would: its leases stay until they
// expire.
func (s *server) crash() {
	s.store.crashed.Store(true)
	s.close()
}

func (s *server) create(t *testing.T, agent, text string) string {
	t.Helper()
	return createOn(t, s.run, agent, text)
}

func (s *server) wait(t *testing.T, id string) runner.View {
	t.Helper()
	return waitOn(t, s.run, id)
}

// eventually waits until cond holds, failing the test after 20s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after 20s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// steal gives the session's lease to another holder in the store, as a
// server would that found it expired.
func (f *fleet) steal(t *testing.T, id, thief string) {
	t.Helper()
	later := time.Now().Add(f.ttl + time.Minute)
	if _, err := f.db.AcquireLease(context.Background(), id, thief, later, f.ttl); err != nil {
		t.Fatal(err)
	}
}

func (f *fleet) holder(t *testing.T, id string) string {
	t.Helper()
	l, err := f.db.GetLease(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l.Holder
}

func (f *fleet) events(t *testing.T, id string) int {
	t.Helper()
	evs, err := f.db.EventsAfter(context.Background(), store.EventFilter{SessionID: id}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(evs)
}

// userTurns counts the user turns of a history with the text.
func userTurns(turns []session.Turn, text string) int {
	n := 0
	for _, t := range turns {
		if t.User != nil && t.User.Text == text {
			n++
		}
	}
	return n
}

// A session one server loaded is not loaded by another, which reads it
// from the store (see remote_test.go for the requests it forwards); once
// the first lets it go (Close), the other loads it.
func TestASessionLoadedByOneServerIsNotLoadedByAnother(t *testing.T) {
	t.Parallel()
	f := newFleet(t, answer, time.Minute)
	a, b := f.start(t, "a"), f.start(t, "b")
	id := a.create(t, "bench", "hello")
	a.wait(t, id)
	if v, err := b.run.GetSession(context.Background(), "me", id, false, 0); err != nil || len(v.Turns) != 2 {
		t.Fatalf("read on b: %v", err)
	}
	if h := f.holder(t, id); h != "a" || b.run.LiveSessions() != 0 {
		t.Fatalf("after a read on b: held by %s, %d sessions loaded on b", h, b.run.LiveSessions())
	}
	a.close()
	if v := b.wait(t, id); v.Meta.Status != session.StatusReady || len(v.Turns) != 2 {
		t.Fatalf("on b after a closed: %s with %d turns", v.Meta.Status, len(v.Turns))
	}
	// b is told a let the session go (and remembers who held it for a
	// moment at most): its next reads take the session up.
	eventually(t, "b holds the session", func() bool {
		b.wait(t, id)
		l, err := f.db.GetLease(context.Background(), id)
		return err == nil && l.Holder == "b"
	})
}

// A server whose lease was taken over finds out at its next write: the
// write is refused, the run stops there, nothing more of it is written,
// and the session is refused to it as held by the new holder.
func TestAServerWhoseLeaseWasTakenWritesNothingMore(t *testing.T) {
	t.Parallel()
	f := newFleet(t, answer, time.Minute)
	a := f.start(t, "a")
	hold := a.model.HoldAfter(1)
	id := a.create(t, "bench", "hello")
	<-hold.Held()
	f.steal(t, id, "thief")
	before := f.events(t, id)
	hold.Release()
	eventually(t, "the run stopped", func() bool { return a.run.ActiveRuns() == 0 })
	eventually(t, "a let the session go", func() bool { return a.run.LiveSessions() == 0 })
	// Read on a, the session is the store's, as the thief left it.
	if v, err := a.run.GetSession(context.Background(), "me", id, false, 0); err != nil || len(v.Turns) != 1 {
		t.Fatalf("read on a: %v", err)
	}
	m, err := f.db.GetMeta(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != session.StatusRunning || m.TurnCount != 1 {
		t.Errorf("stored: %s with %d turns; want running with the user turn only", m.Status, m.TurnCount)
	}
	if n := f.events(t, id); n != before {
		t.Errorf("%d events stored after the lease was taken", n-before)
	}
	if n := len(a.model.Requests()); n != 1 {
		t.Errorf("model calls = %d, want 1", n)
	}
	if s := a.place.Stats(); s.Lost != 1 {
		t.Errorf("stats = %+v, want one lost lease", s)
	}
}

// A server finds a lease lost by renewing it, and stops the run at once,
// a model call that would never end included, writing nothing.
func TestALeaseFoundLostByItsRenewalStopsTheRunAtOnce(t *testing.T) {
	t.Parallel()
	f := newFleet(t, answer, 300*time.Millisecond)
	a := f.start(t, "a")
	a.model.Hang(modelfault.Always)
	id := a.create(t, "bench", "hello")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := a.model.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	before := f.events(t, id)
	f.steal(t, id, "thief")
	eventually(t, "the run stopped", func() bool { return a.run.ActiveRuns() == 0 })
	if s := a.place.Stats(); s.Lost != 1 {
		t.Errorf("stats = %+v, want one lost lease", s)
	}
	if n := f.events(t, id); n != before {
		t.Errorf("%d events stored after the lease was taken", n-before)
	}
	if m, err := f.db.GetMeta(ctx, id); err != nil || m.Status != session.StatusRunning || m.TurnCount != 1 {
		t.Errorf("stored: %+v, %v", m, err)
	}
}

// A server that dies mid-run keeps its leases until they expire; then
// another claims the session and finishes the run, with the user turn
// stored once.
func TestAnotherServerFinishesTheRunOfOneThatDied(t *testing.T) {
	t.Parallel()
	f := newFleet(t, answer, 300*time.Millisecond)
	a, b := f.start(t, "a"), f.start(t, "b")
	hold := a.model.HoldAfter(1)
	id := a.create(t, "bench", "hello")
	<-hold.Held()
	a.crash()
	hold.Release()
	eventually(t, "b claimed the session", func() bool { return b.place.Stats().Claims == 1 })
	v := b.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 2 || v.Turns[1].LLM.Text != "done" {
		t.Fatalf("on b: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if n := userTurns(v.Turns, "hello"); n != 1 {
		t.Errorf("the user turn is stored %d times", n)
	}
	if s := b.place.Stats(); s.Failovers != 1 {
		t.Errorf("b's stats = %+v, want one failover", s)
	}
}

// A server that died and starts again under its id takes its runs up at
// once: the leases under its name are its dead predecessor's, which
// nobody renews, so it neither waits for them to expire nor takes them
// as live ones of its own.
func TestAServerStartedAgainUnderItsIDTakesItsRunsUpAtOnce(t *testing.T) {
	t.Parallel()
	// A lease outlives the test: only the restart can move the run.
	f := newFleet(t, answer, time.Hour)
	a := f.start(t, "a")
	hold := a.model.HoldAfter(1)
	id := a.create(t, "bench", "hello")
	<-hold.Held()
	a.crash()
	hold.Release()
	before, err := f.db.GetLease(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}

	again := f.start(t, "a")
	if s := again.place.Stats(); s.Claims != 1 {
		t.Fatalf("stats after the start = %+v, want the session claimed", s)
	}
	v := again.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 2 || v.Turns[1].LLM.Text != "done" {
		t.Fatalf("after the restart: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if n := userTurns(v.Turns, "hello"); n != 1 {
		t.Errorf("the user turn is stored %d times", n)
	}
	if l, err := f.db.GetLease(context.Background(), id); err != nil || l.Holder != "a" || l.Epoch <= before.Epoch {
		t.Errorf("lease after the restart: %+v, %v; want a's, at an epoch after %d", l, err, before.Epoch)
	}
}

// toolThenDone answers a message with a call of a tool, then the tool's
// result with "done": a run of two steps.
var toolThenDone = fakellm.Rules{Rules: []fakellm.Rule{
	{Match: fakellm.Match{LastIsToolResult: ptr(false)}, Reply: fakellm.Reply{
		Text: "first a tool", ToolCalls: []fakellm.ToolCall{{Name: "bash_noop", Arguments: json.RawMessage(`{}`)}},
	}},
	{Reply: fakellm.Reply{Text: "done"}},
}}

// A server drained at a step boundary gives its sessions up at once:
// another takes the run up long before the lease would expire.
func TestADrainedServerHandsItsRunsOverAtOnce(t *testing.T) {
	t.Parallel()
	// A lease outlives the test: only the hand-over can move the run.
	f := newFleet(t, toolThenDone, time.Hour)
	// One run at most on a: a session created while its run goes is
	// refused, for want of a run or, once it drains, for the shutdown.
	a := f.start(t, "a", func(o *runner.Options) { o.MaxRuns = 1 })
	b := f.start(t, "b")
	hold := a.model.HoldAfter(1)
	id := a.create(t, "bench", "hello")
	<-hold.Held()
	drained := a.drain()
	eventually(t, "a drains", func() bool {
		_, err := a.run.CreateSession(context.Background(), "me", runner.CreateRequest{Agent: "bench", Message: &runner.Message{Text: "x"}})
		if err == nil {
			t.Fatal("a session was created beside the run")
		}
		return errs.CodeOf(err) == "shutting_down"
	})
	hold.Release()
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	eventually(t, "b claimed the session", func() bool { return b.place.Stats().Claims == 1 })
	a.close()
	v := b.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[3].LLM.Text != "done" {
		t.Fatalf("on b: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if n := len(a.model.Requests()); n != 1 {
		t.Errorf("a's model calls = %d, want 1", n)
	}
	if s := b.place.Stats(); s.Failovers != 0 {
		t.Errorf("b's stats = %+v: a drained session is no failover", s)
	}
}

// Issue 33, item 2: a server that drains hands its idle sessions over at
// once, not when its slowest step ends. With a step held on one of a's
// sessions for as long as the test likes, a post through b to another
// session of a, idle, is answered within 5 s (in practice at once) and
// runs on b; the busy session is handed over once its step ends.
func TestADrainingServerHandsItsIdleSessionsOverAtOnce(t *testing.T) {
	t.Parallel()
	// A lease outlives the test: only the hand-over can move a session.
	f := newFleet(t, toolThenDone, time.Hour)
	// One run at most on a: a create is refused, for want of a run or,
	// once a drains, for the shutdown.
	a := f.start(t, "a", func(o *runner.Options) { o.MaxRuns = 1 })
	b := f.start(t, "b")
	idle := a.create(t, "bench", "hello")
	a.wait(t, idle)
	hold := a.model.HoldAfter(1)
	defer hold.Release()
	busy := a.create(t, "bench", "slow")
	<-hold.Held()
	drained := a.drain()
	eventually(t, "a drains", func() bool {
		_, err := a.run.CreateSession(context.Background(), "me", runner.CreateRequest{Agent: "bench", Message: &runner.Message{Text: "x"}})
		return errs.CodeOf(err) == "shutting_down"
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := b.run.PostMessage(ctx, "me", idle, runner.Message{Text: "while a drains"}, runner.RunOptions{}, nil); err != nil {
		t.Fatalf("post through b to a's idle session while a step of a is in flight: %v", err)
	}
	if v := b.wait(t, idle); v.Meta.Status != session.StatusReady || userTurns(v.Turns, "while a drains") != 1 {
		t.Fatalf("on b: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if h := f.holder(t, idle); h != "b" {
		t.Errorf("the idle session is held by %s, want b", h)
	}
	select {
	case err := <-drained:
		t.Fatalf("a's drain ended (%v) with its step held", err)
	default:
	}

	// A client on a waits for the busy session's run: it stops at its
	// step boundary, and the session is read once handed over.
	read := make(chan error, 1)
	go func() {
		_, err := a.run.GetSession(context.Background(), "me", busy, true, 20*time.Second)
		read <- err
	}()
	hold.Release()
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if err := <-read; err != nil {
		t.Errorf("read on a of the session its drain stopped: %v", err)
	}
	eventually(t, "b took the busy session up", func() bool { return b.place.Stats().Claims == 1 })
	if v := b.wait(t, busy); v.Meta.Status != session.StatusReady || lastText(v) != "done" {
		t.Fatalf("busy on b: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if n := len(a.model.Requests()); n != 3 {
		t.Errorf("a's model calls = %d, want 3 (the idle session's two, the busy one's first)", n)
	}
}

// A helper's parent and child on a server that drains in the middle of
// the child's step, sessions handed over one by one as their runs stop,
// end up with another server that finishes both: the parent gets the
// child's answer, once, and nothing is asked of a model twice.
func TestADrainingServerHandsAHelpersParentAndChildOver(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "helper of the cluster tests", LastIsToolResult: ptr(false)}, Reply: fakellm.Reply{
			InitialDelay: "2s",
			ToolCalls:    []fakellm.ToolCall{{Name: "os_list_sub_sessions", Arguments: json.RawMessage(`{}`)}},
		}},
		{Match: fakellm.Match{SystemContains: "helper of the cluster tests"}, Reply: fakellm.Reply{Text: "the helper's answer"}},
		{Match: fakellm.Match{SystemContains: "boss of the cluster tests", LastIsToolResult: ptr(true)}, Reply: fakellm.Reply{Text: "boss got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: "boss of the cluster tests"}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt": "think"}`)},
		}}},
	}}
	// A lease outlives the test: only the hand-over can move a session.
	f := newFleet(t, rules, time.Hour)
	a, b := f.start(t, "a"), f.start(t, "b")
	onA, _ := a.hub.Subscribe(events.AllScope(), nil)
	defer onA.Close()
	parent := a.create(t, "boss", "delegate")
	child := childOf(t, onA, parent, "run.started", "the child's run starts")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.run.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	a.close()
	eventually(t, "the parent's run ends", func() bool {
		m, err := f.db.GetMeta(ctx, parent)
		return err == nil && m.Status != session.StatusRunning
	})
	v := b.wait(t, parent)
	if n := len(v.Turns); n != 4 || lastText(v) != "boss got: the helper's answer" {
		t.Fatalf("parent: %s (%s), %d turns, last %q", v.Meta.Status, v.Meta.StatusReason, n, lastText(v))
	}
	kid := b.wait(t, child)
	if len(kid.Turns) != 4 || userTurns(kid.Turns, "think") != 1 {
		t.Errorf("child: %d turns, %d with its prompt", len(kid.Turns), userTurns(kid.Turns, "think"))
	}
	if kids, err := f.db.Children(ctx, parent); err != nil || len(kids) != 1 {
		t.Errorf("the parent's children: %+v, %v; want one", kids, err)
	}
	// Two steps each, none asked twice: a asked the boss's first step
	// and the child's (unless the drain came late), b the rest.
	if na, nb := len(a.model.Requests()), len(b.model.Requests()); na+nb != 4 {
		t.Errorf("model calls: %d on a, %d on b; want 4 in all", na, nb)
	}
}

// Issue 33, item 3: a client that saw an event on one server and
// reconnects to another whose hub has not published it yet gets every
// logged event after it, replayed from the shared log, not a snapshot.
// b's hub follows nothing here: it stays where it started, behind a log
// that a's run fills.
func TestReconnectingToAServerBehindTheLogReplaysWhatItMissed(t *testing.T) {
	t.Parallel()
	f := newFleet(t, toolThenDone, time.Minute)
	a, b := f.start(t, "a"), f.start(t, "b")
	b.hub.SetRelayed()
	seen, _ := a.hub.Subscribe(events.AllScope(), nil)
	defer seen.Close()
	id := a.create(t, "bench", "hello")
	a.wait(t, id)
	var logged []*agentsv1.Event
	eventually(t, "a published every event of the run", func() bool {
		for {
			select {
			case ev := <-seen.C():
				if ev.GetDeltaSeq() == 0 {
					logged = append(logged, ev)
				}
				continue
			default:
			}
			return len(logged) == f.events(t, id)
		}
	})
	if len(logged) < 3 || b.hub.Seq() >= logged[1].Seq {
		t.Fatalf("%d events, b's hub at %d: not the case under test", len(logged), b.hub.Seq())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := b.hub.SubscribeAt(ctx, events.SessionScope(id), &events.Position{Seq: logged[0].Seq})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Mode() != events.ModeReplay {
		t.Fatalf("after %d on b, its hub at %d: mode %v, want replay", logged[0].Seq, b.hub.Seq(), sub.Mode())
	}
	for _, want := range logged[1:] {
		select {
		case got := <-sub.C():
			if got.GetSeq() != want.GetSeq() || got.GetKind() != want.GetKind() {
				t.Fatalf("replayed %d %s, want %d %s", got.GetSeq(), got.GetKind(), want.GetSeq(), want.GetKind())
			}
		case <-ctx.Done():
			t.Fatalf("replay stopped before %d %s", want.GetSeq(), want.GetKind())
		}
	}
	select {
	case ev := <-sub.C():
		t.Fatalf("replayed %d %s beyond the log", ev.GetSeq(), ev.GetKind())
	default:
	}
}

// A helper's parent and child whose server died are claimed together by
// one of the servers left, and the parent's call gets its child's
// answer.
func TestAHelpersParentAndChildAreRecoveredTogether(t *testing.T) {
	t.Parallel()
	rules := fakellm.Rules{Rules: []fakellm.Rule{
		{Match: fakellm.Match{SystemContains: "helper of the cluster tests"}, Times: 1, Reply: fakellm.Reply{Text: strings.Repeat("slow ", 200), ChunkSize: 2, ChunkDelay: "50ms"}},
		{Match: fakellm.Match{SystemContains: "helper of the cluster tests"}, Reply: fakellm.Reply{Text: "the helper's answer"}},
		{Match: fakellm.Match{SystemContains: "boss of the cluster tests", LastIsToolResult: ptr(true)}, Reply: fakellm.Reply{Text: "boss got: {{last_tool_result}}"}},
		{Match: fakellm.Match{SystemContains: "boss of the cluster tests"}, Reply: fakellm.Reply{ToolCalls: []fakellm.ToolCall{
			{Name: "prompt_agent_helper", Arguments: json.RawMessage(`{"prompt": "think"}`)},
		}}},
	}}
	// The others leave the child to its parent's holder for a few looks,
	// every half of a lease's life: long enough, on a loaded machine,
	// for the holder to recover the parent and then claim the child.
	f := newFleet(t, rules, time.Second)
	a := f.start(t, "a")
	onA, _ := a.hub.Subscribe(events.AllScope(), nil)
	defer onA.Close()
	parent := a.create(t, "boss", "delegate")
	ctx := context.Background()
	// Until the slow answer streams, the model may not have had the
	// request (it is sent, not received): the crash would leave the slow
	// answer to the server that recovers the child, longer than a wait.
	child := childOf(t, onA, parent, "text.delta", "the helper's slow answer streams")
	if kids, err := f.db.Children(ctx, parent); err != nil || len(kids) != 1 || kids[0].ID != child {
		t.Fatalf("the parent's children: %+v, %v; want %s", kids, err, child)
	}
	a.crash()
	b, c := f.start(t, "b"), f.start(t, "c")
	eventually(t, "the parent's run ends", func() bool {
		m, err := f.db.GetMeta(ctx, parent)
		return err == nil && m.Status != session.StatusRunning
	})
	_, turns, err := f.db.LoadSession(ctx, parent)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(turns); n != 4 || turns[3].LLM.Text != "boss got: the helper's answer" {
		t.Fatalf("parent: %d turns, last %+v", n, turns[n-1])
	}
	_, kid, err := f.db.LoadSession(ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	if len(kid) != 2 || userTurns(kid, "think") != 1 {
		t.Errorf("child: %d turns, %d with its prompt", len(kid), userTurns(kid, "think"))
	}
	if hp, hc := f.holder(t, parent), f.holder(t, child); hp != hc {
		t.Errorf("the parent runs on %s, its child on %s", hp, hc)
	}
	if n := b.place.Stats().Claims + c.place.Stats().Claims; n < 1 {
		t.Errorf("claims = %d", n)
	}
}

// A watch outlives the move of its target to another server, and the
// mail that server stores for a watcher held here wakes the watcher: the
// target's watches are read when its lease is taken, and the holder of
// the watcher hears of its mail.
func TestWatchMailFromAnotherServerWakesTheWatcher(t *testing.T) {
	t.Parallel()
	f := newFleet(t, answer, time.Minute)
	c := f.start(t, "c")
	ctx := context.Background()
	watcher := c.create(t, "bench", "watch")
	target := c.create(t, "bench", "work")
	c.wait(t, watcher)
	c.wait(t, target)
	if _, err := c.run.WatchSession(ctx, "me", watcher, target, time.Hour); err != nil {
		t.Fatal(err)
	}
	// c gives both up as it closes; a loads the watcher, b the target.
	c.close()
	a, b := f.start(t, "a"), f.start(t, "b")
	if v, err := a.run.GetSession(ctx, "me", watcher, false, 0); err != nil || len(v.Turns) != 2 {
		t.Fatalf("watcher on a: %v", err)
	}
	if _, _, err := b.run.PostMessage(ctx, "me", target, runner.Message{Text: "more"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	b.wait(t, target)
	eventually(t, "the watcher ran for its mail", func() bool {
		m, err := f.db.GetMeta(ctx, watcher)
		return err == nil && m.TurnCount == 4 && m.Status == session.StatusReady
	})
	if h := f.holder(t, watcher); h != "a" {
		t.Errorf("the watcher runs on %s, want a", h)
	}
	v := a.wait(t, watcher)
	if mail := v.Turns[2].User.Mail; len(mail) != 1 || mail[0].Sender.Name != "watch" || !strings.Contains(mail[0].Body.Text, target) {
		t.Errorf("the watcher's third turn = %+v, want the watch's mail", v.Turns[2].User)
	}
}

// Stats say how many leases the server holds, how long they last
// and when the database last confirmed them, for /readyz and /metrics.
func TestLeaseStatsCountTheLeasesHeldAndTheirRenewal(t *testing.T) {
	t.Parallel()
	f := newFleet(t, answer, 300*time.Millisecond)
	a := f.start(t, "a")
	if s := a.place.Stats(); s.Held != 0 || s.TTL != 300*time.Millisecond {
		t.Fatalf("stats of a new server = %+v, want no lease held, a ttl of 300ms", s)
	}
	id := a.create(t, "bench", "hello")
	a.wait(t, id)
	if s := a.place.Stats(); s.Held != 1 {
		t.Fatalf("stats with a session loaded = %+v, want one lease held", s)
	}
	since := time.Now()
	eventually(t, "a renewal", func() bool { return a.place.Stats().RenewedAt.After(since) })
}

// childOf waits on sub for the first event of kind from a session other
// than parent (its helper's child) and returns that session's id.
func childOf(t *testing.T, sub *events.Subscription, parent, kind, what string) string {
	t.Helper()
	var child string
	eventually(t, what, func() bool {
		for {
			select {
			case ev := <-sub.C():
				if ev.GetKind() == kind && ev.GetSessionId() != parent {
					child = ev.GetSessionId()
					return true
				}
			default:
				return false
			}
		}
	})
	return child
}

// drain starts the server's drain, bounded by 20 s; its result comes on
// the channel.
func (s *server) drain() <-chan error {
	drained := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		drained <- s.run.Drain(ctx)
	}()
	return drained
}
