package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

var ownerScope = &agentsv1.SubscribeRequest{Scope: agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER}

// after returns the position a connection asked to resume from.
func after(c connection) *Position {
	if c.req.After == nil {
		return nil
	}
	return &Position{c.req.GetAfter(), c.req.GetAfterDelta()}
}

func TestSubscribeReconnectsAfterABreakAndDropsReplayedDuplicates(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, func(ctx context.Context, n int, send func(*agentsv1.SubscribeResponse) error) error {
		switch n {
		case 0:
			if err := sendAll(send, heartbeatItem(5), eventItem(6, 0), eventItem(6, 1), eventItem(7, 0)); err != nil {
				return err
			}
			return connect.NewError(connect.CodeUnavailable, errors.New("going away"))
		case 1:
			// A server replays from the position asked; one that
			// repeats itself is still not believed twice.
			if err := sendAll(send, heartbeatItem(7), eventItem(6, 1), eventItem(7, 0), eventItem(8, 0)); err != nil {
				return err
			}
		}
		return hold(ctx)
	}, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := collect(t, c.Subscribe(ctx, ownerScope), untilEvents(4))

	if want := []Position{{6, 0}, {6, 1}, {7, 0}, {8, 0}}; !slices.Equal(events(got), want) {
		t.Errorf("events %v, want %v once each", events(got), want)
	}
	conns := f.connections()
	if p := after(conns[0]); p != nil {
		t.Errorf("first connection asked for after %v, want the server's present", *p)
	}
	if p := after(conns[1]); p == nil || *p != (Position{7, 0}) {
		t.Errorf("reconnection asked for after %v, want 7.0", p)
	}
	var states []string
	for _, u := range got {
		if u.State != nil {
			states = append(states, map[bool]string{true: "up", false: "down"}[u.State.Connected])
			if !u.State.Connected && (u.State.Err == nil || !strings.Contains(u.State.Err.Error(), "going away")) {
				t.Errorf("down state error %v, want the server's", u.State.Err)
			}
		}
	}
	if want := []string{"up", "down", "up"}; !slices.Equal(states, want) {
		t.Errorf("states %v, want %v (%s)", states, want, describeUpdates(got))
	}
}

func TestSubscribeResumesFromTheFirstHeartbeatWhenNothingWasDelivered(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, func(ctx context.Context, n int, send func(*agentsv1.SubscribeResponse) error) error {
		if n == 0 {
			return send(heartbeatItem(41)) // and the stream ends
		}
		if err := sendAll(send, heartbeatItem(44), eventItem(42, 0)); err != nil {
			return err
		}
		return hold(ctx)
	}, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := collect(t, c.Subscribe(ctx, ownerScope), untilEvents(1))
	if p := after(f.connections()[1]); p == nil || *p != (Position{41, 0}) {
		t.Errorf("reconnection asked for after %v, want 41 (the first heartbeat)", p)
	}
	// A heartbeat is no event: what follows it is delivered, even at a
	// position the heartbeat had passed.
	if want := []Position{{42, 0}}; !slices.Equal(events(got), want) {
		t.Errorf("events %v, want %v", events(got), want)
	}
}

func TestSubscribeReconnectsAtOnceAfterLagged(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, func(ctx context.Context, n int, send func(*agentsv1.SubscribeResponse) error) error {
		switch n {
		case 0:
			return sendAll(send, heartbeatItem(1), eventItem(2, 0), laggedItem(2))
		case 1:
			if err := sendAll(send, heartbeatItem(9), eventItem(3, 0)); err != nil {
				return err
			}
		}
		return hold(ctx)
	}, "")
	// A retry this long would show: lagged is not a failure to wait out.
	c.timing.firstRetry = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := collect(t, c.Subscribe(ctx, ownerScope), untilEvents(2))
	if p := after(f.connections()[1]); p == nil || *p != (Position{2, 0}) {
		t.Errorf("reconnection asked for after %v, want 2", p)
	}
	for _, u := range got {
		if u.State != nil && !u.State.Connected {
			t.Errorf("lagged reported the connection down: %s", describeUpdates(got))
		}
	}
	if want := []Position{{2, 0}, {3, 0}}; !slices.Equal(events(got), want) {
		t.Errorf("events %v, want %v", events(got), want)
	}
}

func TestSubscribeReconnectsAfterAStall(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, func(ctx context.Context, n int, send func(*agentsv1.SubscribeResponse) error) error {
		switch n {
		case 0:
			if err := sendAll(send, heartbeatItem(1), eventItem(2, 0)); err != nil {
				return err
			}
		case 1:
			if err := sendAll(send, heartbeatItem(2), eventItem(3, 0)); err != nil {
				return err
			}
		}
		return hold(ctx) // silent: no heartbeat comes
	}, "")
	// Long enough for a reconnection to open on a loaded machine (under
	// the race detector), short next to the test's own timeout.
	c.timing.stall = 400 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := collect(t, c.Subscribe(ctx, ownerScope), untilEvents(2))
	if p := after(f.connections()[1]); p == nil || *p != (Position{2, 0}) {
		t.Errorf("reconnection asked for after %v, want 2", p)
	}
	var down *ConnState
	for _, u := range got {
		if u.State != nil && !u.State.Connected {
			down = u.State
		}
	}
	if down == nil || down.Err == nil || !strings.Contains(down.Err.Error(), "no word from the server") {
		t.Errorf("down state %+v, want the stall named (%s)", down, describeUpdates(got))
	}
}

