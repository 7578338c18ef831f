package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agents-os/agents/backend/internal/cluster"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// Commands cross servers. With several servers on one database, a
// session's live state is on the server that holds its lease; any server
// accepts any request. A request for a session another server holds
// becomes a command row (its operation, the request as JSON, the owner
// it acts for) and a notification that wakes the holder. The holder
// applies it with the operation's own local code, records the result
// once (FinishCommand) and notifies its id; the accepting server, which
// waited for that, answers with the real outcome.
//
// Exactly once: the holder finishes a command only after it applied it.
// A holder that dies in between leaves it pending, and the next holder
// applies it again, so every command is either harmless to repeat
// (cancel, pause, resume, rename, delete, watch) or carries an idempotency key:
// the client's, or "cmd:"+id when it gave none. The key's record is in
// the shared store, written with what the first apply did, so the
// second apply answers from it. A fork, which takes no key, makes its
// copy under an id drawn from the command's, which a second apply finds
// taken.

const (
	// CommandTimeout bounds how long an accepting server waits for the
	// holder's answer.
	CommandTimeout = 30 * time.Second
	// commandPoll is how often a waiting server reads the command back,
	// in case the notification of its end was lost, and looks at the
	// session's lease.
	commandPoll = 500 * time.Millisecond
	// applyEvery is how often the holder looks for commands it was not
	// woken for.
	applyEvery = 2 * time.Second
	// commandRetention is how long finished (and abandoned) commands
	// are kept.
	commandRetention = time.Hour
)

// remote is the runner's side of the commands: the waiters of commands
// this server forwarded, and the sessions whose commands it applies.
type remote struct {
	mu sync.Mutex
	// waiters are signalled when a command's end is notified, with its
	// answer when the notification carries it ("" when it does not).
	waiters map[string]chan string
	// busy are the sessions whose commands are being applied, again those
	// that got more meanwhile.
	busy, again map[string]bool
	// ended counts the claims that ended: a list of pending commands read
	// while it stayed the same cannot hold a command a claim finished.
	ended uint64
	kick  chan struct{}

	progress remoteProgress
	holders  remoteHolders
}

// remoteHolders remembers, for a moment, the leases other servers were
// found holding, so that a session's requests to a server that does not
// hold it (every other one, behind a proxy that spreads them) do not each
// read its lease. A remembered lease is a hint, as the read one is: a
// read of a session held elsewhere is answered from the store either
// way, and a command sent to a holder that let the session go meanwhile
// is found by the next chase (commandPoll). A release the servers are
// told of (ChannelLeases) is forgotten at once.
type remoteHolders struct {
	mu     sync.Mutex
	leases map[string]rememberedLease
}

type rememberedLease struct {
	lease store.Lease
	until time.Time
}

// remoteHoldersFor is how long a lease held elsewhere is remembered, at
// most (never past its expiry).
const remoteHoldersFor = time.Second

// maxRemoteHolders bounds the leases remembered; past it, the ones no
// longer worth keeping are swept.
const maxRemoteHolders = 4096

func (h *remoteHolders) get(id string, now time.Time) (store.Lease, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rl, ok := h.leases[id]
	if !ok || !now.Before(rl.until) {
		return store.Lease{}, false
	}
	return rl.lease, true
}

func (h *remoteHolders) remember(l store.Lease, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.leases == nil {
		h.leases = map[string]rememberedLease{}
	}
	if len(h.leases) >= maxRemoteHolders {
		for id, rl := range h.leases {
			if !now.Before(rl.until) {
				delete(h.leases, id)
			}
		}
		if len(h.leases) >= maxRemoteHolders {
			clear(h.leases)
		}
	}
	until := now.Add(remoteHoldersFor)
	if l.Expires.Before(until) {
		until = l.Expires
	}
	h.leases[l.SessionID] = rememberedLease{lease: l, until: until}
}

func (h *remoteHolders) forget(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.leases, id)
}

