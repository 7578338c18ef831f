// Package placement says where a session lives. The kernel (the runner)
// asks a Placement before it loads a session (Hold: take it, with the
// fence its writes carry), before it applies an operation (Run: here,
// or on the server that holds the session), and hears from it that a
// session was taken over (Kernel.Lost). It knows nothing else of other
// servers.
//
// Solo is the placement of a server alone on its database (SQLite): it
// holds every session and never forwards. placement/leased is the
// placement of several servers on one PostgreSQL database: run leases,
// failover, the forwarding of operations to a session's holder.
package placement

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// Placement is where the kernel's sessions live.
type Placement interface {
	// Start begins the placement's work for the kernel k, until ctx
	// ends. runner.New calls it once.
	Start(ctx context.Context, k Kernel)
	// Recover takes up, at start, what this server is to run of the
	// sessions that were live when servers last stopped.
	Recover(ctx context.Context) error

	// Hold takes session id for this server, before its actor reads it
	// (or once a session it creates is stored): errs.Conflict
	// (lease_held) when another server holds it.
	Hold(ctx context.Context, id string) (*Hold, error)
	// Loaded says the session of h is loaded under it: what other
	// servers left for it is this server's to do now.
	Loaded(h *Hold)
	// Release gives up the hold of a session this server unloaded.
	Release(id string)
	// Deleted says the session of h is deleted, its hold with it.
	Deleted(h *Hold)
	// Lost says the kernel stopped the session of h, which another
	// server took over (h is nil for a session lost before it was held).
	Lost(id string, h *Hold)
	// Moved is the error that tells a client where session id runs
	// now that this server lost it: errs.Conflict (lease_held).
	Moved(ctx context.Context, id string) error

	// Elsewhere reports whether another server holds session id, which
	// this server has not loaded: a hint, for reads from the store.
	Elsewhere(ctx context.Context, id string) bool
	// Run runs local when this server holds the session of cmd or can
	// take it, and otherwise has the session's holder apply cmd and
	// decodes its answer into out; forwarded says which.
	Run(ctx context.Context, cmd Command, local func() error, out any) (forwarded bool, err error)
	// Holding runs fn while this server holds session id, for work
	// beside the session's actor that must happen on its holder.
	Holding(ctx context.Context, id string, fn func() error) error
	// MailStored says a write stored mail, for sessions this server may
	// not hold: their holders take it in.
	MailStored(mail []session.Mail)
	// StoredAgentsChanged tells the other servers a stored agent changed.
	StoredAgentsChanged(ctx context.Context) error

	// Drain begins a drain: the sessions with no run are handed over
	// (Kernel.HandOverIdle), and no session is claimed any more.
	Drain(ctx context.Context)
	// HandOver gives up the hold h of a session the kernel let go as
	// the server drains; needs says it needs a server now.
	HandOver(ctx context.Context, h *Hold, needs bool)
	// Drained ends a drain once no run is left: every hold is given up.
	Drained(ctx context.Context)
	// Stop stops hearing the other servers; Close calls it first.
	Stop()
	// Close gives up what is still held, once the kernel's goroutines
	// are done: the other servers take it up at once.
	Close(ctx context.Context)
	// Prune forgets what the placement keeps of requests long past;
	// the kernel calls it as it trims its own logs.
	Prune(ctx context.Context, now time.Time)
}

// Hold is this server's hold on a session, from before its actor reads
// it until the actor goes.
type Hold struct {
	// Fence is carried by every write of the session, so that the store
	// refuses it once another server took the session over; nil when no
	// other server can.
	Fence *store.Fence
	// TakeUp says the session may come from another server: what it
	// was doing is taken up as at a restart once it is loaded, and what
	// the kernel keeps beside it (the watches of it) is read again.
	TakeUp bool
}

// Under reports whether h is the hold whose fence has epoch.
func (h *Hold) Under(epoch int64) bool {
	return h != nil && h.Fence != nil && h.Fence.Epoch == epoch
}

// Command is an operation on a session, as Run forwards it.
type Command struct {
	SessionID, Owner string
	// Kind names the operation; Body is what it applies, encoded by
	// EncodeBody when it is forwarded.
	Kind string
	Body any
}

// EncodeBody is the body of a command as it crosses servers; the
// holder decodes it with encoding/json.
func EncodeBody(body any) (string, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Kernel is what a placement asks of the kernel.
type Kernel interface {
	// Go runs fn on a goroutine the kernel's Close waits for; once it
	// closes, fn does not run.
	Go(fn func())
	// Live reports whether session id is loaded here.
	Live(id string) bool
	// LiveIDs lists the sessions loaded here.
	LiveIDs() []string
	// Load loads session id here, taking its hold.
	Load(ctx context.Context, id string) error
	// TakeUp loads session id, which needs a server, and takes up what
	// it was doing as at a restart; taken says this server loaded it
	// (err may still tell that the take-up failed).
	TakeUp(ctx context.Context, id string) (taken bool, err error)
	// RecoverAll is the restart of a server that holds every session:
	// the watches, the runs that were active, the mail that waits.
	RecoverAll(ctx context.Context) error
	// Pin runs fn while session id stays loaded here.
	Pin(ctx context.Context, id string, fn func() error) error
	// Apply applies a command another server forwarded, and returns its
	// answer.
	Apply(ctx context.Context, c store.Command) (any, error)
	// Lost tells the session of f that another server took it over:
	// it stops here, if it still holds it under f. false says the
	// session is not loaded here.
	Lost(f store.Fence, cause error) bool
	// LetGo unloads session id, whose hold is being given up, and
	// reports whether it needs a server now.
	LetGo(ctx context.Context, id string) (needs bool)
	// StopLoading refuses to load sessions from now on: their holds
	// are given up.
	StopLoading()
	// HandOverIdle hands over each loaded session with no run, and the
	// others as their runs stop (see Placement.HandOver).
	HandOverIdle(ctx context.Context)
	// MailArrived has session id, loaded here, take in the mail another
	// server stored for it.
	MailArrived(id string)
	// ReloadStoredAgents reads the stored agents again.
	ReloadStoredAgents(ctx context.Context)
	// FollowOthers keeps, until the kernel closes, the steps in flight
	// of the sessions other servers run, for reads here.
	FollowOthers()
}
