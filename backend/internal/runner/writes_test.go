package runner_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/storefault"
	"github.com/agents-os/agents/tools/fakellm"
)

// The kernel's writes, classified: a store that refuses a write for now
// (busy, locked, gone for a moment) holds the run up and loses nothing;
// one that refuses it for good (a conflict, a missing session) has the
// session reloaded from the store and settled, once.

// lock holds the kernel's database against writes from a connection of
// its own, as another process would, until the returned func is called:
// SQLite's write lock on the file, or on PostgreSQL a lock on the events
// table that stops every commit with events at its append.
func (k *kernel) lock(t *testing.T) (unlock func()) {
	t.Helper()
	ctx := context.Background()
	if k.dsn != "" {
		conn, err := pgx.Connect(ctx, k.dsn)
		if err != nil {
			t.Fatal(err)
		}
		release := pgtest.HoldEventAppends(t, conn)
		return func() {
			release()
			conn.Close(ctx)
		}
	}
	db, err := sql.Open("sqlite", k.path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Error(err)
		}
		conn.Close()
		db.Close()
	}
}

// Issue 20, item 4: a lock held longer than the busy timeout (on
// PostgreSQL, the lock_timeout) while the model answers holds the run up;
// the answer is written once the lock is gone and the run ends as it
// would have.
func TestAnAnswerOutlivesALockLongerThanTheBusyTimeout(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		const busy = 50 * time.Millisecond
		k := newKernelWith(t, d, answer, kernelOptions{lockTimeout: busy})
		hold := k.model.HoldAfter(1)
		id := k.create(t, "hello")
		<-hold.Held()
		unlock := k.lock(t)
		before := k.store.Writes()
		hold.Release()
		// The answer's write waits out the timeout and fails, with the
		// run's end and without, and is tried again: meanwhile the session
		// says running, in memory and in the store.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := k.store.WaitWrites(ctx, before+4); err != nil {
			t.Fatal(err)
		}
		v, err := k.run.GetSession(context.Background(), "me", id, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		if v.Meta.Status != session.StatusRunning {
			t.Errorf("during the lock: status %s (%s), want running", v.Meta.Status, v.Meta.StatusReason)
		}
		unlock()
		if v := k.wait(t, id); v.Meta.Status != session.StatusReady || len(v.Turns) != 2 || v.Turns[1].LLM.Text != "done" {
			t.Fatalf("after the lock: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
		}
		if m, err := k.db.GetMeta(context.Background(), id); err != nil || m.Status != session.StatusReady || m.TurnCount != 2 {
			t.Fatalf("stored: %+v, %v", m, err)
		}
	})
}

// toolThenAnswer calls the bash tool once, then answers.
var toolThenAnswer = fakellm.Rules{Rules: []fakellm.Rule{
	{Match: fakellm.Match{LastIsToolResult: ptr(false)}, Reply: fakellm.Reply{
		ToolCalls: []fakellm.ToolCall{{Name: "bash_noop", Arguments: json.RawMessage(`{}`)}},
	}},
	{Reply: fakellm.Reply{Text: "done"}},
}}

func ptr[T any](v T) *T { return &v }

// Issue 20, item 4, for the writes of a run one by one: the store refuses
// the answer, then the tool results, for now; each is kept, written when
// the store takes writes again, and the tool ran once.
func TestRefusedRunWritesAreKeptAndWrittenLater(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		for _, tc := range []struct {
			name  string
			match func(*store.Change) bool
		}{
			{"answer", storefault.WithEvent("tool.started")},
			{"tool results", storefault.WithToolResults()},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				k := newKernel(t, d, toolThenAnswer)
				k.store.RefuseCommits(storefault.Always, tc.match)
				id := k.create(t, "hello")
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				if err := k.store.WaitRefused(ctx, 3); err != nil {
					t.Fatal(err)
				}
				if m, err := k.db.GetMeta(ctx, id); err != nil || m.Status != session.StatusRunning {
					t.Errorf("while refused: stored %s, %v; want running", m.Status, err)
				}
				k.store.Clear()
				v := k.wait(t, id)
				if v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[3].LLM.Text != "done" {
					t.Fatalf("after: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
				}
				if r := v.Turns[2].User.ToolResults; len(r) != 1 || r[0].Status != session.ResultOK {
					t.Errorf("tool results = %+v", r)
				}
				if n := len(k.model.Requests()); n != 2 {
					t.Errorf("model calls = %d, want 2", n)
				}
			})
		}
	})
}

