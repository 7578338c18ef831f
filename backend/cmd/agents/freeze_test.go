//go:build linux

package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// frozenPositionsBound is how soon after a server froze inside a write
// the events the other servers committed meanwhile have their positions:
// PostgreSQL ends the frozen server's transaction once it has been idle
// for the store's idle_in_transaction_session_timeout (5 s), and nothing
// then holds them back; the rest is room for a loaded machine.
const frozenPositionsBound = 15 * time.Second

// TestClusterAServerFrozenMidCommitHoldsTheOthersUpOnlyBriefly is issue
// 33, item 1, as issue 34, item 5 leaves it. Server A writes steadily
// (sessions created and run) and is frozen (SIGSTOP) inside a write
// transaction, as a long GC pause or a frozen VM would leave it. Server
// B must go on writing at once, its /readyz saying so; the positions of
// the events it writes wait, as they must, for A's transaction to end
// (it began first and could still commit events ahead of them), and
// must be given within frozenPositionsBound. A, continued, must not
// answer ready before it can write, and its interrupted commit is
// neither lost nor stored twice: every session whose create succeeded
// exists, once.
func TestClusterAServerFrozenMidCommitHoldsTheOthersUpOnlyBriefly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agents binary and runs it as child processes on PostgreSQL")
	}
	t.Parallel()
	model := fakellmtest.Start(t, oneWriterRules())
	dsn := pgtest.DSN(t)
	servers := startCluster(t, 2, dsn, model.URL())
	a, b := servers[0], servers[1]
	admin, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())

	// A steady stream of writes through A, each create a session of its
	// own with a text of its own.
	stream := &createStream{}
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := range 3 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				stream.create(a, fmt.Sprintf("writer %d, message %d", w, i))
			}
		}()
	}
	stopWriters := sync.OnceFunc(func() { close(stop) })
	defer func() {
		stopWriters()
		_ = a.cmd.Process.Signal(syscall.SIGCONT)
		writers.Wait()
	}()

	frozenAt, pids := freezeInsideAWrite(t, a, admin)
	t.Logf("A froze inside write transactions (backends %v)", pids)
	stopWriters()

	// B answers ready and writes while A's transaction is still open.
	if status, body := getReadyz(t, b.url); status != http.StatusOK {
		t.Fatalf("B's /readyz while A is frozen inside a write = %d %s, want 200: nothing of A's holds B's writes", status, body)
	}
	res, err := b.sessions.CreateSession(ctxFor(t), connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "slow", Message: &agentsv1.Message{Text: "through B while A is frozen"},
	}))
	if err != nil {
		t.Fatalf("B's create while A is frozen inside a write: %v", err)
	}
	if !stillHolding(writeHolders(t, admin, a.dbApplication), pids) {
		t.Fatal("A's transactions ended before B's create returned: the test proved nothing")
	}
	t.Logf("B wrote %s after A froze, A's transaction still open", time.Since(frozenAt).Round(time.Millisecond))

	// Every event B wrote gets its position within the bound.
	for n := unpositioned(t, admin, res.Msg.GetSession().GetMeta().GetId()); n > 0; n = unpositioned(t, admin, res.Msg.GetSession().GetMeta().GetId()) {
		if time.Since(frozenAt) > frozenPositionsBound {
			t.Fatalf("%d events of B's session still have no position %s after A froze", n, frozenPositionsBound)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("B's events had their positions %s after A froze", time.Since(frozenAt).Round(time.Millisecond))
	waitReady(t, "B", b.url)
	if !stillFrozen(t, a) {
		t.Fatal("A is no longer stopped: the test proved nothing")
	}

	// A goes on. Once it says it is ready, it writes.
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	writers.Wait()
	waitReady(t, "A, continued", a.url)
	id := a.create(t, "slow", "through A once it is ready again")
	a.waitIdle(t, id)

	// Nothing lost, nothing twice: each session created is listed once,
	// with its message once.
	texts := map[string]int{}
	for _, s := range listSessions(t, b) {
		for _, text := range userTexts(b.get(t, s.GetId())) {
			texts[text]++
		}
	}
	t.Logf("%d creates through A succeeded, %d messages stored", len(stream.succeeded()), len(texts))
	for _, text := range stream.succeeded() {
		if texts[text] != 1 {
			t.Errorf("message %q, whose create succeeded, is stored %d times", text, texts[text])
		}
	}
	for text, n := range texts {
		if n != 1 {
			t.Errorf("message %q is stored %d times", text, n)
		}
	}
}

// createStream records the messages of the creates that succeeded.
type createStream struct {
	mu sync.Mutex
	ok []string
}

func (c *createStream) create(p *serveProc, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.sessions.CreateSession(ctx, connect.NewRequest(&agentsv1.CreateSessionRequest{
		Agent: "slow", Message: &agentsv1.Message{Text: text},
	}))
	if err != nil {
		return // A was frozen under it; whether it took effect is checked by its text
	}
	c.mu.Lock()
	c.ok = append(c.ok, text)
	c.mu.Unlock()
}

func (c *createStream) succeeded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ok...)
}

