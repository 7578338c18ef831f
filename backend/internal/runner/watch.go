package runner

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/wire"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Watch TTL bounds.
const (
	DefaultWatchTTL = time.Hour
	MaxWatchTTL     = 30 * 24 * time.Hour
)

// watches is the in-memory index of the stored watches. It is a cache of
// the watches table with one rule: it is filled from the store at start
// (loadWatches) and changed only after the store changed, by the code
// that changed it: a watch put or ended (WatchSession, UnwatchSession,
// dropWatches), a session deleted (drop; the store's delete cascades to
// the session's watches in the same transaction). With servers sharing
// the database, only the holder of a target tells its watchers how its
// runs end, and another server may have put or ended its watches while
// it held the target: a target's entries are read from the store when
// its lease is taken (watchersFromStore), instead of at start. A watch is
// put or ended on the target's holder, through a command when another
// server holds it, so the holder's index has it at once.
type watches struct {
	mu       sync.Mutex
	byTarget map[string]map[string]time.Time // target → watcher → expiry
	targets  map[string]map[string]struct{}  // watcher → its targets
	owners   map[string]string               // watcher → its owner
}

// owner returns a watcher's owner, for the events of its mail.
func (w *watches) owner(watcher string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	o, ok := w.owners[watcher]
	return o, ok
}

func (w *watches) put(watcher, owner, target string, expires time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byTarget == nil {
		w.byTarget = map[string]map[string]time.Time{}
		w.targets = map[string]map[string]struct{}{}
		w.owners = map[string]string{}
	}
	w.owners[watcher] = owner
	if w.byTarget[target] == nil {
		w.byTarget[target] = map[string]time.Time{}
	}
	w.byTarget[target][watcher] = expires
	if w.targets[watcher] == nil {
		w.targets[watcher] = map[string]struct{}{}
	}
	w.targets[watcher][target] = struct{}{}
}

func (w *watches) remove(watcher, target string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removeLocked(watcher, target)
}

func (w *watches) removeLocked(watcher, target string) {
	delete(w.byTarget[target], watcher)
	if len(w.byTarget[target]) == 0 {
		delete(w.byTarget, target)
	}
	delete(w.targets[watcher], target)
	if len(w.targets[watcher]) == 0 {
		delete(w.targets, watcher)
		delete(w.owners, watcher)
	}
}

// drop forgets every watch of a deleted session, as watcher and as
// target.
func (w *watches) drop(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for target := range w.targets[id] {
		w.removeLocked(id, target)
	}
	for watcher := range w.byTarget[id] {
		w.removeLocked(watcher, id)
	}
}

// of returns the watchers of a target: live ones, and expired ones to drop.
func (w *watches) of(target string, now time.Time) (live, expired []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for watcher, exp := range w.byTarget[target] {
		if exp.After(now) {
			live = append(live, watcher)
		} else {
			expired = append(expired, watcher)
		}
	}
	return live, expired
}

// WatchSession makes the target's run outcomes (run.stopped,
// session.failed) reach the watcher as mail until ttl passes. The watch is
// stored, so it survives restarts.
func (r *Runner) WatchSession(ctx context.Context, owner, watcher, target string, ttl time.Duration) (session.Watch, error) {
	if ttl == 0 {
		ttl = DefaultWatchTTL
	}
	if ttl < 0 || ttl > MaxWatchTTL {
		return session.Watch{}, errs.Invalid(errs.CodeInvalidArgument, "ttl must be between 0 and %s", MaxWatchTTL)
	}
	if watcher == target {
		return session.Watch{}, errs.Invalid(errs.CodeInvalidArgument, "a session cannot watch itself")
	}
	watcherOwner := ""
	for i, id := range []string{watcher, target} {
		m, err := r.store.GetMeta(ctx, id)
		if err != nil {
			return session.Watch{}, err
		}
		if owner != AnyOwner && m.Owner != owner {
			return session.Watch{}, errs.NotFound(errs.CodeUnknownSession, "unknown session %s", id)
		}
		if i == 0 {
			watcherOwner = m.Owner
		}
	}
	// The index is the target's holder's: the watch is put there.
	w, _, err := onHolder(ctx, r, owner, target, watchCommand{Watcher: watcher, WatcherOwner: watcherOwner, TTL: ttl})
	return w, err
}

