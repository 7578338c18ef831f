package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
)

// server is what one server of a database has for its events.
type server struct {
	store  *postgres.Store
	hub    *events.Hub
	commit *committer.Committer
	sub    *events.Subscription
}

func startServer(t *testing.T, dsn string) *server {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, newest, err := st.EventBounds(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bus, err := cluster.NewPGBus(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	hub := events.New(events.Options{QueueSize: 1 << 16})
	hub.Start(newest)
	sub, _ := hub.Subscribe(events.AllScope(), nil)
	// No poll: what this server hears of the others comes from their
	// notifications and from the gaps before its own commits.
	seq := cluster.NewSequencer(hub, st, bus, cluster.SequencerOptions{Poll: time.Hour})
	c := committer.New(st, hub, committer.Options{Publish: seq.Committed})
	t.Cleanup(func() {
		c.Close()
		seq.Close()
		bus.Close()
		hub.Shutdown()
		st.Close()
	})
	return &server{store: st, hub: hub, commit: c, sub: sub}
}

// Two servers commit events at once on one database, while sequence
// values are burned beside them: each server's subscribers see every
// event of both, in the log's order, once.
func TestServersPublishEveryLoggedEventInSeqOrder(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	servers := []*server{startServer(t, dsn), startServer(t, dsn)}
	ctx := context.Background()

	const writers, writes = 4, 25
	var wg sync.WaitGroup
	for i, s := range servers {
		for w := range writers {
			wg.Go(func() {
				for n := range writes {
					evs := make([]*agentsv1.Event, 1+n%3)
					for k := range evs {
						evs[k] = &agentsv1.Event{Kind: "session.updated", SessionId: fmt.Sprintf("s%d-%d-%d-%d", i, w, n, k), Owner: "o"}
					}
					if err := s.commit.Write(ctx, &store.Change{}, evs); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	// Values a rolled-back append would have taken: holes in the log.
	burner, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer burner.Close(ctx)
	for range 20 {
		if _, err := burner.Exec(ctx, `SELECT nextval(pg_get_serial_sequence('events', 'seq'))`); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()

	rows, err := servers[0].store.EventsAfter(ctx, store.EventFilter{All: true}, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(rows))
	for i, r := range rows {
		want[i] = fmt.Sprintf("%d %s", r.Seq, r.SessionID)
	}
	for i, s := range servers {
		var got []string
		deadline := time.After(10 * time.Second)
		for len(got) < len(want) {
			select {
			case ev := <-s.sub.C():
				got = append(got, fmt.Sprintf("%d %s", ev.Seq, ev.SessionId))
			case <-deadline:
				t.Fatalf("server %d published %d of the %d logged events in 10s", i, len(got), len(want))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("server %d published\n%v\nwant the log's\n%v", i, got, want)
		}
		select {
		case ev := <-s.sub.C():
			t.Fatalf("server %d published seq %d beyond the log", i, ev.Seq)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
