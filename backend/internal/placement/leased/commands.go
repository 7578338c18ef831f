package leased

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
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/placement"
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

// remote is this server's side of the commands: the waiters of commands
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

	holders remoteHolders
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

// Elsewhere reports whether another server holds the session's live
// lease, so that a request goes to it without trying to take the
// session first. It is a hint: a load that finds the lease taken fails
// with lease_held, which forwards too.
func (p *Placement) Elsewhere(ctx context.Context, id string) bool {
	_, elsewhere := p.holderElsewhere(ctx, id)
	return elsewhere
}

// holderElsewhere is Elsewhere, with the lease it read.
func (p *Placement) holderElsewhere(ctx context.Context, id string) (store.Lease, bool) {
	if p.k.Live(id) {
		return store.Lease{}, false
	}
	now := p.now()
	if l, ok := p.remote.holders.get(id, now); ok {
		return l, true
	}
	l, err := p.store.GetLease(ctx, id)
	if err != nil || l.Holder == p.opts.Holder || !l.Live(now) {
		p.remote.holders.forget(id)
		return l, false
	}
	p.remote.holders.remember(l, now)
	return l, true
}

// Run runs local when this server holds the session or can take it,
// and otherwise forwards the command to the holder and decodes its
// answer into out; forwarded says which.
func (p *Placement) Run(ctx context.Context, c placement.Command, local func() error, out any) (forwarded bool, err error) {
	id := c.SessionID
	lease, elsewhere := p.holderElsewhere(ctx, id)
	if !elsewhere {
		if !p.behindCommands(ctx, id) {
			// A write refused for a lease this server lost wrote nothing:
			// the new holder takes the request.
			if err := local(); !leaseHeld(err) && errs.CodeOf(err) != errs.CodeLeaseLost {
				return false, err
			}
		}
		lease = store.Lease{}
	}
	return true, p.forward(ctx, c, out, lease)
}

// behindCommands reports whether a request for a session this server
// has not loaded must wait behind commands forwarded for it that no
// server applied yet (their holder died, and the server that forwarded
// them too): it then becomes a command itself, and whoever takes the
// session applies them all in the order they came. A loaded session's
// commands are this server's to apply, as they come.
func (p *Placement) behindCommands(ctx context.Context, id string) bool {
	if p.k.Live(id) {
		return false
	}
	pending, err := p.store.HasPendingCommands(ctx, id)
	return err == nil && pending
}

// forward stores a command for the session's holder, wakes it and waits
// for the answer, bounded by CommandTimeout. When the holder's lease
// ends meanwhile, this server takes the session, and with it the
// command, itself. lease, when its Holder is set, is the session's lease
// as just read: the first wake goes to its holder without reading it
// again (a holder that lost it meanwhile leaves the command to the
// next chase).
func (p *Placement) forward(ctx context.Context, c placement.Command, out any, lease store.Lease) error {
	id := c.SessionID
	b, err := placement.EncodeBody(c.Body)
	if err != nil {
		return fmt.Errorf("encode %s command: %w", c.Kind, err)
	}
	cmd := store.Command{ID: uuid.NewString(), SessionID: id, Owner: c.Owner, Kind: c.Kind, Body: b, Created: p.now()}
	done := p.remote.await(cmd.ID)
	defer p.remote.forget(cmd.ID)
	wake := lease.Holder != "" && lease.Live(p.now())
	if wake && p.storeNotifies() {
		// The insert wakes the holder itself, as it commits.
		cmd.Wake = store.Notification{Channel: cluster.ChannelCommands, Payload: wakePayload(lease.Holder, cmd)}
	}
	if err := p.store.AddCommand(ctx, cmd); err != nil && (errs.KindOf(err) != errs.KindUnavailable || !p.commandStored(ctx, cmd.ID)) {
		return err
	}
	if wake {
		if cmd.Wake.Channel == "" {
			p.notifyHolder(ctx, id, lease.Holder, wakePayload(lease.Holder, cmd))
		}
	} else if err := p.chase(ctx, cmd); err != nil {
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
		case <-p.ctx.Done():
			return committer.ErrClosing
		case <-timeout.C:
			return p.abandon(ctx, cmd, out)
		case result := <-done:
			if result != "" {
				return decodeResult(result, out)
			}
		case <-poll.C:
			chase = true
		}
		got, err := p.store.GetCommand(ctx, cmd.ID)
		switch {
		case errs.KindOf(err) == errs.KindUnavailable:
			continue // the store is away for a moment: the next poll reads again
		case err != nil:
			return err
		case !got.Done.IsZero():
			return decodeResult(got.Result, out)
		}
		if chase {
			if err := p.chase(ctx, cmd); err != nil && errs.KindOf(err) != errs.KindUnavailable {
				return err
			}
		}
	}
}

