package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/session"
)

// runSystemTool runs one of the tools every agent gets for talking to the
// operating system: mail, sub-sessions, watches. They act as the calling
// session, within its owner.
func (r *Runner) runSystemTool(ctx context.Context, env callEnv, call session.ToolCall) session.ToolResult {
	var args struct {
		SessionID  string `json:"session_id"`
		Text       string `json:"text"`
		Urgent     bool   `json:"urgent"`
		TTLSeconds int    `json:"ttl_seconds"`
	}
	if err := json.Unmarshal([]byte(orEmptyObject(call.Arguments)), &args); err != nil {
		return errorResult(call, "arguments are not a JSON object: "+err.Error(), 0)
	}
	ok := func(text string) session.ToolResult {
		return session.ToolResult{CallID: call.ID, Name: call.Name, Text: text, Status: session.ResultOK}
	}
	switch call.Name {
	case catalog.ToolSendMail:
		prio := session.PriorityNormal
		if args.Urgent {
			prio = session.PriorityUrgent
		}
		m, err := r.SendMail(ctx, env.owner, args.SessionID, Mail{
			Body:        session.MailBody{Kind: session.MailAgentMessage, Agent: env.agent, Text: args.Text},
			Priority:    prio,
			FromSession: env.sessionID,
		})
		if err != nil {
			return errorResult(call, publicText(err), 0)
		}
		return ok("mail " + m.ID + " delivered to session " + args.SessionID)
	case catalog.ToolListSubSessions:
		children, err := r.store.Children(ctx, env.sessionID)
		if err != nil {
			return errorResult(call, publicText(err), 0)
		}
		type row struct {
			ID     string `json:"id"`
			Agent  string `json:"agent"`
			Status string `json:"status"`
			Title  string `json:"title"`
		}
		rows := make([]row, len(children))
		for i, c := range children {
			rows[i] = row{ID: c.ID, Agent: c.Agent, Status: string(c.Status), Title: c.Title}
		}
		b, _ := json.Marshal(rows)
		return ok(string(b))
	case catalog.ToolWatchSession:
		w, err := r.WatchSession(ctx, env.owner, env.sessionID, args.SessionID, time.Duration(args.TTLSeconds)*time.Second)
		if err != nil {
			return errorResult(call, publicText(err), 0)
		}
		return ok(fmt.Sprintf("watching session %s until %s", w.TargetID, w.Expires.Format(time.RFC3339)))
	}
	return errorResult(call, fmt.Sprintf("unknown system tool %q", call.Name), 0)
}
