package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// forkedText is the result of a call the fork cut off before it ran.
const forkedText = "not run: the session was forked before this call completed"

// ForkRequest says where and how to fork a session.
type ForkRequest struct {
	// AtTurn is the 0-based newest-first index of the last turn kept
	// (nil: the head).
	AtTurn *int
	// Agent, when set, binds the copy to another agent.
	Agent string
	// AgentVersion, when set, pins the copy to that version of its stored
	// agent (0: it follows the latest); nil keeps the source's pin when the
	// copy keeps its agent as it is now.
	AgentVersion *int64
	// Title is the copy's title; empty names it after its source and the
	// turn it was cut at (forkTitle).
	Title string
}

// ForkSession copies a session up to a turn into a new root session, with
// forked_from set (see ForkRequest).
//
// The copy takes the source's params, which live on the server holding
// the source: a source held elsewhere is forked there.
func (r *Runner) ForkSession(ctx context.Context, owner, id string, req ForkRequest) (View, error) {
	cmd := forkCommand{AtTurn: req.AtTurn, Agent: req.Agent, AgentVersion: req.AgentVersion, Title: req.Title}
	fork, forwarded, err := onHolder(ctx, r, owner, id, cmd)
	if forwarded && err == nil {
		return r.ReadSession(ctx, owner, fork.ID, ViewRequest{})
	}
	return fork.view, err
}

// forkCommand is ForkSession on the source's holder.
type forkCommand struct {
	AtTurn       *int   `json:"at_turn,omitempty"`
	Agent        string `json:"agent,omitempty"`
	AgentVersion *int64 `json:"agent_version,omitempty"`
	Title        string `json:"title,omitempty"`
}

type forkAnswer struct {
	ID string `json:"id"`
	// view is the copy, made on this server.
	view View
}

func (forkCommand) name() string { return "fork_session" }

func (b forkCommand) apply(ctx context.Context, r *Runner, at target) (forkAnswer, error) {
	if !at.forwarded() {
		view, err := r.forkLocal(ctx, at.owner, at.session, b, uuid.NewString())
		return forkAnswer{ID: view.Meta.ID, view: view}, err
	}
	// The copy's id is the command's: applied again, the fork finds the
	// copy the first apply made (the commands of one session are applied
	// one at a time, so nothing makes it in between).
	forkID := uuid.NewSHA1(uuid.NameSpaceOID, []byte(at.commandKey())).String()
	m, err := r.store.GetMeta(ctx, forkID)
	switch {
	case err == nil && m.ForkedFrom == at.session:
		return forkAnswer{ID: forkID}, nil
	case err != nil && errs.KindOf(err) != errs.KindNotFound:
		return forkAnswer{}, err
	}
	_, err = r.forkLocal(ctx, at.owner, at.session, b, forkID)
	return forkAnswer{ID: forkID}, err
}

// forkLocal forks on this server (see ForkSession); the copy is forkID.
func (r *Runner) forkLocal(ctx context.Context, owner, id string, cmd forkCommand, forkID string) (View, error) {
	atTurn, agent := cmd.AtTurn, cmd.Agent
	var meta session.Meta
	var turns []session.Turn
	var params map[string]string
	// results are those the calls of the last turn kept got, in the turn
	// after it.
	var results []session.ToolResult
	err := r.withSession(ctx, id, func(a *actor) error {
		if err := a.authorize(owner); err != nil {
			return err
		}
		n := len(a.st.turns)
		keep := n
		if atTurn != nil {
			if *atTurn < 0 || *atTurn >= n {
				return errs.NotFound(errs.CodeUnknownTurn, "session %s has no turn %d (it has %d turns; 0 is the newest)", id, *atTurn, n)
			}
			keep = n - *atTurn
		}
		meta, turns, params = a.st.meta, a.st.turns[:keep:keep], a.paramsCopy()
		if keep < n && a.st.turns[keep].User != nil {
			// The turn after the cut carries the results of its calls.
			results = append([]session.ToolResult(nil), a.st.turns[keep].User.ToolResults...)
		}
		return nil
	})
	if err != nil {
		return View{}, err
	}
	if agent == "" {
		agent = meta.Agent
	}
	bound, err := r.cat.Get(agent)
	if err != nil {
		return View{}, err
	}
	// The copy runs the agent as it is now, of whatever generation:
	// forking is how a session whose agent was replaced goes on. It keeps
	// the source's pin only where that version is still the same agent's.
	pin := int64(0)
	switch {
	case cmd.AgentVersion != nil:
		pin = *cmd.AgentVersion
	case agent == meta.Agent && bound.Generation == meta.AgentGen:
		pin = meta.AgentPin
	}
	if _, err := r.pinned(ctx, bound, pin); err != nil {
		return View{}, err
	}
	now := r.now()
	copied := append([]session.Turn(nil), turns...)
	if n := len(copied); n > 0 && copied[n-1].LLM != nil && len(copied[n-1].LLM.ToolCalls) > 0 {
		// Every call needs a result before the model is asked again: the
		// one it had, or one saying the fork cut it off.
		got := make(map[string]session.ToolResult, len(results))
		for _, res := range results {
			got[res.CallID] = res
		}
		var kept []session.ToolResult
		for _, c := range copied[n-1].LLM.ToolCalls {
			res, ok := got[c.ID]
			if !ok {
				res = session.ToolResult{CallID: c.ID, Name: c.Name, Text: forkedText, Status: session.ResultCancelled}
			}
			kept = append(kept, res)
		}
		copied = append(copied, session.Turn{Index: n, Created: now, User: &session.UserTurn{ToolResults: kept}})
	}
	title := cleanTitle(cmd.Title)
	if title == "" {
		title = forkTitle(meta.Title, len(turns))
	}
	fork := session.Meta{
		ID:         forkID,
		Agent:      agent,
		Owner:      meta.Owner,
		Title:      title,
		Status:     session.StatusReady,
		ForkedFrom: meta.ID,
		TurnCount:  len(copied),
		Created:    now,
		Updated:    now,
		AgentGen:   bound.Generation,
		AgentPin:   pin,
	}
	for _, t := range copied {
		fork.Usage = fork.Usage.Add(t.Usage())
	}
	return r.open(ctx, fork, copied, params, func(a *actor, e *edit) error { return a.apply(e) })
}

// forkTitle names a fork after its source and the turn it was cut at,
// counted from 1, so that a list tells the two apart: "Plan (fork at turn
// 3)". A long source title is shortened to leave room for the note.
func forkTitle(source string, turn int) string {
	source = cleanTitle(source)
	if source == "" {
		return fmt.Sprintf("Fork at turn %d", turn)
	}
	if runes := []rune(source); len(runes) > maxTitle {
		source = strings.TrimSpace(string(runes[:maxTitle-1])) + "…"
	}
	return fmt.Sprintf("%s (fork at turn %d)", source, turn)
}