// watchCommand is WatchSession on the target's holder.
type watchCommand struct {
	Watcher      string        `json:"watcher"`
	WatcherOwner string        `json:"watcher_owner,omitempty"`
	TTL          time.Duration `json:"ttl,omitempty"`
}

func (watchCommand) name() string { return "watch_session" }

func (b watchCommand) apply(ctx context.Context, r *Runner, at target) (session.Watch, error) {
	var w session.Watch
	err := r.place.Holding(ctx, at.session, func() error {
		var err error
		w, err = r.watchLocal(ctx, b.Watcher, b.WatcherOwner, at.session, b.TTL)
		return err
	})
	return w, err
}

// watchLocal stores a watch and puts it in this server's index.
func (r *Runner) watchLocal(ctx context.Context, watcher, watcherOwner, target string, ttl time.Duration) (session.Watch, error) {
	w := session.Watch{WatcherID: watcher, TargetID: target, Expires: r.now().Add(ttl)}
	if err := r.store.PutWatch(ctx, w); err != nil {
		return session.Watch{}, err
	}
	r.watches.put(watcher, watcherOwner, target, w.Expires)
	// A delete of either session that committed after PutWatch took the
	// watch from the store, and may have dropped it from the index before
	// put added it: look again, so the index never keeps a watch of a
	// session that is gone.
	for _, id := range []string{watcher, target} {
		if _, err := r.store.GetMeta(ctx, id); errs.KindOf(err) == errs.KindNotFound {
			r.watches.drop(id)
			return session.Watch{}, err
		}
	}
	return w, nil
}

// UnwatchSession ends a watch; ending a missing one is not an error.
func (r *Runner) UnwatchSession(ctx context.Context, owner, watcher, target string) error {
	m, err := r.store.GetMeta(ctx, watcher)
	if err != nil {
		return err
	}
	if owner != AnyOwner && m.Owner != owner {
		return errs.NotFound(errs.CodeUnknownSession, "unknown session %s", watcher)
	}
	_, _, err = onHolder(ctx, r, owner, target, unwatchCommand{Watcher: watcher})
	return err
}

// unwatchCommand is UnwatchSession on the target's holder.
type unwatchCommand struct {
	Watcher string `json:"watcher"`
}

func (unwatchCommand) name() string { return "unwatch_session" }

func (b unwatchCommand) apply(ctx context.Context, r *Runner, at target) (none, error) {
	err := r.place.Holding(ctx, at.session, func() error { return r.unwatchLocal(ctx, b.Watcher, at.session) })
	if errs.KindOf(err) == errs.KindNotFound {
		// The target is gone, and its watches with it.
		err = r.unwatchLocal(ctx, b.Watcher, at.session)
	}
	return none{}, err
}

// unwatchLocal ends a watch in the store and in this server's index.
func (r *Runner) unwatchLocal(ctx context.Context, watcher, target string) error {
	if err := r.store.DeleteWatch(ctx, watcher, target); err != nil {
		return err
	}
	r.watches.remove(watcher, target)
	return nil
}

// watchersFromStore makes the index's entries of a target those the
// store holds.
func (r *Runner) watchersFromStore(ctx context.Context, target string) error {
	list, err := r.store.WatchersOf(ctx, target)
	if err != nil {
		return err
	}
	owners := make([]string, len(list))
	for i, w := range list {
		if o, ok := r.watches.owner(w.WatcherID); ok {
			owners[i] = o
			continue
		}
		m, err := r.store.GetMeta(ctx, w.WatcherID)
		if errs.KindOf(err) == errs.KindNotFound {
			continue // the watcher is gone; its watch went with it
		} else if err != nil {
			return err
		}
		owners[i] = m.Owner
	}
	r.watches.mu.Lock()
	for watcher := range r.watches.byTarget[target] {
		r.watches.removeLocked(watcher, target)
	}
	r.watches.mu.Unlock()
	for i, w := range list {
		if owners[i] != "" {
			r.watches.put(w.WatcherID, owners[i], target, w.Expires)
		}
	}
	return nil
}

// loadWatches fills the index from the store at start, dropping the
// watches that expired while the server was down.
func (r *Runner) loadWatches(ctx context.Context) error {
	if _, err := r.store.DeleteExpiredWatches(ctx, r.now()); err != nil {
		return err
	}
	list, err := r.store.ListWatches(ctx)
	if err != nil {
		return err
	}
	for _, w := range list {
		m, err := r.store.GetMeta(ctx, w.WatcherID)
		if err != nil {
			continue // the watcher is gone; its watch went with it
		}
		r.watches.put(w.WatcherID, m.Owner, w.TargetID, w.Expires)
	}
	return nil
}

