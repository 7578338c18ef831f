package server

import (
	"context"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/api/gen/agents/v1/agentsv1connect"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/wire"
)

// eventService serves EventService.
type eventService struct {
	agentsv1connect.UnimplementedEventServiceHandler
	s *Server
}

// heartbeatEvery keeps idle streams open through proxies that close quiet
// connections.
const heartbeatEvery = 15 * time.Second

// replayHeader says which contract a subscription got: replay or snapshot.
const replayHeader = "Agents-Replay"

// maxSnapshotSessions bounds a snapshot; a client with more sessions in
// scope pages through ListSessions.
const maxSnapshotSessions = 5000

func (h *eventService) Subscribe(ctx context.Context, req *connect.Request[agentsv1.SubscribeRequest], stream *connect.ServerStream[agentsv1.SubscribeResponse]) error {
	m := req.Msg
	var after *events.Position
	if m.After != nil {
		after = &events.Position{Seq: m.GetAfter(), Delta: m.GetAfterDelta()}
	}
	sub, err := h.s.subscribe(ctx, m.GetScope(), m.GetSessionId(), m.GetOwner(), m.GetKinds(), after)
	if err != nil {
		return err
	}
	defer sub.Close()
	stream.ResponseHeader().Set(replayHeader, sub.Mode().String())
	// Connect writes each message as it is sent.
	return h.s.pump(ctx, sub, sink{send: stream.Send, flush: func() error { return nil }})
}

// subscribe checks the caller may use the scope and opens the
// subscription. A session id implies the session scope; with another
// scope it is refused, not ignored: streaming more than the session asked
// for is the one wrong answer. of names the owner of an owner scope,
// empty for the caller's own; kinds, when not empty, are the only kinds
// it gets.
func (s *Server) subscribe(ctx context.Context, scope agentsv1.SubscribeScope, sessionID, of string, kinds []string, after *events.Position) (*events.Subscription, error) {
	if sessionID != "" {
		switch scope {
		case agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_UNSPECIFIED:
			scope = agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION
		case agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION:
		default:
			return nil, errs.Invalid(errs.CodeInvalidArgument, "session_id goes with the session scope only: leave the scope out, or leave session_id out for the owner or all scope")
		}
	}
	var sc events.Scope
	if of != "" && scope != agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_OWNER && scope != agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_UNSPECIFIED {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "owner is only for the owner scope")
	}
	// Connect's field checks bound the owner; this bounds the SSE query's.
	if utf8.RuneCountInString(of) > maxNameChars {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "owner: at most %d characters", maxNameChars)
	}
	switch scope {
	case agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION:
		if sessionID == "" {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "session_id is required for the session scope")
		}
		if _, err := s.readSession(ctx, rpcSubscribe, sessionID, runner.ViewRequest{Turns: runner.Turns{None: true}}); err != nil {
			return nil, err
		}
		sc = events.SessionScope(sessionID)
	case agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_ALL:
		if !isAdmin(ctx) {
			return nil, errs.PermissionDenied(errs.CodePermissionDenied, "the all scope needs an admin token")
		}
		sc = events.AllScope()
	default:
		if of == "" {
			of = owner(ctx)
		}
		if of != owner(ctx) {
			if !isAdmin(ctx) {
				return nil, errs.PermissionDenied(errs.CodePermissionDenied, "another owner's events need an admin token")
			}
			s.auditRead(ctx, rpcSubscribe, of, "")
		}
		sc = events.OwnerScope(of)
	}
	for _, k := range kinds { // as the owner: Connect's checks bound them
		if utf8.RuneCountInString(k) > maxSlugChars {
			return nil, errs.Invalid(errs.CodeInvalidArgument, "kinds: a kind has at most %d characters", maxSlugChars)
		}
	}
	sc, err := sc.OfKinds(kinds...)
	if err != nil {
		return nil, errs.Invalid(errs.CodeInvalidArgument, "kinds: %v", err)
	}
	return s.hub.SubscribeAt(ctx, sc, after)
}

// sink is where a subscription's items go: send queues one, flush puts
// what is queued on the wire.
type sink struct {
	send func(*agentsv1.SubscribeResponse) error
	// sendEvent, when set, queues an event item: it saves wrapping each
	// event of each subscriber in a message only to unwrap it.
	sendEvent func(*agentsv1.Event) error
	flush     func() error
}

func (out sink) event(ev *agentsv1.Event) error {
	if out.sendEvent != nil {
		return out.sendEvent(ev)
	}
	return out.send(&agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Event{Event: ev}})
}

// maxBatch bounds how many queued events pump writes before it flushes.
const maxBatch = 256

// coalesce is how long pump waits, after the first event of a batch, for
// the events that usually follow it (a run's start, its deltas, its
// turns and its end come within a millisecond or two): a subscriber is
// woken and written to once for them, not once per event. A timer that
// fires does not wake it again for each event queued meanwhile, as a
// receive on its queue would.
//
// The window grows with the number of subscribers, by coalesce for each
// coalescePer of them up to maxCoalesce: every event costs a write per
// subscriber, and a write to a socket costs about the same for one event
// as for ten, so with a thousand subscribers the server spends most of
// its time in those writes and a longer window, fewer and larger writes,
// delivers sooner than a short one (BENCHMARKS.md, "Fan-out to 1,000
// subscribers", with the shared rounds tried since).
const (
	coalesce    = 2 * time.Millisecond
	coalescePer = 100
	maxCoalesce = 20 * time.Millisecond
)

