package runner

import (
	"context"
	"errors"
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

func (h *host) Helper(ctx context.Context, call tool.Call, agent, prompt string) tool.Result {
	return h.r.runHelper(ctx, h.env, agent, call, prompt)
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
