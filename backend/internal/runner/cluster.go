package runner

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agents-os/agents/backend/internal/cluster"
)

// Cluster says how a runner shares its database with other servers.
//
// A session's live state (its actor) lives on the one server that holds
// its run lease: a server loads a session only once it took the lease,
// renews the leases of every session it has loaded, and writes every
// change of a session under its lease (store.Change.Fence), so a server
// that lost a lease cannot write and stops what it did for the session
// (see lease.go). Sessions that need a server and have none (their
// holder died, or drained) are claimed by any server, which recovers
// them as a restart would (see failover.go).
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
	// StoreNotifies says the bus is the store's database's own (a PGBus
	// on the PostgreSQL database the store writes): the writes of
	// commands then send their notifications themselves, each in its own
	// statement, one round trip fewer (see store.Commands).
	StoreNotifies bool
}

// DefaultLeaseTTL is the lease's life when Cluster.LeaseTTL is zero.
const DefaultLeaseTTL = 10 * time.Second

// LeaseStats count what became of this server's leases.
type LeaseStats struct {
	// Claims are the sessions that needed a server and that this server
	// took up (at its start, or from another server that died or
	// drained).
	Claims int64
	// Failovers are the claims of a lease another server held and let
	// expire: that server died, or could not reach the database.
	Failovers int64
	// Lost are the leases another server took while this one held them.
	Lost int64
	// Held are the leases this server holds now.
	Held int
	// RenewedAt is when the renewals last found every lease held still
	// this server's (or it held none); zero before the first round.
	RenewedAt time.Time
	// TTL is how long a lease lives unrenewed.
	TTL time.Duration
}

type leaseStats struct {
	claims, failovers, lost atomic.Int64
	renewed                 atomic.Int64 // RenewedAt, in Unix nanoseconds
}

// LeaseStats returns the counts of this server's leases; zero without a
// cluster.
func (r *Runner) LeaseStats() LeaseStats {
	s := LeaseStats{
		Claims:    r.leaseStats.claims.Load(),
		Failovers: r.leaseStats.failovers.Load(),
		Lost:      r.leaseStats.lost.Load(),
		Held:      r.leases.count(),
	}
	if n := r.leaseStats.renewed.Load(); n != 0 {
		s.RenewedAt = time.Unix(0, n)
	}
	if r.cluster != nil {
		s.TTL = r.cluster.LeaseTTL
	}
	return s
}

// joinCluster sets the runner up to share its database: the lease
// renewals, the claims of sessions without a server, and the
// notifications that wake them.
func (r *Runner) joinCluster(c Cluster) {
	if c.Holder == "" {
		c.Holder = uuid.NewString()
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	r.cluster = &c
	r.notes.wake = make(chan struct{}, 1)
	if c.Bus != nil {
		r.listening = append(r.listening,
			c.Bus.Listen(cluster.ChannelMail, r.notes.mail),
			c.Bus.Listen(cluster.ChannelLeases, func(payload string) {
				id, needsNone := strings.CutPrefix(payload, cluster.ReleasedPrefix)
				r.remote.holders.forget(id)
				if !needsNone {
					r.notes.leases()
				}
			}))
		c.Bus.OnReconnect(r.notes.reconnected)
		r.followStoredAgents(c.Bus, c.Holder)
	}
	r.goroutines.Go(r.renewLeases)
	r.goroutines.Go(r.failover)
}