// startCluster listens on the bus and starts the applier and the
// follower of other servers' progress. Called by New, after joinCluster.
// Without a bus, commands are found and their ends read back by polling
// alone.
func (r *Runner) startCluster() {
	c := r.cluster
	r.remote.waiters = map[string]chan string{}
	r.remote.busy = map[string]bool{}
	r.remote.again = map[string]bool{}
	r.remote.kick = make(chan struct{}, 1)
	if c.Bus != nil {
		r.listening = append(r.listening,
			c.Bus.Listen(cluster.ChannelCommands, func(payload string) {
				holder, cmd, _ := strings.Cut(payload, "\n")
				if holder == c.Holder {
					r.applyWoken(cmd)
				}
			}),
			c.Bus.Listen(cluster.ChannelCommandDone, r.remote.done))
		c.Bus.OnReconnect(r.kickApplier)
	}
	r.goroutines.Go(r.applyLoop)
	r.goroutines.Go(r.followProgress)
}

// done takes a notification of a command's end: its id, then, after a
// space, its answer when the answer fits the notification (finishCommand).
func (rm *remote) done(payload string) {
	id, result, _ := strings.Cut(payload, " ")
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if ch, ok := rm.waiters[id]; ok {
		select {
		case ch <- result:
		default:
		}
	}
}

func (rm *remote) await(id string) <-chan string {
	ch := make(chan string, 1)
	rm.mu.Lock()
	rm.waiters[id] = ch
	rm.mu.Unlock()
	return ch
}

func (rm *remote) forget(id string) {
	rm.mu.Lock()
	delete(rm.waiters, id)
	rm.mu.Unlock()
}

// leaseHeld reports whether err says another server holds the session.
func leaseHeld(err error) bool { return errs.CodeOf(err) == errs.CodeLeaseHeld }

// runsElsewhere reports whether another server holds the session's live
// lease, so that a request goes to it without trying to take the
// session first. It is a hint: a load that finds the lease taken fails
// with lease_held, which forwards too.
func (r *Runner) runsElsewhere(ctx context.Context, id string) bool {
	_, elsewhere := r.holderElsewhere(ctx, id)
	return elsewhere
}

// holderElsewhere is runsElsewhere, with the lease it read.
func (r *Runner) holderElsewhere(ctx context.Context, id string) (store.Lease, bool) {
	c := r.cluster
	if c == nil {
		return store.Lease{}, false
	}
	r.mu.Lock()
	_, live := r.live[id]
	r.mu.Unlock()
	if live {
		return store.Lease{}, false
	}
	now := r.now()
	if l, ok := r.remote.holders.get(id, now); ok {
		return l, true
	}
	l, err := r.store.GetLease(ctx, id)
	if err != nil || l.Holder == c.Holder || !l.Live(now) {
		r.remote.holders.forget(id)
		return l, false
	}
	r.remote.holders.remember(l, now)
	return l, true
}

// route runs local when this server holds the session or can take it,
// and otherwise forwards the command (kind, body) to the holder and
// decodes its answer into out; forwarded says which (see onHolder).
func (r *Runner) route(ctx context.Context, id, owner, kind string, body, out any, local func() error) (forwarded bool, err error) {
	if r.cluster == nil {
		return false, local()
	}
	lease, elsewhere := r.holderElsewhere(ctx, id)
	if !elsewhere {
		if !r.behindCommands(ctx, id) {
			// A write refused for a lease this server lost wrote nothing:
			// the new holder takes the request.
			if err := local(); !leaseHeld(err) && errs.CodeOf(err) != errs.CodeLeaseLost {
				return false, err
			}
		}
		lease = store.Lease{}
	}
	return true, r.forward(ctx, id, owner, kind, body, out, lease)
}