// freezeInsideAWrite stops p (SIGSTOP) at a moment it is inside a write
// transaction, as its PostgreSQL backends show, and returns when it froze
// and those backends: with no cluster-wide commit lock, p's concurrent
// writers may each hold one. A stop that finds no transaction open is
// undone and tried again a moment later.
func freezeInsideAWrite(t *testing.T, p *serveProc, admin *pgx.Conn) (time.Time, []int) {
	t.Helper()
	for range 300 {
		if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		at := time.Now()
		// What the backend was running when the process stopped, and what
		// the process had sent it already, ends within a moment; then it
		// waits, idle in its transaction, for good.
		time.Sleep(100 * time.Millisecond)
		if pids := writeHolders(t, admin, p.dbApplication); len(pids) > 0 {
			time.Sleep(100 * time.Millisecond)
			if held := writeHolders(t, admin, p.dbApplication); stillHolding(held, pids) {
				return at, held
			}
		}
		if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
	}
	t.Fatal("the server was never inside a write transaction when it was stopped")
	return time.Time{}, nil
}

// stillHolding reports whether any of the frozen backends is among those
// still idle inside a write transaction.
func stillHolding(now, frozen []int) bool {
	for _, pid := range frozen {
		if slices.Contains(now, pid) {
			return true
		}
	}
	return false
}

// writeHolders are the backends of the application app idle inside a
// write transaction. Only app's: another server may be between two
// statements of a transaction of its own when asked, and a loaded
// machine can keep it there for longer than a moment.
func writeHolders(t *testing.T, admin *pgx.Conn, app string) []int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var pids []int
	rows, err := admin.Query(ctx, `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1
		AND state = 'idle in transaction' AND backend_xid IS NOT NULL`, app)
	if err == nil {
		pids, err = pgx.CollectRows(rows, pgx.RowTo[int])
	}
	if err != nil {
		t.Fatalf("read the open transactions: %v", err)
	}
	return pids
}

// unpositioned counts the events of a session still without a position.
func unpositioned(t *testing.T, admin *pgx.Conn, session string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM events WHERE session_id = $1 AND seq IS NULL`, session).Scan(&n); err != nil {
		t.Fatalf("count the events without a position: %v", err)
	}
	return n
}

// stillFrozen reports whether p is stopped.
func stillFrozen(t *testing.T, p *serveProc) bool {
	t.Helper()
	return mustProc(t, p.cmd.Process.Pid).state == 'T'
}

// waitReady waits until base's /readyz answers 200, failing after 30s.
func waitReady(t *testing.T, what, base string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, body := getReadyz(t, base)
		if status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz of %s = %d %s after 30s, want 200", what, status, strings.TrimSpace(body))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func listSessions(t *testing.T, p *serveProc) []*agentsv1.SessionMeta {
	t.Helper()
	var all []*agentsv1.SessionMeta
	token := ""
	for {
		res, err := p.sessions.ListSessions(ctxFor(t), connect.NewRequest(&agentsv1.ListSessionsRequest{PageToken: token}))
		if err != nil {
			t.Fatalf("list sessions: %v", err)
		}
		all = append(all, res.Msg.GetSessions()...)
		if token = res.Msg.GetNextPageToken(); token == "" {
			return all
		}
	}
}
