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
	var meta session.Meta
	_, err := r.onHolder(ctx, id, owner, cmdRename, renameCommand{Title: title}, &meta, func() error {
		var err error
		meta, err = r.renameLocal(ctx, owner, id, title)
		return err
	})
	return meta, err
}

type renameCommand struct {
	Title string `json:"title"`
}

func (r *Runner) renameLocal(ctx context.Context, owner, id, title string) (session.Meta, error) {
	return r.control(ctx, owner, id, func(a *actor) error {
		e := a.edit()
		e.meta.Title = cleanTitle(title)
		return a.apply(e)
	})
}
