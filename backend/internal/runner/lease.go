package runner

import (
	"context"
	"time"

	"github.com/agents-os/agents/backend/internal/cluster"
)

// Cluster says how a runner shares its database with other servers.
type Cluster struct {
	Holder   string        // this server's id, unique among live servers
	LeaseTTL time.Duration // 0: 10s
	Bus      cluster.Bus
}

// DefaultLeaseTTL is a lease's life when Cluster.LeaseTTL is zero.
const DefaultLeaseTTL = 10 * time.Second

func (c *Cluster) ttl() time.Duration {
	if c.LeaseTTL <= 0 {
		return DefaultLeaseTTL
	}
	return c.LeaseTTL
}

// takeLease takes the run lease of a session being loaded; another
// server's live lease is errs.Conflict (lease_held).
func (r *Runner) takeLease(ctx context.Context, id string) error {
	c := r.opts.Cluster
	if c == nil {
		return nil
	}
	if _, err := r.store.AcquireLease(ctx, id, c.Holder, r.now(), c.ttl()); err != nil {
		return err
	}
	r.leaseTaken(ctx, id)
	return nil
}
