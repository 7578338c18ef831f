package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/store/pgtest"
	"github.com/agents-os/agents/backend/internal/store/postgres"
	"github.com/agents-os/agents/backend/internal/store/storetest"
	"github.com/jackc/pgx/v5"
)

// BenchmarkCommitStep measures committed steps per second on PostgreSQL
// (storetest.BenchCommitStep), beside SQLite's. Commits wait for the WAL
// flush, as they do by default in production (pgtest's databases skip it).
func BenchmarkCommitStep(b *testing.B) {
	storetest.BenchCommitStep(b, func(b *testing.B) store.Store {
		s, err := postgres.Open(context.Background(), flushingDSN(b), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return s
	})
}

// flushingDSN is a new database's URL whose commits wait for the WAL
// flush, as they do by default in production (pgtest's databases skip it).
func flushingDSN(b *testing.B) string {
	u, err := url.Parse(pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("synchronous_commit", "on")
	u.RawQuery = q.Encode()
	return u.String()
}

// BenchmarkCommitAcrossServers measures what several servers on one
// database commit together: each server (a store of its own) has writers
// committing a session change with two events, as a step does, and the
// WAL is flushed at each commit as in production. Events must commit in
// one total order across the servers; what that order costs in commits a
// second is what this measures, for one server and for two.
func BenchmarkCommitAcrossServers(b *testing.B) {
	for _, servers := range []int{1, 2} {
		b.Run(fmt.Sprintf("servers=%d", servers), func(b *testing.B) {
			dsn := flushingDSN(b)
			ctx := context.Background()
			var stores []*postgres.Store
			for range servers {
				s, err := postgres.Open(ctx, dsn, postgres.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				stores = append(stores, s)
			}
			const writersPerServer = 8
			var next atomic.Int64
			b.SetParallelism((servers*writersPerServer + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				n := next.Add(1)
				s := stores[int(n)%servers]
				now := time.Now().UTC()
				m := session.Meta{ID: fmt.Sprintf("w%d", n), Agent: "a", Owner: "o", Status: session.StatusRunning, Created: now, Updated: now}
				if err := s.CreateSession(ctx, m, nil); err != nil {
					b.Error(err)
					return
				}
				for i := 0; pb.Next(); i++ {
					m.Updated = now.Add(time.Duration(i+1) * time.Microsecond)
					err := s.Commit(ctx, &store.Change{Meta: &m, Events: []store.Event{
						{SessionID: m.ID, Owner: "o", Kind: "session.turn", Time: m.Updated, Body: []byte("a turn")},
						{SessionID: m.ID, Owner: "o", Kind: "session.status", Time: m.Updated, Body: []byte("a status")},
					}})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
		})
	}
}

// BenchmarkNumberEvents measures the one part of a commit with events
// that servers do one at a time: numbering (number_events, under the row
// lock of event_positions), here of one commit's two events, with the WAL
// flushed at each commit as in production. Its time per op bounds the
// time the cluster's commits are serialized for, each.
func BenchmarkNumberEvents(b *testing.B) {
	dsn := flushingDSN(b)
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close(ctx)
	for b.Loop() {
		b.StopTimer()
		if _, err := admin.Exec(ctx, `INSERT INTO events (session_id, owner, kind, time, body)
			VALUES ('s', 'o', 'session.turn', 1, 'a turn'), ('s', 'o', 'session.status', 1, 'a status')`); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if pending, err := s.NumberEvents(ctx); err != nil || pending {
			b.Fatalf("NumberEvents = %v, %v", pending, err)
		}
	}
}
