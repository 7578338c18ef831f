package runner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Watch TTL bounds.
const (
	DefaultWatchTTL = time.Hour
	MaxWatchTTL     = 30 * 24 * time.Hour
)

// watches is the in-memory index of the stored watches, by target.
type watches struct {
	mu       sync.Mutex
	byTarget map[string]map[string]time.Time // target → watcher → expiry
}

func (w *watches) put(watcher, target string, expires time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byTarget == nil {
		w.byTarget = map[string]map[string]time.Time{}
	}
	if w.byTarget[target] == nil {
		w.byTarget[target] = map[string]time.Time{}
	}
	w.byTarget[target][watcher] = expires
}

func (w *watches) remove(watcher, target string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.byTarget[target], watcher)
	if len(w.byTarget[target]) == 0 {
		delete(w.byTarget, target)
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
		return session.Watch{}, errs.Invalid("invalid_argument", "ttl must be between 0 and %s", MaxWatchTTL)
	}
	if watcher == target {
		return session.Watch{}, errs.Invalid("invalid_argument", "a session cannot watch itself")
	}
	for _, id := range []string{watcher, target} {
		m, err := r.store.GetMeta(ctx, id)
		if err != nil {
			return session.Watch{}, err
		}
		if owner != AnyOwner && m.Owner != owner {
			return session.Watch{}, errs.NotFound("unknown_session", "unknown session %s", id)
		}
	}
	w := session.Watch{WatcherID: watcher, TargetID: target, Expires: r.now().Add(ttl)}
	if err := r.store.PutWatch(ctx, w); err != nil {
		return session.Watch{}, err
	}
	r.watches.put(watcher, target, w.Expires)
	return w, nil
}

// UnwatchSession ends a watch; ending a missing one is not an error.
func (r *Runner) UnwatchSession(ctx context.Context, owner, watcher, target string) error {
	m, err := r.store.GetMeta(ctx, watcher)
	if err != nil {
		return err
	}
	if owner != AnyOwner && m.Owner != owner {
		return errs.NotFound("unknown_session", "unknown session %s", watcher)
	}
	if err := r.store.DeleteWatch(ctx, watcher, target); err != nil {
		return err
	}
	r.watches.remove(watcher, target)
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
		r.watches.put(w.WatcherID, w.TargetID, w.Expires)
	}
	return nil
}

// notifyWatchers mails a run's outcome to the target's watchers. It runs
// on its own goroutine: delivering to another session's actor from inside
// an actor could deadlock two sessions watching each other.
func (a *actor) notifyWatchers(status session.Status, reason, text string) {
	r := a.r
	meta := a.st.meta
	live, expired := r.watches.of(meta.ID, r.now())
	if len(live) == 0 && len(expired) == 0 {
		return
	}
	summary := fmt.Sprintf("session %s (agent %s) stopped: status %s", meta.ID, meta.Agent, status)
	if reason != "" {
		summary += ", " + reason
	}
	if text != "" {
		summary += "\n\n" + text
	}
	go func() {
		ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
		defer cancel()
		for _, w := range expired {
			r.watches.remove(w, meta.ID)
			_ = r.store.DeleteWatch(ctx, w, meta.ID)
		}
		for _, w := range live {
			_, err := r.deliver(ctx, AnyOwner, w, session.Mail{
				Sender:   session.Sender{Kind: session.SenderSystem, Name: "watch"},
				Priority: session.PriorityNormal,
				Body:     session.MailBody{Kind: session.MailAgentMessage, Agent: meta.Agent, Text: summary},
			})
			if errs.KindOf(err) == errs.KindNotFound {
				r.watches.remove(w, meta.ID)
			} else if err != nil {
				r.log.Error("deliver watch mail", "watcher", w, "target", meta.ID, "err", err)
			}
		}
	}()
}
