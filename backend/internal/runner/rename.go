package runner

import (
	"context"

	"github.com/agents-os/agents/backend/internal/session"
)

// RenameSession gives a session another title (surrounding space
// trimmed); a run in flight goes on. The change is announced as
// session.updated, as every change of the summary is. A session another
// server holds is renamed there.
func (r *Runner) RenameSession(ctx context.Context, owner, id, title string) (session.Meta, error) {
	meta, _, err := onHolder(ctx, r, owner, id, renameCommand{Title: title})
	return meta, err
}

// renameCommand is RenameSession on the session's holder.
type renameCommand struct {
	Title string `json:"title"`
}

func (renameCommand) name() string { return "rename_session" }

func (b renameCommand) apply(ctx context.Context, r *Runner, at target) (session.Meta, error) {
	return r.control(ctx, at.owner, at.session, func(a *actor) error {
		e := a.edit()
		e.meta.Title = cleanTitle(b.Title)
		return a.apply(e)
	})
}