// behindCommands reports whether a request for a session this server
// has not loaded must wait behind commands forwarded for it that no
// server applied yet (their holder died, and the server that forwarded
// them too): it then becomes a command itself, and whoever takes the
// session applies them all in the order they came. A loaded session's
// commands are this server's to apply, as they come.
func (r *Runner) behindCommands(ctx context.Context, id string) bool {
	r.mu.Lock()
	_, live := r.live[id]
	r.mu.Unlock()
	if live {
		return false
	}
	pending, err := r.store.HasPendingCommands(ctx, id)
	return err == nil && pending
}

// forward stores a command for the session's holder, wakes it and waits
// for the answer, bounded by CommandTimeout. When the holder's lease
// ends meanwhile, this server takes the session, and with it the
// command, itself. lease, when its Holder is set, is the session's lease
// as just read: the first wake goes to its holder without reading it
// again (a holder that lost it meanwhile leaves the command to the
// next chase).
func (r *Runner) forward(ctx context.Context, id, owner, kind string, body, out any, lease store.Lease) error {
	b, err := encodeBody(body)
	if err != nil {
		return fmt.Errorf("encode %s command: %w", kind, err)
	}
	cmd := store.Command{ID: uuid.NewString(), SessionID: id, Owner: owner, Kind: kind, Body: b, Created: r.now()}
	done := r.remote.await(cmd.ID)
	defer r.remote.forget(cmd.ID)
	wake := lease.Holder != "" && lease.Live(r.now())
	if wake && r.storeNotifies() {
		// The insert wakes the holder itself, as it commits.
		cmd.Wake = store.Notification{Channel: cluster.ChannelCommands, Payload: wakePayload(lease.Holder, cmd)}
	}
	if err := r.store.AddCommand(ctx, cmd); err != nil && (errs.KindOf(err) != errs.KindUnavailable || !r.commandStored(ctx, cmd.ID)) {
		return err
	}
	if wake {
		if cmd.Wake.Channel == "" {
			r.notifyHolder(ctx, id, lease.Holder, wakePayload(lease.Holder, cmd))
		}
	} else if err := r.chase(ctx, cmd); err != nil {
		return err
	}
	timeout := time.NewTimer(CommandTimeout)
	defer timeout.Stop()
	poll := time.NewTicker(commandPoll)
	defer poll.Stop()
	for {
		chase := false
		select {
		case <-ctx.Done():
			// As a local call left queued: the command is still applied.
			return ctx.Err()
		case <-r.ctx.Done():
			return errClosing
		case <-timeout.C:
			return r.abandon(ctx, cmd, out)
		case result := <-done:
			if result != "" {
				return decodeResult(result, out)
			}
		case <-poll.C:
			chase = true
		}
		got, err := r.store.GetCommand(ctx, cmd.ID)
		switch {
		case errs.KindOf(err) == errs.KindUnavailable:
			continue // the store is away for a moment: the next poll reads again
		case err != nil:
			return err
		case !got.Done.IsZero():
			return decodeResult(got.Result, out)
		}
		if chase {
			if err := r.chase(ctx, cmd); err != nil && errs.KindOf(err) != errs.KindUnavailable {
				return err
			}
		}
	}
}

// commandStored reports whether a command whose insert failed is stored
// after all: the connection was lost while the database committed it,
// so the error told nothing, and the holder applies it. Its id is new
// with the insert, so finding it means it landed.
func (r *Runner) commandStored(ctx context.Context, id string) bool {
	_, err := r.store.GetCommand(ctx, id)
	return err == nil
}

