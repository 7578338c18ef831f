// Package store persists sessions and everything that belongs to them:
// turns, mail, deferred calls, watches and run leases.
//
// The interfaces here are what the runner depends on; they speak only in
// the types of package session. SQL is the one implementation, shared by
// every dialect: its queries are written with `?` placeholders and rebound
// for the driver, so a dialect package (sqlite, postgres) only opens
// the connections, names its migrations and classifies its driver's errors.
package store

import (
	"context"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
)

// Store is everything the server keeps in its database.
type Store interface {
	Sessions
	Agents
	Mailbox
	DeferredCalls
	Watches
	Leases
	Commands
	EventLog
	Budgets
	Webhooks
	Schedules
	// Commit writes one change of the runner, with its events, in one
	// transaction; on success each event has its seq.
	Commit(ctx context.Context, c *Change) error
	// CommitAll writes several changes in one transaction, each in a
	// savepoint: one that fails is rolled back alone and reports its
	// error (errs[i] is changes[i]'s), the others commit together.
	CommitAll(ctx context.Context, changes []*Change) []error
	// HelperChild returns the child session a helper call runs, "" when
	// none was recorded.
	HelperChild(ctx context.Context, sessionID, callID string) (string, error)
	// Idempotent returns what a keyed request produced, errs.NotFound
	// when the key is unknown.
	Idempotent(ctx context.Context, owner, key string) (IdempotencyRecord, error)
	// PruneIdempotency forgets the keys recorded before a time.
	PruneIdempotency(ctx context.Context, before time.Time) (int, error)
	// Close releases the database. It is safe to call more than once.
	Close() error
}

// Sessions holds session metadata and the append-only history of turns.
type Sessions interface {
	// CreateSession stores a new session with its first turns (a fork
	// copies the source's turns). meta.TurnCount must equal len(turns) and
	// the turns must be indexed 0, 1, … A duplicate id is errs.Conflict; a
	// parent that does not exist is errs.NotFound (unknown_session).
	CreateSession(ctx context.Context, meta session.Meta, turns []session.Turn) error
	// GetMeta returns one session's metadata, errs.NotFound
	// (unknown_session) when there is none.
	GetMeta(ctx context.Context, id string) (session.Meta, error)
	// LoadSession returns the metadata and every turn, oldest first, as
	// they were at one moment, so the two agree.
	LoadSession(ctx context.Context, id string) (session.Meta, []session.Turn, error)
	// LoadTurns returns the turns from index from up to to (excluded),
	// oldest first: a reader that has the metadata, and so the turn count
	// to bound them with, reads only the turns it shows. Turns are never
	// changed once stored, so they agree with metadata read before.
	// errs.NotFound (unknown_session) when any of them is missing.
	LoadTurns(ctx context.Context, id string, from, to int) ([]session.Turn, error)
	// ListSessions returns one page of sessions, newest first, and the
	// token of the next page ("" on the last page).
	ListSessions(ctx context.Context, f ListFilter) ([]session.Meta, string, error)
	// ListByStatus returns every session in one of the statuses; startup
	// recovery uses it to find runs that were interrupted.
	ListByStatus(ctx context.Context, statuses ...session.Status) ([]session.Meta, error)
	// CountByStatus returns how many sessions there are in each status;
	// statuses without sessions are absent. Metrics read it at every
	// scrape, and readiness probes use it to see the database answer.
	CountByStatus(ctx context.Context) (map[session.Status]int, error)
	// Children returns the direct sub-agent sessions of id, oldest first.
	Children(ctx context.Context, id string) ([]session.Meta, error)
	// UpdateMeta writes the mutable fields of meta: agent, title, status,
	// status reason, usage and updated. The turn count only changes with
	// CommitStep; the pending counts are always computed.
	UpdateMeta(ctx context.Context, meta session.Meta) error
	// CommitStep writes the outcome of one step in a single transaction.
	CommitStep(ctx context.Context, c StepCommit) error
	// DeleteSessions removes sessions with their turns, mail, deferred
	// calls, watches and leases, and the schedules that post to them with
	// their firings. Unknown ids are skipped; it returns how
	// many sessions were deleted. Children are not deleted with their
	// parent: the caller decides (single or cascade).
	DeleteSessions(ctx context.Context, ids ...string) (int, error)
}

