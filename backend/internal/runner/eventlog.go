package runner

import (
	"context"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/store"
)

// EventLog lets the hub replay from the store's event log.
func EventLog(s store.EventLog) events.Log { return eventLog{s} }

type eventLog struct{ s store.EventLog }

func (l eventLog) After(ctx context.Context, scope events.Scope, seq uint64, limit int) ([]*agentsv1.Event, error) {
	var f store.EventFilter
	switch {
	case scope.IsAll():
		f.All = true
	default:
		if id, ok := scope.Session(); ok {
			f.SessionID = id
		} else if owner, ok := scope.Owner(); ok {
			f.Owner = owner
		} else {
			return nil, nil
		}
	}
	rows, err := l.s.EventsAfter(ctx, f, seq, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*agentsv1.Event, 0, len(rows))
	for _, r := range rows {
		ev := &agentsv1.Event{}
		if err := proto.Unmarshal(r.Body, ev); err != nil {
			return nil, err
		}
		ev.Seq = r.Seq
		out = append(out, ev)
	}
	return out, nil
}

func (l eventLog) Bounds(ctx context.Context) (uint64, uint64, error) { return l.s.EventBounds(ctx) }

// NewHub returns a hub that replays from the store's event log and
// continues its positions, so they mean the same thing across restarts.
func NewHub(ctx context.Context, s store.EventLog, opts events.Options) (*events.Hub, error) {
	_, newest, err := s.EventBounds(ctx)
	if err != nil {
		return nil, err
	}
	opts.Log = EventLog(s)
	hub := events.New(opts)
	hub.Start(newest)
	return hub, nil
}