// coalesceWindow is the window for a hub with n subscribers.
func coalesceWindow(n int) time.Duration {
	return min(maxCoalesce, coalesce*time.Duration(max(1, n/coalescePer)))
}

// eventRate is how many events a second a subscriber takes, as observed
// batch after batch: a subscriber of a few kinds (a dashboard of
// run.stopped) takes a fraction of what the hub publishes.
type eventRate struct {
	perSecond float64
	last      time.Time // when the last batch began
	known     bool
}

// observe counts a batch of n events that began at now.
func (r *eventRate) observe(n int, now time.Time) {
	if !r.last.IsZero() {
		if gap := now.Sub(r.last).Seconds(); gap > 0 {
			rate := float64(n) / gap
			if !r.known {
				r.perSecond, r.known = rate, true
			} else {
				r.perSecond += (rate - r.perSecond) / 4
			}
		}
	}
	r.last = now
}

// window is how long a subscriber at this rate waits after the first
// event of a batch, the hub's window being hub: as long as the hub's when
// another event is expected in it, shorter as fewer are, down to
// coalesce, which still gathers the events of one run. Waiting for
// events that seldom come only delays the one in hand: a dashboard that
// takes a run.stopped now and then gets it sooner, and one busy enough
// to gather several still saves the writes.
func (r *eventRate) window(hub time.Duration) time.Duration {
	if !r.known {
		return hub
	}
	expected := r.perSecond * hub.Seconds()
	if expected >= 1 {
		return hub
	}
	return max(coalesce, time.Duration(float64(hub)*expected))
}

// pump sends a subscription to a client: a snapshot or a heartbeat first
// (so the client knows the stream is open), then events, heartbeats while
// idle, and a lagged item if the client fell behind. Events queued when
// one arrives, and those that arrive in the coalescing window after it,
// go out with it in one flush: a subscriber that falls a little behind
// catches up in a few writes, not one per event.
func (s *Server) pump(ctx context.Context, sub *events.Subscription, out sink) error {
	first := heartbeat(s.hub.Seq())
	if sub.Mode() == events.ModeSnapshot {
		snap, err := s.snapshot(ctx, sub)
		if err != nil {
			return err
		}
		first = &agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Snapshot{Snapshot: snap}}
	}
	if err := out.send(first); err != nil {
		return err
	}
	if err := out.flush(); err != nil {
		return err
	}
	ticker := time.NewTicker(heartbeatEvery)
	defer ticker.Stop()
	var rate eventRate
	window := time.NewTimer(time.Hour)
	window.Stop()
	defer window.Stop()
	// drain sends ev and what is queued behind it, up to maxBatch events
	// in all (n counts them); it reports whether the queue ended.
	drain := func(ev *agentsv1.Event, ok bool, n *int) (ended bool, err error) {
		for {
			if !ok {
				if lagged, last := sub.Lagged(); lagged {
					if err := out.send(&agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Lagged{Lagged: &agentsv1.Lagged{LastSeq: last.Seq, LastDeltaSeq: last.Delta}}}); err != nil {
						return true, err
					}
				}
				return true, nil
			}
			if err := out.event(ev); err != nil {
				return false, err
			}
			if *n++; *n > maxBatch {
				return false, nil
			}
			select {
			case ev, ok = <-sub.C():
			default:
				return false, nil
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			if err := out.send(heartbeat(s.hub.Seq())); err != nil {
				return err
			}
			if err := out.flush(); err != nil {
				return err
			}
		case ev, ok := <-sub.C():
			began := time.Now()
			n := 0
			ended, err := drain(ev, ok, &n)
			if err != nil {
				return err
			}
			if !ended && n <= maxBatch {
				window.Reset(rate.window(coalesceWindow(s.hub.Subscribers())))
				select {
				case <-ctx.Done():
					return out.flush()
				case <-window.C:
				}
				select {
				case ev, ok = <-sub.C():
					if ended, err = drain(ev, ok, &n); err != nil {
						return err
					}
				default:
				}
			}
			rate.observe(n, began)
			if err := out.flush(); err != nil {
				return err
			}
			if ended {
				return nil
			}
		}
	}
}

func heartbeat(seq uint64) *agentsv1.SubscribeResponse {
	return &agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Heartbeat{Heartbeat: &agentsv1.Heartbeat{Seq: seq}}}
}

// snapshot lists the sessions in the subscription's scope. Changes are
// stored before they are published, so it reflects every event up to the
// subscription's snapshot seq.
func (s *Server) snapshot(ctx context.Context, sub *events.Subscription) (*agentsv1.Snapshot, error) {
	pos := sub.SnapshotPosition()
	snap := &agentsv1.Snapshot{Seq: pos.Seq, DeltaSeq: pos.Delta}
	if id, ok := sub.Scope().Session(); ok {
		view, err := s.runner.ReadSession(ctx, readOwner(ctx), id, runner.ViewRequest{Turns: runner.Turns{None: true}})
		if err != nil {
			return nil, err
		}
		snap.Sessions = wire.Metas([]session.Meta{view.Meta})
		return snap, nil
	}
	who := runner.AnyOwner
	if of, ok := sub.Scope().Owner(); ok {
		who = of
	}
	token := ""
	for len(snap.Sessions) < maxSnapshotSessions {
		page, next, err := s.runner.ListSessions(ctx, who, store.ListFilter{PageSize: store.MaxPageSize, PageToken: token})
		if err != nil {
			return nil, err
		}
		snap.Sessions = append(snap.Sessions, wire.Metas(page)...)
		if next == "" {
			break
		}
		token = next
	}
	return snap, nil
}
