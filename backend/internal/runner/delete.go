package runner

import (
	"context"
	"strconv"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/wire"
)

// DeleteMode says what a delete takes with it.
type DeleteMode int

// The delete modes.
const (
	// DeleteSingle deletes one session; it is refused while the session
	// has child sessions, so no child is ever left pointing at a parent
	// that is gone.
	DeleteSingle DeleteMode = iota
	// DeleteCascade deletes the session and all its descendants.
	DeleteCascade
)

// DeleteSession deletes a session (and with cascade its descendants),
// cancelling active runs first. It returns the deleted ids.
func (r *Runner) DeleteSession(ctx context.Context, owner, id string, mode DeleteMode) ([]string, error) {
	meta, err := r.store.GetMeta(ctx, id)
	if err != nil {
		return nil, err
	}
	if owner != AnyOwner && meta.Owner != owner {
		return nil, errs.NotFound(errs.CodeUnknownSession, "unknown session %s", id)
	}
	var deleted []string
	for attempt := 1; ; attempt++ {
		descendants, err := r.descendants(ctx, id)
		if err != nil {
			return deleted, err
		}
		if mode != DeleteCascade && len(descendants) > 0 {
			return nil, errs.FailedPrecondition(errs.CodeSessionHasChildren,
				"session %s has %d child sessions; delete with mode cascade (agents sessions rm --cascade) to delete them too", id, len(descendants)).
				With("children", strconv.Itoa(len(descendants)))
		}
		// Children first, so a parent never goes while its children stay.
		var targets []string
		for _, d := range descendants {
			targets = append(targets, d.ID)
		}
		targets = append(targets, id)
		gone, err := r.deleteEach(ctx, targets)
		deleted = append(deleted, gone...)
		// The store refuses to delete a session that has children: one
		// was made since they were listed (a helper call of a run being
		// deleted). A cascade takes it too.
		if mode == DeleteCascade && errs.CodeOf(err) == errs.CodeSessionHasChildren && attempt < 5 {
			continue
		}
		return deleted, err
	}
}

// deleteEach deletes sessions one by one, in order, and returns the ids
// it deleted; sessions already gone are skipped.
func (r *Runner) deleteEach(ctx context.Context, targets []string) ([]string, error) {
	var deleted []string
	for _, target := range targets {
		_, _, err := onHolder(ctx, r, AnyOwner, target, deleteCommand{})
		if err != nil {
			if errs.KindOf(err) == errs.KindNotFound {
				continue // deleted meanwhile
			}
			return deleted, err
		}
		deleted = append(deleted, target)
	}
	return deleted, nil
}

// deleteCommand deletes one session on its holder, stopping its run.
type deleteCommand struct{}

func (deleteCommand) name() string { return "delete_session" }

func (deleteCommand) apply(ctx context.Context, r *Runner, at target) (none, error) {
	return none{}, r.deleteLocal(ctx, at.session)
}

// deleteLocal deletes one session on this server, stopping its run.
func (r *Runner) deleteLocal(ctx context.Context, target string) error {
	return r.withSession(ctx, target, func(a *actor) error {
		ev := events.WithKind(&agentsv1.Event{SessionId: a.id, Owner: a.owner,
			Body: &agentsv1.Event_SessionDeleted{SessionDeleted: &agentsv1.SessionDeleted{Meta: wire.Meta(a.st.meta)}}})
		// The schedules that post to the session go with it.
		schedules, err := r.schedulesGoneWith(ctx, target)
		if err != nil {
			return err
		}
		if err := a.write(ctx, &store.Change{Delete: []string{target}}, append([]*agentsv1.Event{ev}, schedules...)); err != nil {
			if committer.Classify(err) != committer.Transient {
				return err
			}
			gone, told := a.goneFromStore()
			if !told {
				a.ws.suspect(&doubt{landed: a.goneFromStore})
			}
			if !gone {
				return err
			}
		}
		// The hold went with the session.
		r.place.Deleted(a.hold)
		a.hold = nil
		a.closeRun()
		r.gone.add(a.pendingTokens(), "its session was deleted")
		a.ws.end(a.unknown())
		r.params.forget(target)
		r.watches.drop(target)
		if r.opts.SessionDeleted != nil {
			r.opts.SessionDeleted(target)
		}
		return nil
	})
}

// goneFromStore reports whether a delete whose write failed landed
// after all (the connection was lost while the database committed it):
// the session is no longer stored. told is false when the store could
// not be asked (see landed).
func (a *actor) goneFromStore() (gone, told bool) {
	_, err := a.r.store.GetMeta(a.r.ctx, a.id)
	switch {
	case err == nil:
		return false, true
	case errs.KindOf(err) == errs.KindNotFound:
		return true, true
	}
	return false, false
}

// descendants lists every session below id, deepest first.
func (r *Runner) descendants(ctx context.Context, id string) ([]session.Meta, error) {
	children, err := r.store.Children(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []session.Meta
	for _, c := range children {
		below, err := r.descendants(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, below...)
		out = append(out, c)
	}
	return out, nil
}
