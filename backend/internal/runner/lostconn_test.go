package runner_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/eventually"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
)

// Issue 21: PostgreSQL ends the store's connections (a restart of the
// database, an operator, a failover) while a run commits its answer. The
// commit in flight fails as the database being away for now and is tried
// again on a new connection: the run loses nothing, writes nothing twice,
// and the session goes on taking messages.
func TestALostConnectionMidCommitLosesNothingAndDoesNotWedgeTheRun(t *testing.T) {
	t.Parallel()
	k := newKernel(t, onPostgres, answer)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, k.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())

	// What an undisturbed run logs, to hold the disturbed one to.
	reference := k.create(t, "hello")
	k.wait(t, reference)
	want := logStory(t, k.db, reference)

	hold := k.model.HoldAfter(1)
	id := k.create(t, "hello")
	<-hold.Held()
	// The answer's commit stops inside its transaction, its rows written,
	// waiting at its append of events.
	release := pgtest.HoldEventAppends(t, admin)
	hold.Release()
	pgtest.AppendWaiter(t, admin)
	if n := terminateStore(t, admin); n == 0 {
		t.Fatal("no connection of the store to end")
	}
	release()

	v := k.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 2 || v.Turns[1].LLM.Text != "done" {
		t.Fatalf("after the lost connection: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	// The answer and the run's end may have been written apart, and the
	// end, refused on a connection the pool had not yet found dead, kept
	// and written again a moment later: the session says ready once its
	// run is over, and the store catches up.
	storedReady(t, k.db, id, 2)
	m, turns, err := k.db.LoadSession(ctx, id)
	if err != nil || len(turns) != 2 || turns[1].LLM.Text != "done" {
		t.Fatalf("stored: %s, %d turns, %v; want the question and its answer", m.Status, len(turns), err)
	}
	if got := logStory(t, k.db, id); !slices.Equal(got, want) {
		t.Errorf("the event log has %q, want %q as for an undisturbed run", got, want)
	}
	if n := len(k.model.Requests()); n != 2 {
		t.Errorf("model calls = %d, want 2 (one per session): the answer was asked for again", n)
	}

	// Then the pool's idle connections are ended too. The pool finds
	// them dead before it uses them: the next message is taken at once,
	// not refused for a connection that a new one replaces.
	terminateStore(t, admin)
	if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "again"}, runner.RunOptions{}, nil); err != nil {
		t.Fatalf("post after the connections were ended: %v", err)
	}
	if v := k.wait(t, id); v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[3].LLM.Text != "done" {
		t.Fatalf("after the next message: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	storedReady(t, k.db, id, 4)
}

// storedReady waits until the store has the session ready with turns
// turns: a run's end the store refused for now is written again shortly
// after, and the store says so within seconds.
func storedReady(t *testing.T, db store.Store, id string, turns int) {
	t.Helper()
	var m session.Meta
	var err error
	if eventually.Holds(10*time.Second, func() bool {
		m, err = db.GetMeta(context.Background(), id)
		return err == nil && m.Status == session.StatusReady && m.TurnCount == turns
	}) {
		return
	}
	t.Fatalf("stored: %s with %d turns, %v; want ready with %d within 10s", m.Status, m.TurnCount, err, turns)
}

// terminateStore ends every connection to admin's database but admin's
// own, waits until their backends are gone, and returns how many it
// ended.
func terminateStore(t *testing.T, admin *pgx.Conn) int {
	t.Helper()
	var n int
	err := admin.QueryRow(context.Background(), `SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) AS ended
		FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t WHERE ended`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// logStory lists the events the log holds for a session, oldest first,
// as their kinds and, for an update, the turn it brought. An update of
// the metadata alone is left out: a commit tried again may write an
// answer and the run's end apart, where one commit wrote both.
func logStory(t *testing.T, db store.Store, id string) []string {
	t.Helper()
	// A commit whose reply was lost did not number its events: a
	// server's follower of the log does it (cluster.Sequencer), which
	// this kernel has none of.
	eventually.Within(t, 10*time.Second, "the events have their positions", func() bool {
		pending, err := db.NumberEvents(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return !pending
	})
	evs, err := db.EventsAfter(context.Background(), store.EventFilter{SessionID: id}, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var story []string
	for _, ev := range evs {
		if ev.Kind != "session.updated" {
			story = append(story, ev.Kind)
			continue
		}
		var body agentsv1.Event
		if err := proto.Unmarshal(ev.Body, &body); err != nil {
			t.Fatalf("event %d: %v", ev.Seq, err)
		}
		if turn := body.GetSessionUpdated().GetHeadTurn(); turn != nil {
			story = append(story, fmt.Sprintf("session.updated with turn %d", turn.GetIndex()))
		}
	}
	return story
}

// Issue 21, the lost connection no retry can tell apart: the database
// commits the answer, and the connection is lost before the reply. The
// runner sees a write that failed for now and tries it again; the retry
// must find the answer stored, not store it twice nor fail the run that
// wrote it.
func TestACommitWhoseReplyIsLostIsStoredOnce(t *testing.T) {
	t.Parallel()
	var cutter *commitCutter
	k := newKernelWith(t, onPostgres, answer, kernelOptions{via: func(dsn string) string {
		cutter = newCommitCutter(t, dsn)
		return cutter.dsn
	}})
	reference := k.create(t, "hello")
	k.wait(t, reference)
	want := logStory(t, k.db, reference)

	hold := k.model.HoldAfter(1)
	id := k.create(t, "hello")
	<-hold.Held()
	cutter.arm()
	hold.Release()

	v := k.wait(t, id)
	if n := cutter.cuts(); n != 1 {
		t.Fatalf("connections cut after a COMMIT = %d, want 1", n)
	}
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 2 || v.Turns[1].LLM.Text != "done" {
		t.Fatalf("after the lost reply: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	ctx := context.Background()
	m, turns, err := k.db.LoadSession(ctx, id)
	if err != nil || m.Status != session.StatusReady || len(turns) != 2 || turns[1].LLM.Text != "done" {
		t.Fatalf("stored: %s (%s), %d turns, %v; want ready with the question and its answer", m.Status, m.StatusReason, len(turns), err)
	}
	if got := logStory(t, k.db, id); !slices.Equal(got, want) {
		t.Errorf("the event log has %q, want %q as for an undisturbed run", got, want)
	}
	if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "again"}, runner.RunOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	if v := k.wait(t, id); v.Meta.Status != session.StatusReady || len(v.Turns) != 4 {
		t.Fatalf("after the next message: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
}

// Issue 21, as above, for a commit in the middle of a run: the model's
// turn that calls a tool is committed and its reply lost. The run goes on
// from the stored turn: the tool runs once, the answer follows.
func TestACommitWhoseReplyIsLostMidRunLetsTheRunGoOn(t *testing.T) {
	t.Parallel()
	var cutter *commitCutter
	k := newKernelWith(t, onPostgres, toolThenAnswer, kernelOptions{via: func(dsn string) string {
		cutter = newCommitCutter(t, dsn)
		return cutter.dsn
	}})
	reference := k.create(t, "hello")
	k.wait(t, reference)
	want := logStory(t, k.db, reference)

	hold := k.model.HoldAfter(1)
	id := k.create(t, "hello")
	<-hold.Held()
	cutter.arm()
	hold.Release()

	v := k.wait(t, id)
	if n := cutter.cuts(); n != 1 {
		t.Fatalf("connections cut after a COMMIT = %d, want 1", n)
	}
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[3].LLM.Text != "done" {
		t.Fatalf("after the lost reply: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if r := v.Turns[2].User.ToolResults; len(r) != 1 || r[0].Status != session.ResultOK {
		t.Errorf("tool results = %+v, want the tool's own", r)
	}
	m, turns, err := k.db.LoadSession(context.Background(), id)
	if err != nil || m.Status != session.StatusReady || len(turns) != 4 {
		t.Fatalf("stored: %s (%s), %d turns, %v; want ready with 4", m.Status, m.StatusReason, len(turns), err)
	}
	if got := logStory(t, k.db, id); !slices.Equal(got, want) {
		t.Errorf("the event log has %q, want %q as for an undisturbed run", got, want)
	}
	if n := len(k.model.Requests()); n != 4 {
		t.Errorf("model calls = %d, want 4 (two per session)", n)
	}
}

// Issue 21, as above, for a client's write: the message that starts a
// run is committed and the reply lost. The post is answered as what
// happened, the run goes on, and the next post works: the session is
// not left running in the store and idle in memory, refusing every
// write after.
func TestAMessageWhoseCommitReplyIsLostRunsAndTheNextPostWorks(t *testing.T) {
	t.Parallel()
	var cutter *commitCutter
	k := newKernelWith(t, onPostgres, answer, kernelOptions{via: func(dsn string) string {
		cutter = newCommitCutter(t, dsn)
		return cutter.dsn
	}})
	ctx := context.Background()
	id := k.create(t, "hello")
	k.wait(t, id)

	cutter.arm()
	if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "second"}, runner.RunOptions{}, nil); err != nil {
		t.Errorf("the post whose reply was lost: %v, want it taken, as it was", err)
	}
	if n := cutter.cuts(); n != 1 {
		t.Fatalf("connections cut after a COMMIT = %d, want 1", n)
	}
	if v := k.wait(t, id); v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[2].User.Text != "second" {
		t.Fatalf("after the lost reply: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "third"}, runner.RunOptions{}, nil); err != nil {
		t.Fatalf("the next post: %v", err)
	}
	v := k.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 6 || v.Turns[5].LLM.Text != "done" {
		t.Fatalf("after the next post: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	m, turns, err := k.db.LoadSession(ctx, id)
	if err != nil || m.Status != session.StatusReady || len(turns) != 6 {
		t.Fatalf("stored: %s, %d turns, %v; want ready with 6", m.Status, len(turns), err)
	}
	for _, text := range []string{"second", "third"} {
		if n := userTurns(turns, text); n != 1 {
			t.Errorf("the message %q is stored %d times, want once", text, n)
		}
	}
}

// Issue 21, the lost reply no look can tell apart: the message that
// starts a run is committed, the reply is lost, and the database stays
// out of reach a moment, so whether the message was taken cannot be
// told. The post is refused for now (a retry with an idempotency key
// would find it taken); once the database answers again the session is
// what the store has: the run the message started goes on, and the next
// post works, where memory would otherwise say ready and every write
// conflict with the turn it does not know of.
func TestAMessageWhoseCommitOutcomeCannotBeToldLeavesTheSessionAsTheStoreHasIt(t *testing.T) {
	t.Parallel()
	var proxy *pgtest.Proxy
	var armed atomic.Bool
	k := newKernelWith(t, onPostgres, answer, kernelOptions{via: func(dsn string) string {
		proxy = pgtest.NewProxy(t, dsn, func() pgtest.Hook {
			tr := pgtest.NewAppendTracker()
			return func(m pgtest.Message) pgtest.Verdict {
				if m.Query() == "commit" && tr.Appended() && armed.CompareAndSwap(true, false) {
					proxy.Refuse(true)
					return pgtest.CutAll
				}
				tr.See(m)
				return pgtest.Forward
			}
		})
		return proxy.DSN()
	}})
	ctx := context.Background()
	id := k.create(t, "hello")
	k.wait(t, id)

	armed.Store(true)
	_, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "second"}, runner.RunOptions{}, nil)
	if errs.KindOf(err) != errs.KindUnavailable {
		t.Fatalf("the post whose outcome cannot be told: %v, want it refused for now", err)
	}
	proxy.Refuse(false)

	v := k.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[2].User.Text != "second" || v.Turns[3].LLM.Text != "done" {
		t.Fatalf("once the database answers again: %s (%s) with %d turns; want the message taken and answered", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "third"}, runner.RunOptions{}, nil); err != nil {
		t.Fatalf("the next post: %v", err)
	}
	v = k.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 6 || v.Turns[5].LLM.Text != "done" {
		t.Fatalf("after the next post: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	m, turns, err := k.db.LoadSession(ctx, id)
	if err != nil || m.Status != session.StatusReady || len(turns) != 6 {
		t.Fatalf("stored: %s, %d turns, %v; want ready with 6", m.Status, len(turns), err)
	}
	for _, text := range []string{"second", "third"} {
		if n := userTurns(turns, text); n != 1 {
			t.Errorf("the message %q is stored %d times, want once", text, n)
		}
	}
}

// Issue 21, as above, for a message to a running session, which waits
// as mail for the run's next step: its commit lands and the reply is
// lost. The post is answered as taken, the run takes the message in,
// once, and no mail is left waiting in the store that memory does not
// know of.
func TestAMessageToARunningSessionWhoseCommitReplyIsLostIsTakenOnce(t *testing.T) {
	t.Parallel()
	var cutter *commitCutter
	k := newKernelWith(t, onPostgres, answer, kernelOptions{via: func(dsn string) string {
		cutter = newCommitCutter(t, dsn)
		return cutter.dsn
	}})
	ctx := context.Background()
	hold := k.model.HoldAfter(1)
	id := k.create(t, "hello")
	<-hold.Held()
	cutter.arm()
	if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "more"}, runner.RunOptions{}, nil); err != nil {
		t.Errorf("the post whose reply was lost: %v, want it taken, as it was", err)
	}
	if n := cutter.cuts(); n != 1 {
		t.Fatalf("connections cut after a COMMIT = %d, want 1", n)
	}
	hold.Release()
	v := k.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[3].LLM.Text != "done" || v.Meta.PendingMail != 0 {
		t.Fatalf("after the lost reply: %s (%s), %d turns, %d mail pending; want ready, the message answered",
			v.Meta.Status, v.Meta.StatusReason, len(v.Turns), v.Meta.PendingMail)
	}
	m, turns, err := k.db.LoadSession(ctx, id)
	if err != nil || m.Status != session.StatusReady || len(turns) != 4 {
		t.Fatalf("stored: %s, %d turns, %v; want ready with 4", m.Status, len(turns), err)
	}
	if n := mailTurns(turns, "more"); n != 1 {
		t.Errorf("the message is taken in by %d turns, want one", n)
	}
	if pending, err := k.db.PendingMail(ctx, id); err != nil || len(pending) != 0 {
		t.Errorf("mail pending in the store: %d, %v; want none", len(pending), err)
	}
}

// mailTurns counts the user turns of a history that take in mail with
// the text.
func mailTurns(turns []session.Turn, text string) int {
	n := 0
	for _, t := range turns {
		if t.User != nil && slices.ContainsFunc(t.User.Mail, func(m session.Mail) bool { return m.Body.Text == text }) {
			n++
		}
	}
	return n
}

// Issue 21, as above, for a delete: it is committed and the reply lost.
// The delete is answered as done, and the session is gone, from memory
// as from the store.
func TestADeleteWhoseCommitReplyIsLostIsAnsweredAsDone(t *testing.T) {
	t.Parallel()
	var cutter *commitCutter
	k := newKernelWith(t, onPostgres, answer, kernelOptions{via: func(dsn string) string {
		cutter = newCommitCutter(t, dsn)
		return cutter.dsn
	}})
	ctx := context.Background()
	id := k.create(t, "hello")
	k.wait(t, id)

	cutter.arm()
	if _, err := k.run.DeleteSession(ctx, "me", id, runner.DeleteSingle); err != nil {
		t.Errorf("the delete whose reply was lost: %v, want it done, as it was", err)
	}
	if n := cutter.cuts(); n != 1 {
		t.Fatalf("connections cut after a COMMIT = %d, want 1", n)
	}
	if _, err := k.db.GetMeta(ctx, id); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("the stored session after the delete: %v, want not found", err)
	}
	if v, err := k.run.GetSession(ctx, "me", id, false, 0); errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("the session after the delete: %s with %d turns, %v; want not found", v.Meta.Status, len(v.Turns), err)
	}
}

// Issue 21, as above, for a request to a session another server holds:
// the command that carries it is committed and the reply lost. The
// server that took the request answers what the holder made of it, not
// that it failed, and the message is taken once.
func TestACommandWhoseCommitReplyIsLostIsAnsweredWithItsOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFleet(t, answer, time.Minute)
	a := f.start(t, "a")
	var armed atomic.Bool
	var cuts atomic.Int32
	proxy := pgtest.NewProxy(t, f.dsn, func() pgtest.Hook {
		// The statements prepared on the connection, by name, and
		// whether the statement bound last inserts a command: it
		// commits at the Sync that follows.
		prepared := map[string]string{}
		insert := false
		return func(m pgtest.Message) pgtest.Verdict {
			fields := strings.Split(string(m.Body), "\x00")
			switch {
			case m.Type == 'P' && len(fields) > 1:
				prepared[fields[0]] = strings.ToLower(fields[1])
			case m.Type == 'B' && len(fields) > 1:
				insert = strings.HasPrefix(prepared[fields[1]], "insert into commands")
			case m.Type == 'S' && insert:
				insert = false
				if armed.CompareAndSwap(true, false) {
					cuts.Add(1)
					return pgtest.CutThis
				}
			}
			return pgtest.Forward
		}
	})
	db, err := postgres.Open(ctx, proxy.DSN(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	b := f.start(t, "b", func(o *runner.Options) { o.Store = db })
	id := a.create(t, "bench", "hello")
	a.wait(t, id)

	armed.Store(true)
	if _, _, err := b.run.PostMessage(ctx, "me", id, runner.Message{Text: "again"}, runner.RunOptions{}, nil); err != nil {
		t.Errorf("the post through b whose command's reply was lost: %v, want it taken, as it was", err)
	}
	if n := cuts.Load(); n != 1 {
		t.Fatalf("connections cut after a command's insert = %d, want 1", n)
	}
	v := a.wait(t, id)
	if v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[3].LLM.Text != "done" {
		t.Fatalf("after the post: %s (%s) with %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
	}
	if n := userTurns(v.Turns, "again"); n != 1 {
		t.Errorf("the message is stored %d times, want once", n)
	}
}

// commitCutter forwards connections to PostgreSQL. Once armed, it lets
// the next COMMIT of a transaction that appends to the event log (it
// takes the log's lock: a change of a session, not a lease's renewal)
// through to the server and cuts that connection: the server commits,
// and the client never hears so.
type commitCutter struct {
	dsn   string
	armed atomic.Bool
	cut   atomic.Int32
}

func newCommitCutter(t *testing.T, dsn string) *commitCutter {
	t.Helper()
	c := &commitCutter{}
	c.dsn = pgtest.NewProxy(t, dsn, func() pgtest.Hook {
		tr := pgtest.NewAppendTracker()
		return func(m pgtest.Message) pgtest.Verdict {
			if m.Query() == "commit" && tr.Appended() && c.armed.CompareAndSwap(true, false) {
				c.cut.Add(1)
				return pgtest.CutThis
			}
			tr.See(m)
			return pgtest.Forward
		}
	}).DSN()
	return c
}

func (c *commitCutter) arm()      { c.armed.Store(true) }
func (c *commitCutter) cuts() int { return int(c.cut.Load()) }
