package server

import (
	"context"
	"time"

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
	sessionID := ""
	if m.GetScope() == agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION {
		sessionID = m.GetSessionId()
	}
	var after *events.Position
	if m.After != nil {
		after = &events.Position{Seq: m.GetAfter(), Delta: m.GetAfterDelta()}
	}
	sub, err := h.s.subscribe(ctx, m.GetScope(), sessionID, after)
	if err != nil {
		return err
	}
	defer sub.Close()
	stream.ResponseHeader().Set(replayHeader, sub.Mode().String())
	// Connect writes each message as it is sent.
	return h.s.pump(ctx, sub, sink{send: stream.Send, flush: func() error { return nil }})
}

// subscribe checks the caller may use the scope and opens the
// subscription.
func (s *Server) subscribe(ctx context.Context, scope agentsv1.SubscribeScope, sessionID string, after *events.Position) (*events.Subscription, error) {
	var sc events.Scope
	switch scope {
	case agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_SESSION:
		if sessionID == "" {
			return nil, errs.Invalid("invalid_argument", "session_id is required for the session scope")
		}
		if _, err := s.runner.GetSession(ctx, owner(ctx), sessionID, false, 0); err != nil {
			return nil, err
		}
		sc = events.SessionScope(sessionID)
	case agentsv1.SubscribeScope_SUBSCRIBE_SCOPE_ALL:
		if !isAdmin(ctx) {
			return nil, errs.PermissionDenied("permission_denied", "the all scope needs an admin token")
		}
		sc = events.AllScope()
	default:
		sc = events.OwnerScope(owner(ctx))
	}
	return s.hub.SubscribeAt(ctx, sc, after)
}

// sink is where a subscription's items go: send queues one, flush puts
// what is queued on the wire.
type sink struct {
	send  func(*agentsv1.SubscribeResponse) error
	flush func() error
}

// maxBatch bounds how many queued events pump writes before it flushes.
const maxBatch = 256

// pump sends a subscription to a client: a snapshot or a heartbeat first
// (so the client knows the stream is open), then events, heartbeats while
// idle, and a lagged item if the client fell behind. Events already
// queued when one arrives go out with it in one flush: a subscriber that
// falls a little behind catches up in a few writes, not one per event.
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
			for n := 0; ; n++ {
				if !ok {
					if lagged, last := sub.Lagged(); lagged {
						if err := out.send(&agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Lagged{Lagged: &agentsv1.Lagged{LastSeq: last.Seq, LastDeltaSeq: last.Delta}}}); err != nil {
							return err
						}
					}
					return out.flush()
				}
				if err := out.send(&agentsv1.SubscribeResponse{Item: &agentsv1.SubscribeResponse_Event{Event: ev}}); err != nil {
					return err
				}
				if n == maxBatch {
					break
				}
				select {
				case ev, ok = <-sub.C():
					continue
				default:
				}
				break
			}
			if err := out.flush(); err != nil {
				return err
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
		view, err := s.runner.GetSession(ctx, owner(ctx), id, false, 0)
		if err != nil {
			return nil, err
		}
		snap.Sessions = wire.Metas([]session.Meta{view.Meta})
		return snap, nil
	}
	who := owner(ctx)
	if sub.Scope().IsAll() {
		who = runner.AnyOwner
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
