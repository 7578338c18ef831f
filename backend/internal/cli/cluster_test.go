package cli

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/config"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/tools/fakellm"
	"github.com/agents-os/agents/tools/fakellm/fakellmtest"
)

// startPGStack assembles a server on the PostgreSQL database at dsn, as
// serve does.
func startPGStack(t *testing.T, dsn, agentFile, model string, opts clusterOptions) (*stack, error) {
	t.Helper()
	_, env := testEnv(t)
	a := &app{launcher: true, stdout: io.Discard, stderr: io.Discard, lookupEnv: env, flags: config.Flags{DB: dsn, AgentFiles: []string{agentFile}}}
	res, err := a.resolve()
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.startStack(context.Background(), res, slog.New(slog.DiscardHandler), stackOptions{offlineModel: model, recover: true, cluster: opts})
	if err == nil {
		t.Cleanup(st.close)
	}
	return st, err
}

// Two servers on one PostgreSQL database: a run on one streams, deltas
// and logged events, to the other's subscribers.
func TestServersOnPostgreSQLShareEventsAndDeltas(t *testing.T) {
	t.Parallel()
	model := fakellmtest.Start(t, fakellm.Rules{Default: &fakellm.Reply{
		Text: strings.Repeat("word ", 20), ChunkSize: 5, ChunkDelay: "5ms",
	}})
	agent := filepath.Join(t.TempDir(), "talk.json")
	writeFile(t, agent, agentJSON("talk", ""), 0o644)
	dsn := pgtest.DSN(t)
	a, err := startPGStack(t, dsn, agent, model.URL(), clusterOptions{serverID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := startPGStack(t, dsn, agent, model.URL(), clusterOptions{serverID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := b.hub.Subscribe(events.AllScope(), nil)
	defer sub.Close()

	ctx := context.Background()
	v, err := a.runner.CreateSession(ctx, "me", runner.CreateRequest{Agent: "talk", Message: &runner.Message{Text: "talk"}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var kinds []string
	deadline := time.After(20 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-sub.C():
			if ev.SessionId != v.Meta.ID {
				continue
			}
			if d := ev.GetTextDelta(); d != nil {
				text.WriteString(d.GetText())
				continue
			}
			kinds = append(kinds, ev.Kind)
			done = ev.Kind == "run.stopped"
		case <-deadline:
			t.Fatalf("server b saw %v and the text %q of a run on server a in 20s", kinds, text.String())
		}
	}
	if kinds[0] != "session.created" {
		t.Errorf("server b saw %v", kinds)
	}
	// Deltas cross best-effort, beside the logged events, in their own
	// notifications: on a loaded machine all of them may come after the
	// run's end, which the log carried first. Those still on the way are
	// waited for, a while.
	for late := time.After(10 * time.Second); text.Len() == 0; {
		select {
		case ev := <-sub.C():
			if d := ev.GetTextDelta(); d != nil && ev.SessionId == v.Meta.ID {
				text.WriteString(d.GetText())
			}
		case <-late:
			t.Fatalf("server b saw %v and no delta of a run on server a", kinds)
		}
	}
	// What came is the answer's start, in order, nothing twice; those of
	// the answer's end may come later, or not at all.
	if got := text.String(); got == "" || !strings.HasPrefix(strings.Repeat("word ", 20), got) {
		t.Errorf("server b streamed %q", got)
	}
}

func TestServeRefusesABadServerID(t *testing.T) {
	t.Parallel()
	agent := filepath.Join(t.TempDir(), "talk.json")
	writeFile(t, agent, agentJSON("talk", ""), 0o644)
	_, err := startPGStack(t, pgtest.DSN(t), agent, "", clusterOptions{serverID: "two words"})
	if err == nil || !strings.Contains(err.Error(), "--server-id") {
		t.Fatalf("a server id with a space: %v", err)
	}
}

func TestOneOffServerIDIsValidAndUnique(t *testing.T) {
	t.Parallel()
	a, b := oneOffServerID(), oneOffServerID()
	if a == b {
		t.Errorf("two one-off server ids are both %q", a)
	}
	if err := cluster.ValidServerID(a); err != nil {
		t.Error(err)
	}
}

// A server's default id is kept in its data directory: the same on every
// start there, another in another directory.
func TestTheDefaultServerIDIsKeptInTheDataDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first, err := storedServerID(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.ValidServerID(first); err != nil {
		t.Error(err)
	}
	if again, err := storedServerID(dir); err != nil || again != first {
		t.Errorf("the id on the next start: %q, %v; want %q", again, err, first)
	}
	if other, err := storedServerID(t.TempDir()); err != nil || other == first {
		t.Errorf("the id in another directory: %q, %v; want another than %q", other, err, first)
	}
}

// Two servers on one data directory would share its default id and end
// each other's tool processes: the second refuses to start, naming the
// first, until the first lets the directory go.
func TestASecondServerOnADataDirectoryRefusesToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	release, err := claimDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = claimDataDir(dir)
	if err == nil || !strings.Contains(err.Error(), "is in use by another server (pid "+strconv.Itoa(os.Getpid())+")") {
		t.Fatalf("a second claim: %v, want it refused, naming the first", err)
	}
	release()
	again, err := claimDataDir(dir)
	if err != nil {
		t.Fatalf("a claim once the first let go: %v", err)
	}
	again()
}