// chase makes sure somebody applies the command: it wakes the holder, or,
// when the lease is free or expired, takes the session here, which
// applies the command with the others pending for it.
func (r *Runner) chase(ctx context.Context, cmd store.Command) error {
	c := r.cluster
	l, err := r.store.GetLease(ctx, cmd.SessionID)
	switch {
	case err == nil && l.Live(r.now()) && l.Holder != c.Holder:
		r.remote.holders.remember(l, r.now())
		r.wakeHolder(ctx, cmd.SessionID, l.Holder)
		return nil
	case err != nil && errs.KindOf(err) != errs.KindNotFound:
		return err
	}
	r.remote.holders.forget(cmd.SessionID)
	// Free, expired or already ours: take it (its load applies what is
	// pending), or learn who did.
	err = r.withSession(ctx, cmd.SessionID, func(*actor) error { return nil })
	switch {
	case err == nil:
		r.kickApplier()
	case leaseHeld(err):
		// Another server took it first: wake it.
		if l, err := r.store.GetLease(ctx, cmd.SessionID); err == nil {
			r.wakeHolder(ctx, cmd.SessionID, l.Holder)
		}
	case errs.KindOf(err) == errs.KindNotFound:
		// The session is gone, and nobody will apply its commands: this
		// one's answer is that, unless its holder answered first.
		if _, ferr := r.finishCommand(ctx, cmd.ID, encodeResult(nil, err)); ferr != nil {
			return ferr
		}
	default:
		return err
	}
	return nil
}

// abandon gives up waiting for a command: it is finished with a timeout,
// so a holder that has not begun it leaves it alone, unless the holder
// finished it first, whose answer is then the answer.
func (r *Runner) abandon(ctx context.Context, cmd store.Command, out any) error {
	timedOut := errs.Unavailable(errs.CodeCommandTimeout,
		"the server running session %s did not answer within %s; the request may still take effect", cmd.SessionID, CommandTimeout)
	won, err := r.store.FinishCommand(ctx, cmd.ID, encodeResult(nil, timedOut), r.now())
	if err != nil {
		return err
	}
	if won {
		return timedOut
	}
	got, err := r.store.GetCommand(ctx, cmd.ID)
	if err != nil {
		return err
	}
	return decodeResult(got.Result, out)
}

// wakeHolder tells the holder of a session it has commands to apply.
func (r *Runner) wakeHolder(ctx context.Context, id, holder string) {
	r.notifyHolder(ctx, id, holder, holder)
}

// wakePayload is the notification that tells the holder of a session of
// a command just stored, with the command when it fits: the holder
// applies it without reading it back (see applyWoken).
func wakePayload(holder string, cmd store.Command) string {
	b, err := json.Marshal(wokenCommand{ID: cmd.ID, SessionID: cmd.SessionID, Owner: cmd.Owner, Kind: cmd.Kind, Body: cmd.Body, Created: cmd.Created})
	if err != nil || len(holder)+1+len(b) >= cluster.MaxPayload {
		return holder
	}
	return holder + "\n" + string(b)
}

// storeNotifies says the store sends the notifications of command
// writes itself, in their statements, to the servers the bus reaches.
func (r *Runner) storeNotifies() bool {
	return r.cluster.StoreNotifies && r.cluster.Bus != nil && r.store.SendsNotifications()
}

func (r *Runner) notifyHolder(ctx context.Context, id, holder, payload string) {
	if r.cluster.Bus == nil {
		return // it finds them at its next look
	}
	if err := r.cluster.Bus.Notify(ctx, cluster.ChannelCommands, payload); err != nil {
		r.log.Warn("wake the holder of a session", "session", id, "holder", holder, "err", err)
	}
}

// wokenCommand is a command as a notification carries it.
type wokenCommand struct {
	ID        string    `json:"id"`
	SessionID string    `json:"session_id"`
	Owner     string    `json:"owner"`
	Kind      string    `json:"kind"`
	Body      string    `json:"body"`
	Created   time.Time `json:"created"`
}

// applyWoken takes a notification for this server: the command it
// carries ("" when it carries none) is applied at once, unless the
// session's commands are being applied already, which then look again.
// Applying a command twice is harmless (see the top of this file), so
// one a list found first and applied meanwhile is answered from what
// that did. Anything else is left to the applier's list.
func (r *Runner) applyWoken(payload string) {
	var w wokenCommand
	if payload == "" || json.Unmarshal([]byte(payload), &w) != nil || w.ID == "" || w.SessionID == "" {
		r.kickApplier()
		return
	}
	if claimed, _ := r.remote.claim(w.SessionID, 0); !claimed {
		return // the claim under way looks again when it ends
	}
	cmd := store.Command{ID: w.ID, SessionID: w.SessionID, Owner: w.Owner, Kind: w.Kind, Body: w.Body, Created: w.Created}
	// Refused once the runner closes: the command waits in the store for
	// the session's next holder.
	r.goroutines.Go(func() { r.applySession(w.SessionID, []store.Command{cmd}, true) })
}

