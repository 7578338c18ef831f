package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/placement/leased"
	"github.com/agents-os/agents/backend/internal/runner"
	"github.com/agents-os/agents/backend/internal/server"
	"github.com/agents-os/agents/backend/internal/store"
)

// clusterOptions configure a server that shares a PostgreSQL database
// with other servers.
type clusterOptions struct {
	// serverID names this server in its leases and notifications;
	// empty takes the one kept in the data directory (see serverid.go).
	serverID string
	// claimDataDir has the process claim its data directory, which
	// keeps its default id: serve does. Without the claim, the default
	// is an id for this process alone.
	claimDataDir bool
	// leaseTTL is how long a run lease lives unrenewed; zero is the
	// runner's default.
	leaseTTL time.Duration
}

// clusterFeed is what a server of several runs beside its runner: the
// notification bus, the sequencer that publishes every server's logged
// events to this server's hub, and the relay of live deltas.
type clusterFeed struct {
	id    string
	ttl   time.Duration
	bus   *cluster.PGBus
	seq   *cluster.Sequencer
	relay *cluster.Relay
	// place is the runner's placement, set by configure.
	place *leased.Placement
}

// startCluster connects this server to the others on the PostgreSQL
// database at dsn. hub must already be at the log's newest seq. dataDir,
// when the process claimed it, keeps the default id.
func startCluster(ctx context.Context, dsn, dataDir string, hub *events.Hub, log store.EventLog, opts clusterOptions, lg *slog.Logger) (*clusterFeed, error) {
	id := opts.serverID
	switch {
	case id != "":
	case dataDir != "":
		var err error
		if id, err = storedServerID(dataDir); err != nil {
			return nil, err
		}
	default:
		id = oneOffServerID()
	}
	if err := cluster.ValidServerID(id); err != nil {
		return nil, fmt.Errorf("--server-id: %w", err)
	}
	if opts.leaseTTL < 0 {
		return nil, fmt.Errorf("--lease-ttl %s: it must be positive", opts.leaseTTL)
	}
	bus, err := cluster.NewPGBus(ctx, dsn, lg)
	if err != nil {
		return nil, err
	}
	relay, err := cluster.NewRelay(hub, bus, id, lg)
	if err != nil {
		bus.Close()
		return nil, err
	}
	f := &clusterFeed{id: id, ttl: opts.leaseTTL, bus: bus, relay: relay}
	f.seq = cluster.NewSequencer(hub, log, bus, cluster.SequencerOptions{Log: lg})
	lg.Info("sharing the database with other servers", "server_id", id)
	return f, nil
}

// configure makes the runner one server of several, its sessions
// placed under leases on the database its store writes.
func (f *clusterFeed) configure(o *runner.Options) {
	o.Publish = f.seq.Committed
	o.RelayDelta = f.relay.Send
	f.place = leased.New(leased.Options{
		Holder: f.id, LeaseTTL: f.ttl, Bus: f.bus, StoreNotifies: true,
		Store: o.Store, Log: o.Log, Now: o.Now,
	})
	o.Placement = f.place
}

// close stops the feed; the runner that published through it is closed
// first.
func (f *clusterFeed) close() {
	f.relay.Close()
	f.seq.Close()
	f.bus.Close()
}

// leaseReport gives /readyz and /metrics the server's leases.
type leaseReport struct{ p *leased.Placement }

func (l leaseReport) LeaseStats() server.LeaseStats {
	s := l.p.Stats()
	return server.LeaseStats{
		Held: s.Held, Claims: uint64(s.Claims), Failovers: uint64(s.Failovers), Lost: uint64(s.Lost),
		RenewedAt: s.RenewedAt, TTL: s.TTL,
	}
}
