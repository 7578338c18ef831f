package client

import (
	"context"
	"errors"
	"fmt"
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

// timing is the pace of reconnections; zero fields take the constants
// above.
type timing struct {
	firstRetry, maxRetry, stall time.Duration
}

func (t timing) orDefaults() timing {
	if t.firstRetry == 0 {
		t.firstRetry = firstRetry
	}
	if t.maxRetry == 0 {
		t.maxRetry = maxRetry
	}
	if t.stall == 0 {
		t.stall = stallTimeout
	}
	return t
}

// Position is a place in the event stream: (seq, delta_seq).
type Position struct {
	Seq, DeltaSeq uint64
}

// after reports whether p comes after q.
func (p Position) after(q Position) bool {
	return p.Seq > q.Seq || (p.Seq == q.Seq && p.DeltaSeq > q.DeltaSeq)
}

// Why a connection ended without an error of the call itself.
var (
	errStreamEnded = errors.New("the server closed the event stream")
	errLagged      = errors.New("this client fell behind the event stream")
)

// Subscribe follows req's scope until ctx ends, reconnecting from the last
// position delivered whenever the stream breaks, lags or stalls. Events
// are delivered once each, in order; a reconnection the server cannot
// replay is reported as a Snapshot. The channel is closed when ctx ends.
// When req sets no position, the subscription starts at the server's
// present.
//
// A consumer that stops reading holds the stream up; the server then
// ends it as lagged and the subscription catches up by replay once the
// consumer reads again.
func (c *Client) Subscribe(ctx context.Context, req *agentsv1.SubscribeRequest) <-chan Update {
	out := make(chan Update, 256)
	f := &follower{c: c, scope: req.GetScope(), sessionID: req.GetSessionId(), out: out, timing: c.timing.orDefaults()}
	if req.After != nil {
		pos := Position{Seq: req.GetAfter(), DeltaSeq: req.GetAfterDelta()}
		f.last, f.resume = &pos, &pos
	}
	go f.follow(ctx)
	return out
}

// follower is one subscription's state across its connections.
type follower struct {
	c         *Client
	scope     agentsv1.SubscribeScope
	sessionID string
	out       chan<- Update
	timing    timing

	// last is the position of the last event or snapshot delivered:
	// anything at or before it is a duplicate of a replay.
	last *Position
	// resume is where the next connection starts: last, or, before
	// anything was delivered, the server's present at the first
	// connection, so events that happen while away are replayed.
	resume *Position
	// up says the subscriber was last told the connection is up.
	up bool
}

func (f *follower) follow(ctx context.Context) {
	defer close(f.out)
	retry := f.timing.firstRetry
	for ctx.Err() == nil {
		connected, err := f.connect(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			retry = f.timing.firstRetry
			if errors.Is(err, errLagged) {
				// The connection is fine, only this side is behind:
				// catch up at once, without calling it down.
				continue
			}
		}
		f.up = false
		if !f.send(ctx, Update{State: &ConnState{Err: err, Retry: retry}}) {
			return
		}
		select {
		case <-time.After(retry):
		case <-ctx.Done():
			return
		}
		retry = min(retry*2, f.timing.maxRetry)
	}
}

func (f *follower) send(ctx context.Context, u Update) bool {
	select {
	case f.out <- u:
		return true
	case <-ctx.Done():
		return false
	}
}

// connect runs one connection until it ends, delivering what it brings.
// connected reports that the server answered; err says why it ended.
func (f *follower) connect(ctx context.Context) (connected bool, err error) {
	r := &agentsv1.SubscribeRequest{Scope: f.scope, SessionId: f.sessionID}
	if f.resume != nil {
		seq := f.resume.Seq
		r.After, r.AfterDelta = &seq, f.resume.DeltaSeq
	}
	err = f.c.stream(ctx, r, f.timing.stall, func(item *agentsv1.SubscribeResponse) error {
		connected = true
		if !f.up {
			f.up = true
			if !f.send(ctx, Update{State: &ConnState{Connected: true}}) {
				return ctx.Err()
			}
		}
		return f.deliver(ctx, item)
	})
	return connected, err
}

// deliver hands one item of the stream to the subscriber; an error ends
// the connection.
func (f *follower) deliver(ctx context.Context, item *agentsv1.SubscribeResponse) error {
	switch it := item.GetItem().(type) {
	case *agentsv1.SubscribeResponse_Heartbeat:
		if f.resume == nil {
			f.resume = &Position{Seq: it.Heartbeat.GetSeq()}
		}
	case *agentsv1.SubscribeResponse_Snapshot:
		pos := Position{Seq: it.Snapshot.GetSeq(), DeltaSeq: it.Snapshot.GetDeltaSeq()}
		f.last, f.resume = &pos, &pos
		if !f.send(ctx, Update{Snapshot: it.Snapshot}) {
			return ctx.Err()
		}
	case *agentsv1.SubscribeResponse_Event:
		pos := Position{Seq: it.Event.GetSeq(), DeltaSeq: it.Event.GetDeltaSeq()}
		if f.last != nil && !pos.after(*f.last) {
			return nil // delivered before this reconnection
		}
		f.last, f.resume = &pos, &pos
		if !f.send(ctx, Update{Event: it.Event}) {
			return ctx.Err()
		}
	case *agentsv1.SubscribeResponse_Lagged:
		return errLagged // reconnect from last: replay fills the gap
	}
	return nil
}

// stream runs one connection, handing each item to f until f returns an
// error, the stream ends, or the server is silent for stall. The time f
// takes is not silence.
func (c *Client) stream(ctx context.Context, r *agentsv1.SubscribeRequest, stall time.Duration, f func(*agentsv1.SubscribeResponse) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errStalled := fmt.Errorf("no word from the server for %s", stall)
	timer := time.AfterFunc(stall, func() { cancel(errStalled) })
	defer timer.Stop()
	s, err := c.Events.Subscribe(ctx, connect.NewRequest(r))
	if err != nil {
		return orCause(ctx, err)
	}
	defer s.Close()
	for s.Receive() {
		timer.Stop()
		if err := f(s.Msg()); err != nil {
			return err
		}
		timer.Reset(stall)
	}
	if err := s.Err(); err != nil {
		return orCause(ctx, err)
	}
	return orCause(ctx, errStreamEnded)
}

// orCause prefers the reason ctx was cancelled (a stall) to the error it
// caused.
func orCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}
