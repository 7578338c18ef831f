package client

import (
	"context"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

// Update is one thing a subscription reports: exactly one field is set.
type Update struct {
	// Event is an event not delivered before on this subscription.
	Event *agentsv1.Event
	// Snapshot says the server could not replay from the last position:
	// what the subscriber shows may have missed events, so it refetches
	// (the snapshot lists the sessions in scope as they are now).
	Snapshot *agentsv1.Snapshot
	// State says the connection went up or down.
	State *ConnState
}

// ConnState is the state of a subscription's connection.
type ConnState struct {
	// Connected is true once the server answered (a heartbeat or a
	// snapshot opened the stream), false while it is away.
	Connected bool
	// Err is why the connection went down.
	Err error
	// Retry is the wait before the next attempt while down.
	Retry time.Duration
}

// Reconnection timing: the first retry comes quickly (a server restart
// takes well under a second), later ones back off to a few seconds; a
// stream silent for longer than three heartbeats is presumed dead.
const (
	firstRetry   = 100 * time.Millisecond
	maxRetry     = 5 * time.Second
	stallTimeout = 45 * time.Second
)

// Position is a place in the event stream: (seq, delta_seq).
type Position struct {
	Seq, DeltaSeq uint64
}

// after reports whether p comes after q.
func (p Position) after(q Position) bool {
	return p.Seq > q.Seq || (p.Seq == q.Seq && p.DeltaSeq > q.DeltaSeq)
}

// Subscribe follows req's scope until ctx ends, reconnecting from the last
// position delivered whenever the stream breaks, lags or stalls. Events
// are delivered once each, in order. The channel is closed when ctx ends.
// When req sets no position, the subscription starts at the server's
// present.
func (c *Client) Subscribe(ctx context.Context, req *agentsv1.SubscribeRequest) <-chan Update {
	out := make(chan Update, 256)
	go c.follow(ctx, req, out)
	return out
}

func (c *Client) follow(ctx context.Context, req *agentsv1.SubscribeRequest, out chan<- Update) {
	defer close(out)
	var last Position
	havePos := req.After != nil
	if havePos {
		last = Position{Seq: req.GetAfter(), DeltaSeq: req.GetAfterDelta()}
	}
	send := func(u Update) bool {
		select {
		case out <- u:
			return true
		case <-ctx.Done():
			return false
		}
	}
	retry := firstRetry
	connected := false
	for ctx.Err() == nil {
		r := &agentsv1.SubscribeRequest{Scope: req.GetScope(), SessionId: req.GetSessionId()}
		if havePos {
			seq := last.Seq
			r.After, r.AfterDelta = &seq, last.DeltaSeq
		}
		err := c.stream(ctx, r, func(item *agentsv1.SubscribeResponse) bool {
			if !connected {
				connected = true
				retry = firstRetry
				if !send(Update{State: &ConnState{Connected: true}}) {
					return false
				}
			}
			switch it := item.GetItem().(type) {
			case *agentsv1.SubscribeResponse_Heartbeat:
				if !havePos {
					last, havePos = Position{Seq: it.Heartbeat.GetSeq()}, true
				}
			case *agentsv1.SubscribeResponse_Snapshot:
				last, havePos = Position{Seq: it.Snapshot.GetSeq(), DeltaSeq: it.Snapshot.GetDeltaSeq()}, true
				return send(Update{Snapshot: it.Snapshot})
			case *agentsv1.SubscribeResponse_Event:
				pos := Position{Seq: it.Event.GetSeq(), DeltaSeq: it.Event.GetDeltaSeq()}
				if havePos && !pos.after(last) {
					return true // seen before this reconnection
				}
				last, havePos = pos, true
				return send(Update{Event: it.Event})
			case *agentsv1.SubscribeResponse_Lagged:
				return false // reconnect from last: replay fills the gap
			}
			return true
		})
		if ctx.Err() != nil {
			return
		}
		if connected || retry == firstRetry {
			connected = false
			if !send(Update{State: &ConnState{Err: err, Retry: retry}}) {
				return
			}
		}
		select {
		case <-time.After(retry):
		case <-ctx.Done():
			return
		}
		retry = min(retry*2, maxRetry)
	}
}

// stream runs one connection, handing each item to f until f returns
// false, the stream ends, or it is silent for stallTimeout.
func (c *Client) stream(ctx context.Context, r *agentsv1.SubscribeRequest, f func(*agentsv1.SubscribeResponse) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := c.Events.Subscribe(ctx, connect.NewRequest(r))
	if err != nil {
		return err
	}
	defer s.Close()
	stall := time.AfterFunc(stallTimeout, cancel)
	defer stall.Stop()
	for s.Receive() {
		stall.Reset(stallTimeout)
		if !f(s.Msg()) {
			return nil
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	return errStreamEnded
}

type streamEnded struct{}

func (streamEnded) Error() string { return "the server closed the event stream" }

var errStreamEnded error = streamEnded{}
