package runner

import (
	"context"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/store"
)

// StoredAgentsChanged tells the other servers sharing the database that
// a stored agent changed, so that they read the stored agents again; the
// caller already did (sessions here take the change from their next
// step). Without other servers it does nothing.
func (r *Runner) StoredAgentsChanged(ctx context.Context) error {
	return r.place.StoredAgentsChanged(ctx)
}

// WriteAgent writes a change of a stored agent and the event announcing
// it in one transaction, through the committer like every other change,
// and publishes the event once it is stored.
func (r *Runner) WriteAgent(ctx context.Context, ch *store.AgentChange, ev *agentsv1.Event) error {
	return r.write(ctx, &store.Change{Agent: ch}, []*agentsv1.Event{ev})
}
