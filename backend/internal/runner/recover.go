package runner

import (
	"context"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
)

// abortedText is the result of a call that was in flight when the server
// stopped: the model learns the call may or may not have had its effect.
const abortedText = "the server restarted while this call was running; it may or may not have completed"

// Recover resumes the runs that were active when the server last stopped.
// Calls that were in flight get an aborted result; the interrupted model
// call is simply made again.
func (r *Runner) Recover(ctx context.Context) error {
	metas, err := r.store.ListByStatus(ctx, session.StatusRunning)
	if err != nil {
		return err
	}
	for _, m := range metas {
		err := r.withSession(ctx, m.ID, func(a *actor) error { return a.resume() })
		if err != nil {
			r.log.Error("recover session", "session", m.ID, "err", err)
			continue
		}
		r.log.Info("recovered session", "session", m.ID)
	}
	return nil
}

// resume restarts the run of a session found running at start.
func (a *actor) resume() error {
	if a.run != nil {
		return nil
	}
	if n := len(a.st.turns); n > 0 {
		last := a.st.turns[n-1]
		if last.LLM != nil && len(last.LLM.ToolCalls) == 0 && len(a.st.mail) == 0 {
			// The answer was stored but not the end of the run: it ended.
			return a.setStatus(session.StatusReady, "")
		}
		if last.LLM != nil && len(last.LLM.ToolCalls) > 0 {
			results := make([]session.ToolResult, len(last.LLM.ToolCalls))
			for i, c := range last.LLM.ToolCalls {
				results[i] = session.ToolResult{CallID: c.ID, Name: c.Name, Text: abortedText, Status: session.ResultAborted}
			}
			if err := a.appendUserTurn(session.UserTurn{ToolResults: results}); err != nil {
				return err
			}
		}
	}
	return a.startRun(agentsv1.RunTrigger_RUN_TRIGGER_RECOVERY, 0)
}
