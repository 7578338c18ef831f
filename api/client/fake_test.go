package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
)

// connection is one Subscribe call the fake server received.
type connection struct {
	req           *agentsv1.SubscribeRequest
	authorization string
}

// script plays connection n of a subscription: what the server sends and
// how the stream ends.
type script func(ctx context.Context, n int, send func(*agentsv1.SubscribeResponse) error) error

// fakeServer is an EventService (and a trivial AgentService) whose
// streams follow a script, recording what clients asked for.
type fakeServer struct {
	agentsv1connect.UnimplementedEventServiceHandler
	agentsv1connect.UnimplementedAgentServiceHandler

	play script

	mu    sync.Mutex
	conns []connection
	unary []string // the Authorization header of each ListAgents
}

func (f *fakeServer) Subscribe(ctx context.Context, req *connect.Request[agentsv1.SubscribeRequest], stream *connect.ServerStream[agentsv1.SubscribeResponse]) error {
	f.mu.Lock()
	n := len(f.conns)
	f.conns = append(f.conns, connection{req: req.Msg, authorization: req.Header().Get("Authorization")})
	f.mu.Unlock()
	return f.play(ctx, n, stream.Send)
}

func (f *fakeServer) ListAgents(_ context.Context, req *connect.Request[agentsv1.ListAgentsRequest]) (*connect.Response[agentsv1.ListAgentsResponse], error) {
	f.mu.Lock()
	f.unary = append(f.unary, req.Header().Get("Authorization"))
	f.mu.Unlock()
	return connect.NewResponse(&agentsv1.ListAgentsResponse{}), nil
}

func (f *fakeServer) connections() []connection {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]connection(nil), f.conns...)
}

func (f *fakeServer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(agentsv1connect.NewEventServiceHandler(f))
	mux.Handle(agentsv1connect.NewAgentServiceHandler(f))
	return mux
}

// serveFake serves play over HTTP and returns a client of it with short
// reconnection timing.
func serveFake(t *testing.T, play script, token string) (*fakeServer, *Client) {
	t.Helper()
	f := &fakeServer{play: play}
	srv := httptest.NewServer(f.handler())
	t.Cleanup(srv.Close)
	c := New(srv.Client(), srv.URL, token)
	c.timing = timing{firstRetry: time.Millisecond, maxRetry: 20 * time.Millisecond, stall: time.Minute}
	t.Cleanup(c.Close)
	return f, c
}

func heartbeatItem(seq uint64) *agentsv1.SubscribeResponse {
	return &agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Heartbeat{Heartbeat: &agentsv1.Heartbeat{Seq: seq}}}
}

func eventItem(seq, delta uint64) *agentsv1.SubscribeResponse {
	return &agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Event{Event: &agentsv1.Event{Seq: seq, DeltaSeq: delta, SessionId: "s"}}}
}

func laggedItem(seq uint64) *agentsv1.SubscribeResponse {
	return &agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Lagged{Lagged: &agentsv1.Lagged{LastSeq: seq}}}
}

func snapshotItem(seq, delta uint64, sessions ...string) *agentsv1.SubscribeResponse {
	snap := &agentsv1.Snapshot{Seq: seq, DeltaSeq: delta}
	for _, id := range sessions {
		snap.Sessions = append(snap.Sessions, &agentsv1.SessionMeta{Id: id})
	}
	return &agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Snapshot{Snapshot: snap}}
}

// sendAll sends items in order.
func sendAll(send func(*agentsv1.SubscribeResponse) error, items ...*agentsv1.SubscribeResponse) error {
	for _, it := range items {
		if err := send(it); err != nil {
			return err
		}
	}
	return nil
}

// hold keeps a connection open and silent until the client goes.
func hold(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// collect reads updates until done says it has enough, failing the test
// after a few seconds.
func collect(t *testing.T, updates <-chan Update, done func([]Update) bool) []Update {
	t.Helper()
	var got []Update
	timeout := time.After(5 * time.Second)
	for !done(got) {
		select {
		case u, ok := <-updates:
			if !ok {
				t.Fatalf("the subscription ended after %s", describeUpdates(got))
			}
			got = append(got, u)
		case <-timeout:
			t.Fatalf("timed out after %s", describeUpdates(got))
		}
	}
	return got
}

// events counts the events among updates.
func events(updates []Update) []Position {
	var out []Position
	for _, u := range updates {
		if u.Event != nil {
			out = append(out, Position{u.Event.GetSeq(), u.Event.GetDeltaSeq()})
		}
	}
	return out
}

func untilEvents(n int) func([]Update) bool {
	return func(got []Update) bool { return len(events(got)) >= n }
}

// describeUpdates renders updates compactly for failure messages.
func describeUpdates(updates []Update) string {
	s := "["
	for i, u := range updates {
		if i > 0 {
			s += " "
		}
		switch {
		case u.Event != nil:
			s += fmt.Sprintf("event(%d.%d)", u.Event.GetSeq(), u.Event.GetDeltaSeq())
		case u.Snapshot != nil:
			s += "snapshot"
		case u.State != nil && u.State.Connected:
			s += "up"
		case u.State != nil:
			s += "down(" + u.State.Retry.String() + ")"
		}
	}
	return s + "]"
}