// watchNote is mail a change wrote for a watcher, for the watcher's actor
// to take in once the change is stored.
type watchNote struct {
	watcher string
	mail    session.Mail
}

// watchMail adds to e the mail that tells the target's watchers how its
// run ended: it is written with the status change (an outbox), so it is
// delivered exactly once, crash or not.
func (a *actor) watchMail(e *edit, status session.Status, reason, text string) {
	r := a.r
	meta := e.meta
	live, expired := r.watches.of(meta.ID, r.now())
	if len(expired) > 0 {
		// Refused once the runner closes: the next start drops them (see
		// loadWatches).
		r.goroutines.Go(func() { r.dropWatches(meta.ID, expired) })
	}
	if len(live) == 0 {
		return
	}
	summary := fmt.Sprintf("session %s (agent %s) stopped: status %s", meta.ID, meta.Agent, status)
	if reason != "" {
		summary += ", " + reason
	}
	if text != "" {
		summary += "\n\n" + text
	}
	for _, w := range live {
		m := session.Mail{
			ID:        uuid.NewString(),
			SessionID: w,
			Sender:    session.Sender{Kind: session.SenderSystem, Name: "watch"},
			Priority:  session.PriorityNormal,
			Body:      session.MailBody{Kind: session.MailAgentMessage, Agent: meta.Agent, Text: summary},
			Created:   r.now(),
		}
		e.mail = append(e.mail, m)
		e.notify = append(e.notify, watchNote{watcher: w, mail: m})
		if owner, ok := r.watches.owner(w); ok {
			e.events = append(e.events, events.WithKind(&agentsv1.Event{SessionId: w, Owner: owner,
				Body: &agentsv1.Event_MailAccepted{MailAccepted: &agentsv1.MailAccepted{Envelope: wire.Mail(m)}}}))
		}
	}
}

// delivered hands stored watch mail to the watchers' actors, which fold
// it at their next step or wake for it. It runs on its own goroutine:
// calling another session's actor from inside an actor could deadlock two
// sessions watching each other. The mail is stored already, so a crash,
// or a close that refuses the goroutine, loses nothing: the next start
// wakes the watcher (see Recover).
func (a *actor) delivered(notes []watchNote) {
	if len(notes) == 0 {
		return
	}
	r := a.r
	r.goroutines.Go(func() {
		for _, n := range notes {
			err := r.withSession(r.ctx, n.watcher, func(a *actor) error {
				if !slices.ContainsFunc(a.st.mail, func(m session.Mail) bool { return m.ID == n.mail.ID }) {
					a.takeMail(n.mail)
				}
				if a.run == nil && a.st.meta.Status.AcceptsInput() {
					return a.wake(agentsv1.RunTrigger_RUN_TRIGGER_MAIL)
				}
				return nil
			})
			if errs.KindOf(err) == errs.KindNotFound {
				r.watches.remove(n.watcher, a.id)
			} else if errs.CodeOf(err) == errs.CodeLeaseHeld {
				// Another server runs the watcher: it was told of its
				// mail (see placement.Placement.MailStored).
			} else if err != nil && r.ctx.Err() == nil {
				r.log.Error("hand watch mail over", "watcher", n.watcher, "target", a.id, "err", err)
			}
		}
	})
}

// takeMail queues mail that another session's change stored, in the
// order the mail was made: the handovers of two changes run on goroutines
// of their own, and the outcome of a later run must not overtake that of
// an earlier one.
func (a *actor) takeMail(m session.Mail) {
	i := len(a.st.mail)
	for i > 0 && a.st.mail[i-1].Created.After(m.Created) {
		i--
	}
	a.st.mail = slices.Insert(a.st.mail, i, m)
	a.st.meta.PendingMail++
}

// dropWatches forgets watches that expired.
func (r *Runner) dropWatches(target string, watchers []string) {
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	for _, w := range watchers {
		r.watches.remove(w, target)
		if err := r.store.DeleteWatch(ctx, w, target); err != nil && r.ctx.Err() == nil {
			r.log.Error("drop expired watch", "watcher", w, "target", target, "err", err)
		}
	}
}
