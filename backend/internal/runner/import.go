package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	// Added is how many turns were added to a session imported before
	// from a file that has grown since.
	Added int
	// Minted says the file's session id was not the importer's to take:
	// the session is stored under an id made for the importer (Meta.ID).
	Minted bool
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
// written and Unchanged is set. When the session's history is where
// turns begin (the file grew since it was imported), the turns after it
// are added. A session of owner's with another history is errs.Conflict
// (session_exists), naming the first turn that differs. An id another
// owner holds is answered as a free one would be: the session is stored
// under an id minted from it for owner, the same each time, so importing
// the file again finds it (Minted). The session, its turns and its
// session.created event are one write.
func (r *Runner) ImportSession(ctx context.Context, owner string, meta session.Meta, turns []session.Turn) (Imported, error) {
	id, err := uuid.Parse(meta.ID)
	if err != nil {
		return Imported{}, errs.Invalid(errs.CodeInvalidArgument, "session id %q is not a UUID", meta.ID)
	}
	if meta.Agent == "" {
		return Imported{}, errs.Invalid(errs.CodeInvalidArgument, "agent is required")
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
	// database meets it in the store, as a duplicate id, and looks again.
	r.importing.Lock()
	defer r.importing.Unlock()
	minted := false
	for range maxImportLooks {
		found, ok, err := r.imported(ctx, owner, meta.ID, turns)
		if errors.Is(err, errOthers) {
			// Minted from the id, not drawn: the importer's next import
			// of the file lands on the same session.
			meta.ID = uuid.NewSHA1(uuid.MustParse(meta.ID), []byte(owner)).String()
			minted = true
			continue
		}
		if ok || err != nil {
			found.Minted = minted
			return found, err
		}
		view, err := r.open(ctx, meta, turns, nil, func(a *actor, e *edit) error { return a.apply(e) })
		if errs.KindOf(err) == errs.KindConflict {
			continue // stored meanwhile by an import on another server
		}
		if err != nil {
			return Imported{}, err
		}
		return Imported{Meta: view.Meta, Minted: minted}, nil
	}
	return Imported{}, errs.Conflict(errs.CodeSessionExists, "session %s is being imported elsewhere; import again", meta.ID)
}

// maxImportLooks bounds the ids an import looks at: the file's, those
// minted from it when they are taken, and again after a concurrent
// import on another server stored one first.
const maxImportLooks = 4

// errOthers is imported's answer for an id another owner holds; the
// importer never sees it.
var errOthers = errors.New("the session is another owner's")

// imported looks for a session imported before: ok when owner has it
// with a history that begins with turns, or had it with the history
// turns begin with, whose turns after it it then adds. errOthers when
// another owner has the id, errs.Conflict when owner has another
// history under it; neither when there is no such session.
func (r *Runner) imported(ctx context.Context, owner, id string, turns []session.Turn) (Imported, bool, error) {
	meta, stored, err := r.store.LoadSession(ctx, id)
	if errs.KindOf(err) == errs.KindNotFound {
		return Imported{}, false, nil
	}
	if err != nil {
		return Imported{}, false, err
	}
	if meta.Owner != owner {
		return Imported{}, false, errOthers
	}
	for i := range min(len(stored), len(turns)) {
		same, err := sameTurn(turns[i], stored[i])
		if err != nil {
			return Imported{}, false, err
		}
		if !same {
			return Imported{}, false, errs.Conflict(errs.CodeSessionExists, "session %s exists already with another history: turn %d differs from the file's (the session has %d turns, the file %d)", id, i, len(stored), len(turns))
		}
	}
	if len(stored) >= len(turns) {
		return Imported{Meta: meta, Unchanged: true}, true, nil
	}
	added := turns[len(stored):]
	meta, err = r.importTurns(ctx, owner, id, len(stored), added)
	if err != nil {
		return Imported{}, false, err
	}
	return Imported{Meta: meta, Added: len(added)}, true, nil
}

// importTurns adds turns to owner's session id, whose history had from
// turns when it was compared with the file's.
func (r *Runner) importTurns(ctx context.Context, owner, id string, from int, turns []session.Turn) (session.Meta, error) {
	meta, _, err := onHolder(ctx, r, owner, id, importTurnsCommand{From: from, Turns: turns})
	return meta, err
}

// importTurnsCommand is importTurns on the session's holder.
type importTurnsCommand struct {
	From  int            `json:"from"`
	Turns []session.Turn `json:"turns"`
}

func (importTurnsCommand) name() string { return "import_turns" }

func (b importTurnsCommand) apply(ctx context.Context, r *Runner, at target) (session.Meta, error) {
	return r.importTurnsLocal(ctx, at.owner, at.session, b.From, b.Turns)
}

func (r *Runner) importTurnsLocal(ctx context.Context, owner, id string, from int, turns []session.Turn) (session.Meta, error) {
	return r.control(ctx, owner, id, func(a *actor) error {
		if a.run != nil {
			return errs.Conflict(errs.CodeSessionExists, "session %s is running: import the file again once it stops", id)
		}
		if len(a.st.turns) != from {
			return errs.Conflict(errs.CodeSessionExists, "session %s went on while the file was compared with it: import it again", id)
		}
		e := a.edit()
		for _, t := range turns {
			a.addTurn(e, t)
		}
		return a.apply(e)
	})
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