// commandStored reports whether a command whose insert failed is stored
// after all: the connection was lost while the database committed it,
// so the error told nothing, and the holder applies it. Its id is new
// with the insert, so finding it means it landed.
func (p *Placement) commandStored(ctx context.Context, id string) bool {
	_, err := p.store.GetCommand(ctx, id)
	return err == nil
}

// chase makes sure somebody applies the command: it wakes the holder, or,
// when the lease is free or expired, takes the session here, which
// applies the command with the others pending for it.
func (p *Placement) chase(ctx context.Context, cmd store.Command) error {
	l, err := p.store.GetLease(ctx, cmd.SessionID)
	switch {
	case err == nil && l.Live(p.now()) && l.Holder != p.opts.Holder:
		p.remote.holders.remember(l, p.now())
		p.wakeHolder(ctx, cmd.SessionID, l.Holder)
		return nil
	case err != nil && errs.KindOf(err) != errs.KindNotFound:
		return err
	}
	p.remote.holders.forget(cmd.SessionID)
	// Free, expired or already ours: take it (its load applies what is
	// pending), or learn who did.
	err = p.k.Load(ctx, cmd.SessionID)
	switch {
	case err == nil:
		p.kickApplier()
	case leaseHeld(err):
		// Another server took it first: wake it.
		if l, err := p.store.GetLease(ctx, cmd.SessionID); err == nil {
			p.wakeHolder(ctx, cmd.SessionID, l.Holder)
		}
	case errs.KindOf(err) == errs.KindNotFound:
		// The session is gone, and nobody will apply its commands: this
		// one's answer is that, unless its holder answered first.
		if _, ferr := p.finishCommand(ctx, cmd.ID, encodeResult(nil, err)); ferr != nil {
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
func (p *Placement) abandon(ctx context.Context, cmd store.Command, out any) error {
	timedOut := errs.Unavailable(errs.CodeCommandTimeout,
		"the server running session %s did not answer within %s; the request may still take effect", cmd.SessionID, CommandTimeout)
	won, err := p.store.FinishCommand(ctx, cmd.ID, encodeResult(nil, timedOut), p.now())
	if err != nil {
		return err
	}
	if won {
		return timedOut
	}
	got, err := p.store.GetCommand(ctx, cmd.ID)
	if err != nil {
		return err
	}
	return decodeResult(got.Result, out)
}

// wakeHolder tells the holder of a session it has commands to apply.
func (p *Placement) wakeHolder(ctx context.Context, id, holder string) {
	p.notifyHolder(ctx, id, holder, holder)
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
func (p *Placement) storeNotifies() bool {
	return p.opts.StoreNotifies && p.opts.Bus != nil && p.store.SendsNotifications()
}

func (p *Placement) notifyHolder(ctx context.Context, id, holder, payload string) {
	if p.opts.Bus == nil {
		return // it finds them at its next look
	}
	if err := p.opts.Bus.Notify(ctx, cluster.ChannelCommands, payload); err != nil {
		p.log.Warn("wake the holder of a session", "session", id, "holder", holder, "err", err)
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
func (p *Placement) applyWoken(payload string) {
	var w wokenCommand
	if payload == "" || json.Unmarshal([]byte(payload), &w) != nil || w.ID == "" || w.SessionID == "" {
		p.kickApplier()
		return
	}
	if claimed, _ := p.remote.claim(w.SessionID, 0); !claimed {
		return // the claim under way looks again when it ends
	}
	cmd := store.Command{ID: w.ID, SessionID: w.SessionID, Owner: w.Owner, Kind: w.Kind, Body: w.Body, Created: w.Created}
	// Refused once the runner closes: the command waits in the store for
	// the session's next holder.
	p.k.Go(func() { p.applySession(w.SessionID, []store.Command{cmd}, true) })
}

// finishCommand records a command's result and tells the server waiting
// for it that it is finished. When this finish recorded the answer (won)
// and it fits, the notification carries it, so the waiting server answers
// without reading the command back; otherwise (the command was abandoned
// first, or the answer is long) it carries the id alone. Where the store
// sends notifications, the finish sends it, in the same statement.
func (p *Placement) finishCommand(ctx context.Context, id, result string) (bool, error) {
	carried := id
	if len(id)+1+len(result) < cluster.MaxPayload {
		carried = id + " " + result
	}
	if p.storeNotifies() {
		return p.store.FinishCommandAndNotify(ctx, id, result, p.now(),
			store.Notification{Channel: cluster.ChannelCommandDone, Payload: carried},
			store.Notification{Channel: cluster.ChannelCommandDone, Payload: id})
	}
	won, err := p.store.FinishCommand(ctx, id, result, p.now())
	if err != nil || p.opts.Bus == nil {
		return won, err // without a bus, it reads the command back at its next poll
	}
	payload := id
	if won {
		payload = carried
	}
	if err := p.opts.Bus.Notify(ctx, cluster.ChannelCommandDone, payload); err != nil {
		p.log.Warn("notify a command's end", "command", id, "err", err)
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
func (p *Placement) kickApplier() {
	select {
	case p.remote.kick <- struct{}{}:
	default:
	}
}

// applyLoop applies the commands for the sessions this server holds:
// when woken, and every applyEvery in case a notification was lost.
func (p *Placement) applyLoop() {
	tick := time.NewTicker(applyEvery)
	defer tick.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-tick.C:
		case <-p.remote.kick:
		}
		p.applyPending()
	}
}

// applyPending starts applying the pending commands of each session, in
// order, one session's at a time.
func (p *Placement) applyPending() {
	ended := p.remote.endedClaims()
	list, err := p.store.PendingCommands(p.ctx, p.opts.Holder)
	if err != nil {
		if p.ctx.Err() == nil {
			p.log.Warn("list pending commands", "err", err)
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
		claimed, fresh := p.remote.claim(id, ended)
		if !claimed {
			continue
		}
		p.k.Go(func() { p.applySession(id, bySession[id], fresh) })
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
func (p *Placement) applySession(id string, list []store.Command, fresh bool) {
	defer func() {
		if p.remote.unclaim(id) {
			p.kickApplier()
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
			if cur, err = p.store.GetCommand(p.ctx, c.ID); err != nil {
				if p.ctx.Err() == nil && errs.KindOf(err) != errs.KindNotFound {
					p.log.Warn("read a command", "command", c.ID, "err", err)
					return
				}
				continue
			}
		}
		if !cur.Done.IsZero() {
			continue
		}
		result, final := p.applyCommand(cur)
		if !final {
			return
		}
		if _, err := p.finishCommand(p.ctx, c.ID, result); err != nil {
			if p.ctx.Err() == nil {
				p.log.Warn("finish a command", "command", c.ID, "err", err)
			}
			return
		}
	}
}

// applyCommand applies one command and returns its answer; final is
// false when it was not applied here and must stay pending.
func (p *Placement) applyCommand(c store.Command) (result string, final bool) {
	ctx, cancel := context.WithTimeout(p.ctx, CommandTimeout)
	defer cancel()
	value, err := p.k.Apply(ctx, c)
	switch {
	case leaseHeld(err), errs.CodeOf(err) == errs.CodeLeaseLost, errs.CodeOf(err) == committer.ErrClosing.Code,
		errs.KindOf(err) == errs.KindUnavailable, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "", false
	}
	return encodeResult(value, err), true
}
