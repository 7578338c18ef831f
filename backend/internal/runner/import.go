package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Imported is what importing one session did.
type Imported struct {
	// Meta is the session's summary: as stored now, or as it was found.
	Meta session.Meta
	// Unchanged says the session was there already with this history:
	// nothing was written.
	Unchanged bool
}

// ImportSession stores a session whose history was kept elsewhere (an
// agents-exe conversation) under the id it had there, for owner, bound
// to agent: a ready root session, forked from meta.ForkedFrom when set,
// with turns (oldest first) as its history. The agent need not be loaded:
// reading the session never needs it, and a run needs it only when one
// starts (ForkSession can bind the session to another agent).
//
// Importing is idempotent: when owner already has the session and its
// history begins with turns (it may have gone on since), nothing is
// written and Unchanged is set. A session with that id and another
// history, or another owner, is errs.Conflict (session_exists). The
// session, its turns and its session.created event are one write.
func (r *Runner) ImportSession(ctx context.Context, owner string, meta session.Meta, turns []session.Turn) (Imported, error) {
	id, err := uuid.Parse(meta.ID)
	if err != nil {
		return Imported{}, errs.Invalid("invalid_argument", "session id %q is not a UUID", meta.ID)
	}
	if meta.Agent == "" {
		return Imported{}, errs.Invalid("invalid_argument", "agent is required")
	}
	now := r.now()
	meta = session.Meta{
		ID:         id.String(),
		Agent:      meta.Agent,
		Owner:      owner,
		Title:      meta.Title,
		Status:     session.StatusReady,
		ForkedFrom: meta.ForkedFrom,
		TurnCount:  len(turns),
		Created:    now,
		Updated:    now,
	}
	turns = append([]session.Turn(nil), turns...)
	for i := range turns {
		turns[i].Index, turns[i].Created = i, now
		if t := turns[i]; t.User == nil {
			meta.Usage = meta.Usage.Add(t.Usage())
		} else if meta.Title == "" && t.User != nil && t.User.Text != "" {
			meta.Title = titleFrom(t.User.Text)
		}
	}
	// Looking and storing go together: another import of the session on
	// this server waits, then finds it. One on another server sharing the
	// database meets it in the store, as a duplicate id.
	r.importing.Lock()
	defer r.importing.Unlock()
	if found, ok, err := r.imported(ctx, owner, meta.ID, turns); ok || err != nil {
		return found, err
	}
	view, err := r.open(ctx, meta, turns, nil, func(a *actor, e *edit) error { return a.apply(e) })
	if errs.KindOf(err) == errs.KindConflict {
		// An import of the same session on another server stored it.
		if found, ok, ferr := r.imported(ctx, owner, meta.ID, turns); ok || ferr != nil {
			return found, ferr
		}
	}
	if err != nil {
		return Imported{}, err
	}
	return Imported{Meta: view.Meta}, nil
}

// imported looks for a session imported before: ok when owner has it
// with a history that begins with turns, an error when the id is taken
// otherwise, neither when there is no such session.
func (r *Runner) imported(ctx context.Context, owner, id string, turns []session.Turn) (Imported, bool, error) {
	meta, stored, err := r.store.LoadSession(ctx, id)
	if errs.KindOf(err) == errs.KindNotFound {
		return Imported{}, false, nil
	}
	if err != nil {
		return Imported{}, false, err
	}
	if meta.Owner != owner {
		return Imported{}, false, errs.Conflict("session_exists", "a session with id %s exists already", id)
	}
	if len(stored) < len(turns) {
		return Imported{}, false, errs.Conflict("session_exists", "session %s exists already with %d turns, fewer than the %d imported", id, len(stored), len(turns))
	}
	for i, t := range turns {
		same, err := sameTurn(t, stored[i])
		if err != nil {
			return Imported{}, false, err
		}
		if !same {
			return Imported{}, false, errs.Conflict("session_exists", "session %s exists already with another history (turn %d differs)", id, i)
		}
	}
	return Imported{Meta: meta, Unchanged: true}, true, nil
}

// sameTurn compares what two turns say, not when they were stored: their
// encodings, which are what the store keeps.
func sameTurn(a, b session.Turn) (bool, error) {
	type said struct {
		User *session.UserTurn `json:"user,omitempty"`
		LLM  *session.LLMTurn  `json:"llm,omitempty"`
	}
	ea, err := json.Marshal(said{a.User, a.LLM})
	if err != nil {
		return false, fmt.Errorf("encode turn %d: %w", a.Index, err)
	}
	eb, err := json.Marshal(said{b.User, b.LLM})
	if err != nil {
		return false, fmt.Errorf("encode turn %d: %w", b.Index, err)
	}
	return bytes.Equal(ea, eb), nil
}
