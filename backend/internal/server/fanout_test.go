package server_test

import (
	"bufio"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/eventually"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/tools/fakellm"
)

// fanoutSub is one SSE subscriber of a fan-out test: its route and the
// scope it stands for.
type fanoutSub struct {
	path  string
	scope events.Scope
	sse   *sseStream
}

// published is an event a fan-out test published, as the hub numbered it.
type published struct {
	pos            events.Position
	session, owner string
}

// publishFrom publishes n events from each of several goroutines at
// once, logged ones and deltas, of the sessions and owners given (and
// server-wide ones), and returns them in position order.
func publishFrom(t *testing.T, hub *events.Hub, goroutines, n int, sessions []string, owner string) []published {
	t.Helper()
	var mu sync.Mutex
	var all []published
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range n {
				ev := &agentsv1.Event{Kind: "fanout.test"}
				switch (g + i) % 5 {
				case 0, 1:
					ev.SessionId, ev.Owner = sessions[(g+i)%len(sessions)], owner
				case 2:
					ev.SessionId, ev.Owner = fmt.Sprintf("elsewhere-%d", i%3), "someone-else"
				case 3:
					// server-wide: no session, no owner
				case 4:
					ev.SessionId, ev.Owner, ev.Kind = sessions[i%len(sessions)], owner, "text.delta"
				}
				ev.Body = &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Text: fmt.Sprintf("goroutine %d event %d", g, i)}}
				var p events.Position
				if ev.Kind == "text.delta" {
					p = hub.PublishDelta(ev)
				} else {
					p = events.Position{Seq: hub.Publish(ev)}
				}
				mu.Lock()
				all = append(all, published{pos: p, session: ev.SessionId, owner: ev.Owner})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.SortFunc(all, func(a, b published) int {
		switch {
		case a.pos.Before(b.pos):
			return -1
		case b.pos.Before(a.pos):
			return 1
		}
		return 0
	})
	return all
}

// want returns the positions of the events of all that scope matches.
func want(scope events.Scope, all []published) []events.Position {
	var out []events.Position
	for _, p := range all {
		if scope.Matches(&agentsv1.Event{SessionId: p.session, Owner: p.owner}) {
			out = append(out, p.pos)
		}
	}
	return out
}

// readPositions reads event frames until n have come, and returns their
// positions in order.
func readPositions(t *testing.T, s *sseStream, n int) []events.Position {
	t.Helper()
	var got []events.Position
	for len(got) < n {
		f, ok := s.next(t)
		if !ok {
			t.Fatalf("stream ended after %d of %d events", len(got), n)
		}
		if f.event == "lagged" {
			t.Fatalf("lagged after %d of %d events", len(got), n)
		}
		if f.id == "" || f.event == "snapshot" {
			continue
		}
		p, err := events.ParsePosition(f.id)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	return got
}

// waitSubscribers waits until the hub counts n subscribers.
func waitSubscribers(t *testing.T, hub *events.Hub, n int) {
	t.Helper()
	eventually.That(t, fmt.Sprintf("the hub counts %d subscribers", n), func() bool { return hub.Subscribers() >= n })
}

// TestSSESubscribersOfManyScopesGetExactlyTheirEventsInOrder has
// subscribers of every scope (several of each, so a round has subscribers
// that share their batch and others that do not) read while events of
// every kind of scope are published from several goroutines at once:
// each must get every event its scope matches, in position order, once,
// and none other.
func TestSSESubscribersOfManyScopesGetExactlyTheirEventsInOrder(t *testing.T) {
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	var sessions []string
	for i := range 3 {
		sessions = append(sessions, e.wait(e.create("boss", fmt.Sprint("session ", i)).GetMeta().GetId()).GetMeta().GetId())
	}
	before := e.hub.Subscribers()
	var subs []fanoutSub
	for range 4 {
		for _, id := range sessions {
			subs = append(subs, fanoutSub{path: "/v1/sessions/" + id + "/events", scope: events.SessionScope(id)})
		}
		subs = append(subs,
			fanoutSub{path: "/v1/events", scope: events.OwnerScope(server.LocalOwner)},
			fanoutSub{path: "/v1/events?scope=owner:someone-else", scope: events.OwnerScope("someone-else")},
			fanoutSub{path: "/v1/events?scope=all", scope: events.AllScope()},
		)
	}
	for i := range subs {
		subs[i].sse = e.openSSE(subs[i].path)
	}
	waitSubscribers(t, e.hub, before+len(subs))

	// 800 events: fewer than a queue holds, so no subscriber can lag.
	all := publishFrom(t, e.hub, 4, 200, sessions, server.LocalOwner)
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Go(func() {
			w := want(s.scope, all)
			got := readPositions(t, s.sse, len(w))
			if !slices.Equal(got, w) {
				t.Errorf("%s (%s): got %d events, want %d; first difference at %d", s.path, s.scope, len(got), len(w), firstDifference(got, w))
			}
		})
	}
	wg.Wait()

	// Nothing more, duplicates included: the next event of every scope
	// is the one published last.
	fence := publishFrom(t, e.hub, 1, 5, sessions, server.LocalOwner)
	for _, s := range subs {
		w := want(s.scope, fence)
		if got := readPositions(t, s.sse, len(w)); !slices.Equal(got, w) {
			t.Errorf("%s (%s): after the events, got %v, want %v", s.path, s.scope, got, w)
		}
	}
}

