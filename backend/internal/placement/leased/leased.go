// Package leased is the placement of several servers on one PostgreSQL
// database (DESIGN.md §6a).
//
// A session's live state (its actor) lives on the one server that holds
// its run lease: a server loads a session only once it took the lease,
// renews the leases of every session it has loaded, and writes every
// change of a session under its lease (the hold's fence), so a server
// that lost a lease cannot write and stops what it did for the session
// (holds.go). Sessions that need a server and have none (their holder
// died, or drained) are claimed by any server, which recovers them as a
// restart would (failover.go). A request for a session another server
// holds becomes a command its holder applies (commands.go).
package leased

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/placement"
	"github.com/agents-os/agents/backend/internal/store"
)

// Options configure a Placement.
type Options struct {
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
	// Store is the database the servers share.
	Store store.Store
	Log   *slog.Logger
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// DefaultLeaseTTL is the lease's life when Options.LeaseTTL is zero.
const DefaultLeaseTTL = 10 * time.Second

// Placement places sessions under run leases on a shared database.
type Placement struct {
	opts  Options
	store store.Store
	log   *slog.Logger
	now   func() time.Time
	// k is the kernel, and ctx its life (see Start).
	k   placement.Kernel
	ctx context.Context

	// leases are the leases this server holds (see holds.go), notes the
	// other servers' notifications not yet acted on, and stats the
	// counts Stats reports.
	leases leaseBook
	notes  notes
	stats  leaseStats
	// remote holds the commands that cross servers.
	remote remote
	// listening stops the bus listeners.
	listening []func()
	// draining stops the claims of sessions without a server, and
	// closing too (see claimBatch).
	draining, closing atomic.Bool
	// claiming makes the looks for sessions without a server one at a
	// time: the recovery at start and the failover loop may look at once,
	// find the same session, and both take it up.
	claiming sync.Mutex
}

var _ placement.Placement = (*Placement)(nil)

// New returns the placement of a server that shares its database.
func New(opts Options) *Placement {
	if opts.Holder == "" {
		opts.Holder = uuid.NewString()
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	now := opts.Now
	return &Placement{
		opts:  opts,
		store: opts.Store,
		log:   opts.Log,
		now:   func() time.Time { return now().UTC() },
	}
}

// Holder is this server's id.
func (p *Placement) Holder() string { return p.opts.Holder }

// Start listens on the bus and starts the lease renewals, the claims of
// sessions without a server, the applier of commands and the follower
// of other servers' steps in flight. Without a bus, commands are found
// and their ends read back by polling alone.
func (p *Placement) Start(ctx context.Context, k placement.Kernel) {
	p.k, p.ctx = k, ctx
	p.notes.wake = make(chan struct{}, 1)
	p.remote.waiters = map[string]chan string{}
	p.remote.busy = map[string]bool{}
	p.remote.again = map[string]bool{}
	p.remote.kick = make(chan struct{}, 1)
	if bus := p.opts.Bus; bus != nil {
		p.listening = append(p.listening,
			bus.Listen(cluster.ChannelMail, p.notes.mail),
			bus.Listen(cluster.ChannelLeases, func(payload string) {
				id, needsNone := strings.CutPrefix(payload, cluster.ReleasedPrefix)
				p.remote.holders.forget(id)
				if !needsNone {
					p.notes.leases()
				}
			}))
		bus.OnReconnect(p.notes.reconnected)
		p.followStoredAgents(bus)
		p.listening = append(p.listening,
			bus.Listen(cluster.ChannelCommands, func(payload string) {
				holder, cmd, _ := strings.Cut(payload, "\n")
				if holder == p.opts.Holder {
					p.applyWoken(cmd)
				}
			}),
			bus.Listen(cluster.ChannelCommandDone, p.remote.done))
		bus.OnReconnect(p.kickApplier)
	}
	k.Go(p.renewLeases)
	k.Go(p.failover)
	k.Go(p.applyLoop)
	k.Go(k.FollowOthers)
}

// Stop stops the bus listeners.
func (p *Placement) Stop() {
	p.closing.Store(true)
	for _, stop := range p.listening {
		stop()
	}
}

// Recover takes up, at start, the sessions that need a server and have
// none, as a server does when another dies (see failover.go), and never
// a session another live server holds. Leases under this server's own
// id are not another's: a server id belongs to one live server, so they
// are a dead predecessor's, which nobody renews. They are ended first,
// and their sessions claimed with the others, rather than left to
// expire.
func (p *Placement) Recover(ctx context.Context) error {
	n, err := p.store.ExpireLeases(ctx, p.opts.Holder, p.now())
	if err != nil {
		return err
	}
	if n > 0 {
		p.log.Info("ended the leases a previous server under this id left", "server_id", p.opts.Holder, "leases", n)
	}
	return p.claimAll(ctx)
}

// Prune forgets the commands finished (or abandoned) commandRetention
// before now.
func (p *Placement) Prune(ctx context.Context, now time.Time) {
	if _, err := p.store.PruneCommands(ctx, now.Add(-commandRetention)); err != nil && ctx.Err() == nil {
		p.log.Warn("prune commands", "err", err)
	}
}

// StoredAgentsChanged tells the other servers that a stored agent
// changed, so that they read the stored agents again.
func (p *Placement) StoredAgentsChanged(ctx context.Context) error {
	if p.opts.Bus == nil {
		return nil
	}
	return p.opts.Bus.Notify(ctx, cluster.ChannelAgents, p.opts.Holder)
}

// followStoredAgents reads the stored agents again whenever another
// server says it changed one, and after the bus reconnects (a
// notification may have been lost meanwhile). Reads coalesce: a burst of
// changes is one read, which sees them all.
func (p *Placement) followStoredAgents(bus cluster.Bus) {
	again := make(chan struct{}, 1)
	poke := func() {
		select {
		case again <- struct{}{}:
		default:
		}
	}
	p.listening = append(p.listening, bus.Listen(cluster.ChannelAgents, func(from string) {
		if from != p.opts.Holder {
			poke()
		}
	}))
	bus.OnReconnect(poke)
	p.k.Go(func() {
		for {
			select {
			case <-p.ctx.Done():
				return
			case <-again:
				p.k.ReloadStoredAgents(p.ctx)
			}
		}
	})
}

// Stats count what became of this server's leases.
type Stats struct {
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

// Stats returns the counts of this server's leases.
func (p *Placement) Stats() Stats {
	s := Stats{
		Claims:    p.stats.claims.Load(),
		Failovers: p.stats.failovers.Load(),
		Lost:      p.stats.lost.Load(),
		Held:      p.leases.count(),
		TTL:       p.opts.LeaseTTL,
	}
	if n := p.stats.renewed.Load(); n != 0 {
		s.RenewedAt = time.Unix(0, n)
	}
	return s
}