// Mailbox holds each session's mail. Delivery order is insertion order.
type Mailbox interface {
	// AddMail stores m; it is durable when AddMail returns, so the sender
	// may be told it was accepted. An unknown session is errs.NotFound
	// (unknown_session), a duplicate id errs.Conflict.
	AddMail(ctx context.Context, m session.Mail) error
	// PendingMail returns the undelivered mail of a session in delivery
	// order (oldest first).
	PendingMail(ctx context.Context, sessionID string) ([]session.Mail, error)
	// ListMail returns a session's mail newest first, only the undelivered
	// ones when pendingOnly is set.
	ListMail(ctx context.Context, sessionID string, pendingOnly bool) ([]session.Mail, error)
	// MarkDelivered marks mail delivered at the given time and returns the
	// ids it newly marked, in the order given. An id that is unknown or
	// already delivered is left out: each mail is marked exactly once, even
	// when several callers race.
	MarkDelivered(ctx context.Context, ids []string, at time.Time) ([]string, error)
	// SessionsWithPendingMail returns the sessions that have undelivered
	// mail.
	SessionsWithPendingMail(ctx context.Context) ([]string, error)
}

// Reasons of deferred-call rows the server answers itself: a call of a
// round with deferred calls that runs on the server (stored so the round
// survives a restart whole), and a call that waited for approval and now
// runs. Sessions' pending counts leave them out.
const (
	ReasonAttached = "attached"
	ReasonApproved = "approved"
)

// DeferredCalls holds tool calls that wait for a client's answer.
type DeferredCalls interface {
	// GetDeferred returns a call by its continuation token, errs.NotFound
	// (unknown_token) when there is none.
	GetDeferred(ctx context.Context, token string) (session.DeferredCall, error)
	// PendingDeferred returns a session's unanswered calls in the order
	// they were stored.
	PendingDeferred(ctx context.Context, sessionID string) ([]session.DeferredCall, error)
	// DeferredRound returns every call of one round of a session, answered
	// or not, in the order they were stored: a run resumes with their
	// results once none is pending.
	DeferredRound(ctx context.Context, sessionID string, round int) ([]session.DeferredCall, error)
	// CompleteDeferred stores the answer to a call and returns the call
	// with its result. A second answer is errs.FailedPrecondition
	// (call_completed); an unknown token errs.NotFound (unknown_token).
	CompleteDeferred(ctx context.Context, token string, result session.ToolResult, at time.Time) (session.DeferredCall, error)
}

// Watches holds watch registrations so they survive restarts.
type Watches interface {
	// PutWatch registers w, or moves the expiry of an existing watch of the
	// same pair. An unknown watcher or target is errs.NotFound.
	PutWatch(ctx context.Context, w session.Watch) error
	// DeleteWatch removes a watch; removing a missing one is not an error.
	DeleteWatch(ctx context.Context, watcherID, targetID string) error
	// ListWatches returns every stored watch, expired or not.
	ListWatches(ctx context.Context) ([]session.Watch, error)
	// WatchersOf returns the watches of one target, expired or not,
	// ordered by watcher.
	WatchersOf(ctx context.Context, targetID string) ([]session.Watch, error)
	// DeleteExpiredWatches removes the watches that expire at or before
	// now and returns how many it removed.
	DeleteExpiredWatches(ctx context.Context, now time.Time) (int, error)
}