func firstDifference(a, b []events.Position) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSSEASubscriberThatDoesNotReadHoldsNoOtherBack opens a subscriber
// that never reads, then publishes more than its socket and its queue
// hold: the others get every event, and it is cut as lagged.
func TestSSEASubscriberThatDoesNotReadHoldsNoOtherBack(t *testing.T) {
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	before := e.hub.Subscribers()

	conn, err := net.Dial("tcp", strings.TrimPrefix(e.http.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "GET /v1/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", conn.RemoteAddr()); err != nil {
		t.Fatal(err)
	}
	// Its headers, so the subscription is open; then nothing more is read.
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(line, "200") {
		t.Fatalf("the silent subscriber's status line: %q, %v", line, err)
	}
	waitSubscribers(t, e.hub, before+1)

	readers := make([]*sseStream, 4)
	for i := range readers {
		readers[i] = e.openSSE("/v1/events")
	}
	waitSubscribers(t, e.hub, before+1+len(readers))

	// 64 KiB an event, 3,000 events: far more than a loopback socket
	// buffers, and three times the subscriber's queue. They go out in
	// steps the readers keep up with, so that only the silent one lags.
	big := strings.Repeat("x", 64<<10)
	const n, step = 3000, 100
	read := make([]atomic.Int64, len(readers))
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Go(func() {
			for range n {
				readPositions(t, r, 1)
				read[i].Add(1)
			}
		})
	}
	for sent := 0; sent < n; {
		for range step {
			e.hub.Publish(&agentsv1.Event{Kind: "fanout.test", Owner: server.LocalOwner, SessionId: "s",
				Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{Text: big}}})
		}
		sent += step
		for i := range read {
			for read[i].Load() < int64(sent) {
				time.Sleep(time.Millisecond)
			}
		}
	}
	wg.Wait()
	if e.hub.Lagged() != 1 {
		t.Errorf("%d subscribers were cut as lagged, want the one that does not read", e.hub.Lagged())
	}
}

// TestSSEAClientThatHangsUpEndsItsSubscription: an idle stream whose
// client closes the connection ends before anything is written to it,
// though the route writes to the connection itself (ConnContext): net/http
// still watches the connection and cancels the request.
func TestSSEAClientThatHangsUpEndsItsSubscription(t *testing.T) {
	e := start(t, fakellm.Rules{Default: &fakellm.Reply{Text: "ok"}})
	before := e.hub.Subscribers()

	conn, err := net.Dial("tcp", strings.TrimPrefix(e.http.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(conn, "GET /v1/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", conn.RemoteAddr()); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(line, "200") {
		t.Fatalf("status line: %q, %v", line, err)
	}
	waitSubscribers(t, e.hub, before+1)
	conn.Close()
	eventually.That(t, "the hub counts the subscribers it had before", func() bool { return e.hub.Subscribers() == before })
}