func TestSubscribeDoesNotCountTheConsumersTimeAsAStall(t *testing.T) {
	t.Parallel()
	// More events than the subscription buffers, so it waits on the
	// consumer with the rest.
	const n = 400
	f, c := serveFake(t, func(ctx context.Context, _ int, send func(*agentsv1.SubscribeResponse) error) error {
		if err := send(heartbeatItem(0)); err != nil {
			return err
		}
		for seq := uint64(1); seq <= n; seq++ {
			if err := send(eventItem(seq, 0)); err != nil {
				return err
			}
		}
		return hold(ctx)
	}, "")
	// The stall timeout is long enough that a loaded machine, which can
	// leave the server's sending goroutine unscheduled for a few hundred
	// milliseconds, does not make a real silence of it.
	c.timing.stall = time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	updates := c.Subscribe(ctx, ownerScope)
	collect(t, updates, untilEvents(1))
	// The consumer dawdles for longer than the stall timeout.
	time.Sleep(1500 * time.Millisecond)
	got := collect(t, updates, untilEvents(n-1))
	for _, u := range got {
		if u.State != nil {
			t.Fatalf("a state change while the consumer was slow: %+v", *u.State)
		}
	}
	if conns := len(f.connections()); conns != 1 {
		t.Errorf("%d connections, want 1: the server was never silent", conns)
	}
}

func TestSubscribePassesTheSnapshotOnAndResumesFromIt(t *testing.T) {
	t.Parallel()
	f, c := serveFake(t, func(ctx context.Context, n int, send func(*agentsv1.SubscribeResponse) error) error {
		switch n {
		case 0:
			// The position asked for is gone: a snapshot, then the end.
			return send(snapshotItem(10, 2, "a", "b"))
		case 1:
			if err := sendAll(send, heartbeatItem(11), eventItem(10, 2), eventItem(10, 3), eventItem(11, 0)); err != nil {
				return err
			}
		}
		return hold(ctx)
	}, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := uint64(3)
	got := collect(t, c.Subscribe(ctx, &agentsv1.SubscribeRequest{After: &start}), untilEvents(2))

	conns := f.connections()
	if p := after(conns[0]); p == nil || *p != (Position{3, 0}) {
		t.Errorf("first connection asked for after %v, want the request's 3", p)
	}
	if p := after(conns[1]); p == nil || *p != (Position{10, 2}) {
		t.Errorf("reconnection asked for after %v, want the snapshot's 10.2", p)
	}
	var snap *agentsv1.Snapshot
	for _, u := range got {
		if u.Snapshot != nil {
			snap = u.Snapshot
		}
	}
	if snap == nil || len(snap.GetSessions()) != 2 || snap.GetSessions()[0].GetId() != "a" {
		t.Errorf("snapshot %v, want the server's with sessions a and b", snap)
	}
	if want := []Position{{10, 3}, {11, 0}}; !slices.Equal(events(got), want) {
		t.Errorf("events %v, want %v: nothing at or before the snapshot", events(got), want)
	}
}

func TestSubscribeBacksOffAndResetsOnceConnected(t *testing.T) {
	t.Parallel()
	const failures = 7
	_, c := serveFake(t, func(ctx context.Context, n int, send func(*agentsv1.SubscribeResponse) error) error {
		if n < failures || n == failures+1 {
			return connect.NewError(connect.CodeUnavailable, errors.New("not yet"))
		}
		// Connection 7 works, then breaks.
		return send(heartbeatItem(1))
	}, "")
	c.timing.firstRetry, c.timing.maxRetry = time.Millisecond, 20*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var retries []time.Duration
	collect(t, c.Subscribe(ctx, ownerScope), func(got []Update) bool {
		if len(got) == 0 {
			return false
		}
		if u := got[len(got)-1]; u.State != nil && !u.State.Connected {
			if u.State.Err == nil {
				t.Errorf("a down state without its error")
			}
			retries = append(retries, u.State.Retry)
		}
		return len(retries) == failures+2
	})
	ms := time.Millisecond
	// Doubling to the ceiling; the connection that worked resets it; the
	// stream it opened ended, and the attempt after that failed.
	want := []time.Duration{1 * ms, 2 * ms, 4 * ms, 8 * ms, 16 * ms, 20 * ms, 20 * ms, 1 * ms, 2 * ms}
	if !slices.Equal(retries, want) {
		t.Errorf("retries %v, want %v", retries, want)
	}
}

func TestDefaultTimingIsTheDesigned(t *testing.T) {
	t.Parallel()
	got := timing{}.orDefaults()
	if got.firstRetry != 100*time.Millisecond || got.maxRetry != 5*time.Second || got.stall != 45*time.Second {
		t.Errorf("default timing %+v, want 100ms → 5s backoff and a 45s stall", got)
	}
}

func TestSubscribeEndsWithItsContext(t *testing.T) {
	t.Parallel()
	_, c := serveFake(t, func(ctx context.Context, n int, send func(*agentsv1.SubscribeResponse) error) error {
		if err := send(heartbeatItem(1)); err != nil {
			return err
		}
		return hold(ctx)
	}, "")
	ctx, cancel := context.WithCancel(context.Background())
	updates := c.Subscribe(ctx, ownerScope)
	collect(t, updates, func(got []Update) bool { return len(got) == 1 })
	cancel()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case _, ok := <-updates:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the channel stayed open after the context ended")
		}
	}
}
