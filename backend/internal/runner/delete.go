package runner

import (
	"context"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/wire"
)

// DeleteMode says what a delete takes with it.
type DeleteMode int

// The delete modes.
const (
	// DeleteSingle deletes one session; it is refused while a descendant
	// has an active run.
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
		return nil, errs.NotFound("unknown_session", "unknown session %s", id)
	}
	descendants, err := r.descendants(ctx, id)
	if err != nil {
		return nil, err
	}
	targets := []string{id}
	if mode != DeleteCascade {
		for _, d := range descendants {
			if d.Status == session.StatusRunning || d.Status == session.StatusWaiting || d.Status == session.StatusPaused {
				return nil, errs.FailedPrecondition("session_has_children", "session %s has a child session %s with an active run; delete with mode cascade", id, d.ID)
			}
		}
	}
	if mode == DeleteCascade {
		// Children first, so a parent never goes while its children stay.
		targets = targets[:0]
		for _, d := range descendants {
			targets = append(targets, d.ID)
		}
		targets = append(targets, id)
	}
	var deleted []string
	for _, target := range targets {
		err := r.withSession(ctx, target, func(a *actor) error {
			a.closeRun()
			if _, err := r.store.DeleteSessions(ctx, target); err != nil {
				return err
			}
			a.deleted = true
			a.emit(&agentsv1.Event{Kind: "session.deleted", Body: &agentsv1.Event_SessionDeleted{SessionDeleted: &agentsv1.SessionDeleted{Meta: wire.Meta(a.st.meta)}}})
			return nil
		})
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
