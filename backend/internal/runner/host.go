package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/tool"
)

// host is the operating system as one calling session sees it: the
// kernel operations tools use, acting as that session within its owner.
// Errors carry only what a client may read.
type host struct {
	r   *Runner
	env callEnv
}

var _ tool.Host = (*host)(nil)

func (h *host) Helper(ctx context.Context, call tool.Call, run tool.HelperRun) tool.Result {
	return h.r.runHelper(ctx, h.env, call, run)
}

func (h *host) HelperChild(ctx context.Context, callID string) (string, error) {
	return h.r.store.HelperChild(ctx, h.env.sessionID, callID)
}

func (h *host) SendMail(ctx context.Context, to, text string, urgent bool) (string, error) {
	prio := session.PriorityNormal
	if urgent {
		prio = session.PriorityUrgent
	}
	m, err := h.r.SendMail(ctx, h.env.owner, to, Mail{
		Body:        session.MailBody{Kind: session.MailAgentMessage, Agent: h.env.agent, Text: text},
		Priority:    prio,
		FromSession: h.env.sessionID,
	})
	if err != nil {
		return "", public(err)
	}
	return m.ID, nil
}

// Spawn starts a child of the calling session. Unlike a helper's child
// it answers no call: it lives on its own (a cancelled wait leaves it
// running), and it is given only the caller's params its agent declares.
func (h *host) Spawn(ctx context.Context, req tool.SpawnRequest) (tool.Spawned, error) {
	agent, err := h.r.cat.Get(req.Agent)
	if err != nil {
		return tool.Spawned{}, public(err)
	}
	if h.env.depth+1 > h.r.opts.MaxDepth {
		return tool.Spawned{}, fmt.Errorf("sessions may nest %d deep at most", h.r.opts.MaxDepth)
	}
	params := map[string]string{}
	for _, p := range agent.Params {
		if v, ok := h.env.params[p.Name]; ok {
			params[p.Name] = v
		}
	}
	child, err := h.r.CreateSession(ctx, h.env.owner, CreateRequest{
		Agent:    agent.Slug,
		Message:  &Message{Text: req.Prompt},
		ParentID: h.env.sessionID,
		Params:   params,
		Title:    req.Title,
	})
	if err != nil {
		return tool.Spawned{}, public(err)
	}
	spawned := tool.Spawned{ID: child.Meta.ID, Status: string(child.Meta.Status)}
	if !req.Wait {
		return spawned, nil
	}
	final, err := h.r.awaitRun(ctx, spawned.ID)
	if err != nil {
		return tool.Spawned{}, public(err)
	}
	spawned.Status, spawned.Reason = string(final.status), final.reason
	if final.status == session.StatusReady && final.reason == "" {
		spawned.Answer = final.text
	}
	return spawned, nil
}

func (h *host) SubSessions(ctx context.Context) ([]tool.SubSession, error) {
	children, err := h.r.store.Children(ctx, h.env.sessionID)
	if err != nil {
		return nil, public(err)
	}
	rows := make([]tool.SubSession, len(children))
	for i, c := range children {
		rows[i] = tool.SubSession{ID: c.ID, Agent: c.Agent, Status: string(c.Status), Title: c.Title}
	}
	return rows, nil
}

func (h *host) Watch(ctx context.Context, target string, ttl time.Duration) (time.Time, error) {
	w, err := h.r.WatchSession(ctx, h.env.owner, h.env.sessionID, target, ttl)
	if err != nil {
		return time.Time{}, public(err)
	}
	return w.Expires, nil
}

// public keeps of err what a client may read.
func public(err error) error { return errors.New(publicText(err)) }

func (h *host) ReadSession(ctx context.Context, id string, lastTurns int) (session.Meta, []session.Turn, error) {
	v, err := h.r.ReadSession(ctx, h.env.owner, id, ViewRequest{Turns: Turns{Last: lastTurns}})
	if err != nil {
		return session.Meta{}, nil, public(err)
	}
	return v.Meta, v.Turns, nil
}