// Issue 20, item 4 and item 2: a write the store refuses for good is not
// tried forever. Here another writer appended a turn behind the session's
// back (as a second process on the file did): the answer conflicts, the
// session is reloaded from the store and failed honestly, the store and
// memory agree, and the next post runs.
func TestAConflictingWriteSettlesTheSessionFromTheStore(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		hold := k.model.HoldAfter(1)
		id := k.create(t, "hello")
		<-hold.Held()
		ctx := context.Background()
		m, err := k.db.GetMeta(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		m.TurnCount++
		behind := session.Turn{Index: 1, User: &session.UserTurn{Text: "from elsewhere"}, Created: time.Now()}
		if err := k.db.Commit(ctx, &store.Change{Meta: &m, NewTurns: []session.Turn{behind}}); err != nil {
			t.Fatal(err)
		}
		hold.Release()
		v := k.wait(t, id)
		if v.Meta.Status != session.StatusFailed || len(v.Turns) != 2 || v.Turns[1].User == nil {
			t.Fatalf("after the conflict: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
		}
		if stored, err := k.db.GetMeta(ctx, id); err != nil || stored.Status != session.StatusFailed {
			t.Fatalf("stored: %s, %v; want failed", stored.Status, err)
		}
		if _, _, err := k.run.PostMessage(ctx, "me", id, runner.Message{Text: "again"}, runner.RunOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		if v := k.wait(t, id); v.Meta.Status != session.StatusReady || v.Turns[len(v.Turns)-1].LLM.Text != "done" {
			t.Fatalf("after the post: %s (%s)", v.Meta.Status, v.Meta.StatusReason)
		}
	})
}

// Issue 20, item 4: a run end the store refuses for good (a missing
// session, say) is tried again a bounded number of times, not forever,
// and the session takes input again.
func TestAPermanentlyRefusedRunEndIsNotRetriedForever(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		k.store.FailCommits(storefault.Always, storefault.EndsRun(), errs.NotFound(errs.CodeUnknownSession, "unknown session"))
		id := k.create(t, "hello")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := k.store.WaitRefused(ctx, 1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if n := k.store.Refused(); n > 3 {
			t.Errorf("the run end was refused %d times in a second: retried as if it could succeed", n)
		}
		if v := k.wait(t, id); v.Meta.Status == session.StatusRunning {
			t.Errorf("status %s", v.Meta.Status)
		}
	})
}

// Issue 20, item 9: a write the committer took when the server began to
// close is still committed, and its writer is told so, not "shutting
// down": the answer a client gets is the truth.
func TestAWriteCommittedWhileClosingReportsItsOutcome(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d dialect) {
		k := newKernel(t, d, answer)
		id := k.create(t, "hello")
		k.wait(t, id)
		k.store.SlowWrites(300 * time.Millisecond)
		sent := make(chan error, 1)
		go func() {
			_, err := k.run.SendMail(context.Background(), "me", id, runner.Mail{Body: session.MailBody{Kind: session.MailUserMessage, Text: "note"}})
			sent <- err
		}()
		time.Sleep(100 * time.Millisecond) // the mail's commit is under way
		k.close()
		err := <-sent
		mail, lerr := k.db.ListMail(context.Background(), id, false)
		if lerr != nil {
			t.Fatal(lerr)
		}
		if stored := len(mail) == 1; stored != (err == nil) {
			t.Fatalf("SendMail answered %v, and the mail is stored: %v", err, stored)
		}
	})
}

// A write the store refuses changes nothing, in memory either: a cancel
// of a round that waits for an approval, or a refusal of the approval
// that would go on with the round, refused for now, leaves the call
// waiting as the store has it, and the approval given next runs it.
func TestARefusedAnswerOrCancelLeavesTheRoundWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachDialect(t, func(t *testing.T, d dialect) {
		for _, tc := range []struct {
			name    string
			refused func(k *kernel, id, token string) error
		}{
			{"cancel", func(k *kernel, id, _ string) error {
				_, err := k.run.CancelRun(ctx, "me", id)
				return err
			}},
			{"refusal", func(k *kernel, _, token string) error {
				_, _, err := k.run.CompleteCall(ctx, "me", token, runner.CallAnswer{Approval: &runner.ApprovalAnswer{Reason: "no"}}, true, nil)
				return err
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				k := newKernel(t, d, toolThenAnswer)
				id := createOn(t, k.run, "guard", "tool please")
				v := k.wait(t, id)
				if v.Meta.Status != session.StatusWaiting || len(v.Deferred) != 1 {
					t.Fatalf("before: %s, %d deferred", v.Meta.Status, len(v.Deferred))
				}
				token := v.Deferred[0].Token
				k.store.RefuseCommits(storefault.Always, storefault.Of(id, func(*store.Change) bool { return true }))
				if err := tc.refused(k, id, token); err == nil {
					t.Fatal("a refused write answered as done")
				}
				k.store.Clear()
				v = k.wait(t, id)
				if v.Meta.Status != session.StatusWaiting || len(v.Deferred) != 1 || v.Meta.PendingCalls != 1 {
					t.Fatalf("after the refused write: %s, %d deferred, %d pending", v.Meta.Status, len(v.Deferred), v.Meta.PendingCalls)
				}
				_, remaining, err := k.run.CompleteCall(ctx, "me", token, runner.CallAnswer{Approval: &runner.ApprovalAnswer{Approve: true}}, true, nil)
				if err != nil || remaining != 0 {
					t.Fatalf("the approval after: %d remaining, %v", remaining, err)
				}
				v = k.wait(t, id)
				if v.Meta.Status != session.StatusReady || len(v.Turns) != 4 || v.Turns[3].LLM.Text != "done" {
					t.Fatalf("after the approval: %s (%s), %d turns", v.Meta.Status, v.Meta.StatusReason, len(v.Turns))
				}
				if r := v.Turns[2].User.ToolResults; len(r) != 1 || r[0].Status != session.ResultOK {
					t.Errorf("tool results = %+v", r)
				}
			})
		}
	})
}
