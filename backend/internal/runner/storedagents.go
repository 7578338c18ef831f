package runner

import (
	"context"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/store"
)

// StoredAgentsChanged tells the other servers sharing the database that
// a stored agent changed, so that they read the stored agents again; the
// caller already did (sessions here take the change from their next
// step). Without other servers it does nothing.
func (r *Runner) StoredAgentsChanged(ctx context.Context) error {
	if r.cluster == nil || r.cluster.Bus == nil {
		return nil
	}
	return r.cluster.Bus.Notify(ctx, cluster.ChannelAgents, r.cluster.Holder)
}

// followStoredAgents reads the stored agents again whenever another
// server says it changed one, and after the bus reconnects (a
// notification may have been lost meanwhile). Reads coalesce: a burst of
// changes is one read, which sees them all.
func (r *Runner) followStoredAgents(bus cluster.Bus, holder string) {
	if r.cat == nil {
		return
	}
	again := make(chan struct{}, 1)
	poke := func() {
		select {
		case again <- struct{}{}:
		default:
		}
	}
	r.listening = append(r.listening, bus.Listen(cluster.ChannelAgents, func(from string) {
		if from != holder {
			poke()
		}
	}))
	bus.OnReconnect(poke)
	r.goroutines.Go(func() {
		for {
			select {
			case <-r.ctx.Done():
				return
			case <-again:
				r.cat.ReloadStored(r.ctx)
			}
		}
	})
}

// WriteAgent writes a change of a stored agent and the event announcing
// it in one transaction, through the committer like every other change,
// and publishes the event once it is stored.
func (r *Runner) WriteAgent(ctx context.Context, ch *store.AgentChange, ev *agentsv1.Event) error {
	return r.write(ctx, &store.Change{Agent: ch}, []*agentsv1.Event{ev})
}
