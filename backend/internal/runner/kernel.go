package runner

import (
	"context"
	"slices"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/placement"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// kernel is what the runner's placement may ask of it (see
// placement.Kernel).
type kernel struct{ r *Runner }

var _ placement.Kernel = kernel{}

func (k kernel) Go(fn func()) { k.r.goroutines.Go(fn) }

func (k kernel) Live(id string) bool {
	k.r.mu.Lock()
	defer k.r.mu.Unlock()
	_, ok := k.r.live[id]
	return ok
}

func (k kernel) LiveIDs() []string { return k.r.liveIDs() }

func (k kernel) Load(ctx context.Context, id string) error {
	return k.r.withSession(ctx, id, func(*actor) error { return nil })
}

func (k kernel) TakeUp(ctx context.Context, id string) (taken bool, err error) {
	err = k.r.withSession(ctx, id, func(a *actor) error {
		taken = true
		return a.recoverSession()
	})
	return taken, err
}

func (k kernel) RecoverAll(ctx context.Context) error { return k.r.recoverAll(ctx) }

// Pin runs fn while this server holds the session loaded (its hold
// taken), for work beside the actor that must happen on the holder.
func (k kernel) Pin(ctx context.Context, id string, fn func() error) error {
	a, release, err := k.r.acquire(id)
	if err != nil {
		return err
	}
	defer release()
	if err := a.call(ctx, func(*actor) error { return nil }); err != nil {
		return err
	}
	return fn()
}

func (k kernel) Apply(ctx context.Context, c store.Command) (any, error) { return k.r.dispatch(ctx, c) }

func (k kernel) Lost(f store.Fence, cause error) bool {
	k.r.mu.Lock()
	a := k.r.live[f.SessionID]
	k.r.mu.Unlock()
	if a == nil {
		return false
	}
	a.post(func(a *actor) {
		if a.hold.Under(f.Epoch) {
			a.loseLease(cause)
		}
	})
	return true
}

func (k kernel) LetGo(ctx context.Context, id string) bool { return k.r.letGo(ctx, id) }

// StopLoading refuses to load sessions from now on (see acquire): their
// holds are being given up.
func (k kernel) StopLoading() {
	k.r.mu.Lock()
	k.r.handingOver = true
	k.r.mu.Unlock()
}

// HandOverIdle hands over, while the server drains, every session loaded
// here that has no run: a post through another server to one of them
// need not wait for the slowest step of the others. The sessions with a
// run follow one by one as their runs stop (see actor.handOverIdle).
func (k kernel) HandOverIdle(ctx context.Context) {
	r := k.r
	r.handsOver.Store(true)
	for _, id := range r.liveIDs() {
		a, release, ok := r.loaded(id)
		if !ok {
			continue
		}
		_ = a.call(ctx, func(a *actor) error {
			a.handOverIdle()
			return nil
		})
		release()
	}
}

// MailArrived has a session loaded here take in the mail another server
// stored for it. A session not loaded here is left alone: the server
// that loads it next reads its mail.
func (k kernel) MailArrived(id string) {
	a, release, ok := k.r.loaded(id)
	if !ok {
		return
	}
	defer release()
	a.post(func(a *actor) { a.refreshMail() })
}

func (k kernel) ReloadStoredAgents(ctx context.Context) {
	if k.r.cat != nil {
		k.r.cat.ReloadStored(ctx)
	}
}

func (k kernel) FollowOthers() { k.r.followProgress() }

// liveIDs lists the sessions loaded here.
func (r *Runner) liveIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.live))
	for id := range r.live {
		ids = append(ids, id)
	}
	return ids
}

// refreshMail reads the session's pending mail again and takes in what
// another server stored, as a local AddMail would: urgent mail cuts the
// step in flight, and an idle session wakes.
func (a *actor) refreshMail() {
	if !a.ws.holds() {
		return
	}
	pending, err := a.r.store.PendingMail(a.r.ctx, a.id)
	if err != nil {
		if a.r.ctx.Err() == nil {
			a.log().Warn("read the mail another server stored", "session", a.id, "err", err)
		}
		return
	}
	urgent := false
	for _, m := range pending {
		if !slices.ContainsFunc(a.st.mail, func(x session.Mail) bool { return x.ID == m.ID }) {
			a.takeMail(m)
			urgent = urgent || m.Priority == session.PriorityUrgent
		}
	}
	if urgent {
		a.interrupt()
	}
	if a.run == nil && a.st.meta.Status.AcceptsInput() && len(a.st.mail) > 0 {
		if err := a.wake(agentsv1.RunTrigger_RUN_TRIGGER_MAIL); err != nil {
			a.log().Warn("wake for the mail another server stored", "session", a.id, "err", err)
		}
	}
}
