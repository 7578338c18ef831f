package runner

import (
	"time"

	"github.com/agents-os/agents/backend/internal/cluster"
)

// Cluster says how a runner shares its database with other servers: a
// session's live state lives on the one server that holds its run lease.
// (The runner's use of it, leases and failover, is built beside this
// definition.)
type Cluster struct {
	// Holder is this server's id, unique among live servers; empty makes
	// one up.
	Holder string
	// LeaseTTL is how long a lease lives unrenewed: the time another
	// server waits before it takes over the sessions of one that died.
	// Zero is DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Bus carries the notifications between the servers; nil hears none,
	// and sessions that need a server are found by polling alone.
	Bus cluster.Bus
}

// DefaultLeaseTTL is the lease's life when Cluster.LeaseTTL is zero.
const DefaultLeaseTTL = 10 * time.Second