// finishCommand records a command's result and tells the server waiting
// for it that it is finished. When this finish recorded the answer (won)
// and it fits, the notification carries it, so the waiting server answers
// without reading the command back; otherwise (the command was abandoned
// first, or the answer is long) it carries the id alone. Where the store
// sends notifications, the finish sends it, in the same statement.
func (r *Runner) finishCommand(ctx context.Context, id, result string) (bool, error) {
	carried := id
	if len(id)+1+len(result) < cluster.MaxPayload {
		carried = id + " " + result
	}
	if r.storeNotifies() {
		return r.store.FinishCommandAndNotify(ctx, id, result, r.now(),
			store.Notification{Channel: cluster.ChannelCommandDone, Payload: carried},
			store.Notification{Channel: cluster.ChannelCommandDone, Payload: id})
	}
	won, err := r.store.FinishCommand(ctx, id, result, r.now())
	if err != nil || r.cluster.Bus == nil {
		return won, err // without a bus, it reads the command back at its next poll
	}
	payload := id
	if won {
		payload = carried
	}
	if err := r.cluster.Bus.Notify(ctx, cluster.ChannelCommandDone, payload); err != nil {
		r.log.Warn("notify a command's end", "command", id, "err", err)
	}
	return won, nil
}

// commandResult is a command's answer as stored: the operation's value,
// or its error with the kind, code and message a local call returns.
type commandResult struct {
	Value json.RawMessage `json:"value,omitempty"`
	Error *commandError   `json:"error,omitempty"`
}