// Leases says which server runs a session when several share a database.
// Times come from the caller's clock; servers sharing a database are
// expected to keep their clocks close (well under a lease's ttl).
//
// A lease has an epoch that grows by one each time it is taken anew (it
// was absent, expired, or held by another holder), never when its holder
// takes or renews it while it is live. Writes made under a lease carry
// its epoch (Change.Fence), so a holder that lost the lease, even one that
// does not know it yet, cannot write.
type Leases interface {
	// AcquireLease gives holder the run lease of a session until now+ttl
	// and returns it. It succeeds when the lease is free, expired, or
	// already held by holder; otherwise it is errs.Conflict (lease_held),
	// and GetLease tells who holds it. An unknown session is errs.NotFound
	// (unknown_session).
	AcquireLease(ctx context.Context, sessionID, holder string, now time.Time, ttl time.Duration) (Lease, error)
	// RenewLeases extends, until now+ttl, every lease of leases that
	// holder still holds at its epoch (expired or not: an expired lease
	// nobody took is still its holder's), and returns the sessions of
	// those it no longer holds.
	RenewLeases(ctx context.Context, holder string, leases []Lease, now time.Time, ttl time.Duration) (lost []string, err error)
	// ReleaseLease gives up holder's lease at epoch; it does nothing when
	// holder does not hold it at that epoch.
	ReleaseLease(ctx context.Context, sessionID, holder string, epoch int64) error
	// ExpireLeases ends, as of now, every lease holder holds that is live
	// at now, and returns how many: for a server that starts under the
	// id of one that died, whose leases nobody renews any more. Its
	// sessions need a server again (see Orphans), and taking one's lease
	// again moves its epoch on, so nothing the dead server had under way
	// can still be written.
	ExpireLeases(ctx context.Context, holder string, now time.Time) (int, error)
	// GetLease returns a session's lease, errs.NotFound when it has none.
	GetLease(ctx context.Context, sessionID string) (Lease, error)
	// Orphans returns the sessions that need a server but have none: those
	// running, ready with undelivered mail (which wakes them), or with a
	// command pending (whatever their status: a command is a client's
	// request), whose lease is absent or expired at now, oldest first, at
	// most limit. A session that waits for a client (failed, paused,
	// waiting) needs no server for its mail until the client comes.
	Orphans(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// Lease is one session's run lease.
type Lease struct {
	SessionID string
	Holder    string
	Epoch     int64
	Expires   time.Time
}

// Live reports whether the lease is unexpired at now.
func (l Lease) Live(now time.Time) bool { return now.Before(l.Expires) }

// Commands holds the requests one server accepted for a session another
// server runs: the accepting server adds a row, the holder applies it
// and records the result, which the accepting server reads back.
type Commands interface {
	// AddCommand stores a command; a duplicate id is errs.Conflict.
	AddCommand(ctx context.Context, c Command) error
	// PendingCommands returns the unfinished commands for sessions whose
	// lease holder holds (expired or not), oldest first.
	PendingCommands(ctx context.Context, holder string) ([]Command, error)
	// HasPendingCommands reports whether a session has unfinished
	// commands, whoever holds it.
	HasPendingCommands(ctx context.Context, sessionID string) (bool, error)
	// FinishCommand records a command's result, once: false when it was
	// already finished. Its body is cleared (it may hold params, which
	// the store keeps no longer than needed).
	FinishCommand(ctx context.Context, id, result string, at time.Time) (bool, error)
	// FinishCommandAndNotify is FinishCommand that, in the same
	// statement, sends won when it recorded the result and lost when the
	// command was finished already; only on a store that SendsNotifications.
	FinishCommandAndNotify(ctx context.Context, id, result string, at time.Time, won, lost Notification) (bool, error)
	// SendsNotifications reports whether the store's database sends the
	// notifications a write carries (Command.Wake, FinishCommandAndNotify)
	// as the write commits, in its own statement: PostgreSQL's pg_notify,
	// heard by the servers listening on that database, one round trip
	// fewer than a write and then a notification.
	SendsNotifications() bool
	// GetCommand returns a command, errs.NotFound (unknown_command) when
	// there is none.
	GetCommand(ctx context.Context, id string) (Command, error)
	// PruneCommands removes the commands created before a time that are
	// finished or whose session is gone, and returns how many it removed.
	// A pending command of a session that exists is kept: it is applied
	// when a server next holds the session.
	PruneCommands(ctx context.Context, before time.Time) (int, error)
}

// Command is a request for a session that another server runs. Body and
// Result are JSON documents of the runner; the store does not read them.
type Command struct {
	ID        string
	SessionID string
	Owner     string
	Kind      string
	Body      string
	Created   time.Time
	// Result is "" and Done zero until the command is finished.
	Result string
	Done   time.Time
	// Wake, when set, is sent as AddCommand stores the command, by a store
	// that SendsNotifications; it is not stored.
	Wake Notification
}

// Notification is a notification on a channel of the database's
// servers (see cluster.Bus), sent by the write that carries it.
type Notification struct {
	Channel, Payload string
}

// ListFilter selects sessions for ListSessions. Zero fields select all.
type ListFilter struct {
	// Owner restricts to one owner; "" lists every owner's sessions.
	Owner  string
	Agent  string
	Status session.Status
	// ParentID lists the children of one session.
	ParentID string
	// RootsOnly leaves out sub-agent sessions.
	RootsOnly bool
	// Query keeps sessions whose title contains it, ignoring case (ASCII
	// letters only on SQLite).
	Query string
	// PageSize is the most sessions to return: DefaultPageSize when zero
	// or less, at most MaxPageSize.
	PageSize int
	// PageToken continues a listing where the page that returned it ended;
	// it is only meaningful with the same filter.
	PageToken string
}

// Page sizes for ListSessions.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// StepCommit is the outcome of one step of a run, written atomically so a
// crash never leaves half of it behind.
type StepCommit struct {
	// Meta is the session's metadata after the step. Its TurnCount counts
	// NewTurns, which must be its last len(NewTurns) turns: the commit
	// fails with errs.Conflict (turn_conflict) unless the stored session
	// has exactly TurnCount-len(NewTurns) turns, which stops two writers
	// from both appending.
	Meta     session.Meta
	NewTurns []session.Turn
	// DeliveredMail lists mail folded into the new turns; it is marked
	// delivered at Meta.Updated. The commit fails if any of it is unknown
	// to the session (unknown_mail) or was already delivered
	// (mail_delivered).
	DeliveredMail []string
	// NewDeferred are the calls of this step that wait for a client.
	NewDeferred []session.DeferredCall
}