type commandError struct {
	Kind     errs.Kind         `json:"kind"`
	Code     string            `json:"code,omitempty"`
	Message  string            `json:"message"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func encodeResult(value any, err error) string {
	var res commandResult
	if err != nil {
		if e, ok := errs.As(err); ok {
			res.Error = &commandError{Kind: e.Kind, Code: e.Code, Message: e.Message, Metadata: e.Metadata}
		} else {
			// Clients see "internal error"; the accepting server's log
			// gets the holder's text.
			res.Error = &commandError{Kind: errs.KindInternal, Code: errs.CodeInternal, Message: err.Error()}
		}
	} else if value != nil {
		b, merr := json.Marshal(value)
		if merr != nil {
			res.Error = &commandError{Kind: errs.KindInternal, Code: errs.CodeInternal, Message: "encode the answer: " + merr.Error()}
		} else {
			res.Value = b
		}
	}
	b, _ := json.Marshal(res) // plain fields: cannot fail
	return string(b)
}

func decodeResult(s string, out any) error {
	var res commandResult
	if err := json.Unmarshal([]byte(s), &res); err != nil {
		return fmt.Errorf("decode a command's answer: %w", err)
	}
	if e := res.Error; e != nil {
		if e.Kind == errs.KindInternal {
			return fmt.Errorf("on the server running the session: %s", e.Message)
		}
		return &errs.Error{Kind: e.Kind, Code: e.Code, Message: e.Message, Metadata: e.Metadata}
	}
	if out == nil || len(res.Value) == 0 {
		return nil
	}
	if err := json.Unmarshal(res.Value, out); err != nil {
		return fmt.Errorf("decode a command's answer: %w", err)
	}
	return nil
}

// kickApplier makes the applier look for pending commands now.
func (r *Runner) kickApplier() {
	select {
	case r.remote.kick <- struct{}{}:
	default:
	}
}

// applyLoop applies the commands for the sessions this server holds:
// when woken, and every applyEvery in case a notification was lost.
func (r *Runner) applyLoop() {
	tick := time.NewTicker(applyEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		case <-r.remote.kick:
		}
		r.applyPending()
	}
}

// applyPending starts applying the pending commands of each session, in
// order, one session's at a time.
func (r *Runner) applyPending() {
	ended := r.remote.endedClaims()
	list, err := r.store.PendingCommands(r.ctx, r.cluster.Holder)
	if err != nil {
		if r.ctx.Err() == nil {
			r.log.Warn("list pending commands", "err", err)
		}
		return
	}
	var order []string
	bySession := map[string][]store.Command{}
	for _, c := range list {
		if _, ok := bySession[c.SessionID]; !ok {
			order = append(order, c.SessionID)
		}
		bySession[c.SessionID] = append(bySession[c.SessionID], c)
	}
	for _, id := range order {
		claimed, fresh := r.remote.claim(id, ended)
		if !claimed {
			continue
		}
		r.goroutines.Go(func() { r.applySession(id, bySession[id], fresh) })
	}
}

func (rm *remote) endedClaims() uint64 {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.ended
}

// claim marks a session's commands as being applied; false when they
// are already, which then looks again once done. fresh says no claim
// ended since ended was read before the list: nothing in the list was
// finished since by this server.
func (rm *remote) claim(id string, ended uint64) (claimed, fresh bool) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.busy[id] {
		rm.again[id] = true
		return false, false
	}
	rm.busy[id] = true
	return true, rm.ended == ended
}

// unclaim ends a claim and says whether more came meanwhile.
func (rm *remote) unclaim(id string) bool {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	again := rm.again[id]
	delete(rm.busy, id)
	delete(rm.again, id)
	rm.ended++
	return again
}

// applySession applies one session's commands in order. It stops at one
// it cannot apply here (the lease went elsewhere, the server closes),
// leaving it and the rest to whoever holds the session next. fresh says
// the list was read after the last claim of this server ended (see
// claim), so its commands need not be read again.
func (r *Runner) applySession(id string, list []store.Command, fresh bool) {
	defer func() {
		if r.remote.unclaim(id) {
			r.kickApplier()
		}
	}()
	for _, c := range list {
		// A list older than the last claim's end may hold commands that
		// claim applied: read each again before applying it. (One the
		// waiting server abandons meanwhile may still be applied, read
		// again or not; its answer is then the abandon's.)
		cur := c
		if !fresh {
			var err error
			if cur, err = r.store.GetCommand(r.ctx, c.ID); err != nil {
				if r.ctx.Err() == nil && errs.KindOf(err) != errs.KindNotFound {
					r.log.Warn("read a command", "command", c.ID, "err", err)
					return
				}
				continue
			}
		}
		if !cur.Done.IsZero() {
			continue
		}
		result, final := r.applyCommand(cur)
		if !final {
			return
		}
		if _, err := r.finishCommand(r.ctx, c.ID, result); err != nil {
			if r.ctx.Err() == nil {
				r.log.Warn("finish a command", "command", c.ID, "err", err)
			}
			return
		}
	}
}

// applyCommand applies one command and returns its answer; final is
// false when it was not applied here and must stay pending.
func (r *Runner) applyCommand(c store.Command) (result string, final bool) {
	ctx, cancel := context.WithTimeout(r.ctx, CommandTimeout)
	defer cancel()
	value, err := r.dispatch(ctx, c)
	switch {
	case leaseHeld(err), errs.CodeOf(err) == errs.CodeLeaseLost, errs.CodeOf(err) == errClosing.Code,
		errs.KindOf(err) == errs.KindUnavailable, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "", false
	}
	return encodeResult(value, err), true
}

// holding runs fn while this server holds the session loaded (its lease
// taken), for work beside the actor that must happen on the holder.
func (r *Runner) holding(ctx context.Context, id string, fn func() error) error {
	a, release, err := r.acquire(id)
	if err != nil {
		return err
	}
	defer release()
	if err := a.call(ctx, func(*actor) error { return nil }); err != nil {
		return err
	}
	return fn()
}
