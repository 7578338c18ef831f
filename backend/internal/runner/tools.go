package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/bashtool"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/wire"
)

// startCalls starts the tool calls of a step: attached calls run
// concurrently and report back to the actor; deferred calls wait for a
// client. The round ends when every call has a result.
func (a *actor) startCalls(st *step, calls []session.ToolCall, rows []session.DeferredCall) {
	st.toolsStarted = a.r.now()
	st.calls = make([]*callState, len(calls))
	st.recorded = len(rows) > 0
	var deferred []session.DeferredCall
	for i, call := range calls {
		cs := &callState{call: call}
		if st.recorded {
			cs.token = rows[i].Token
		}
		st.calls[i] = cs
		tool, ok := a.agent.Tool(call.Name)
		if ok && tool.Mode() == session.CallDeferred {
			cs.tool = tool
			deferred = append(deferred, rows[i])
			continue
		}
		if !ok {
			// Answered on the spot; the round ends below once the calls
			// that do run are done too.
			a.record(cs, errorResult(call, fmt.Sprintf("unknown tool %q", call.Name), 0))
			continue
		}
		st.running++
		cs.tool = tool
		ctx, cancel := context.WithCancel(st.ctx)
		cs.cancel = cancel
		a.emit(&agentsv1.Event{Kind: "tool.started", Body: &agentsv1.Event_ToolStarted{ToolStarted: &agentsv1.ToolStarted{Call: wire.ToolCall(call)}}})
		env := callEnv{
			sessionID: a.id,
			owner:     a.st.meta.Owner,
			depth:     a.st.meta.Depth,
			agent:     a.agent.Slug,
			params:    a.paramsCopy(),
		}
		go func() {
			res := a.r.execute(ctx, env, tool, call)
			cancel()
			a.post(func(a *actor) { a.callDone(st, cs, res) })
		}()
	}
	if len(deferred) > 0 {
		a.waiting = st
		a.st.deferred = append(a.st.deferred, deferred...)
		a.st.meta.PendingCalls = len(a.st.deferred)
		views := make([]*agentsv1.DeferredCall, len(deferred))
		for i, d := range deferred {
			views[i] = wire.DeferredCall(d)
		}
		a.emit(&agentsv1.Event{Kind: "calls.deferred", Body: &agentsv1.Event_CallsDeferred{CallsDeferred: &agentsv1.CallsDeferred{Calls: views}}})
	}
	if st.running == 0 {
		a.attachedDone(st)
	}
}

// callDone records one finished attached call.
func (a *actor) callDone(st *step, cs *callState, res session.ToolResult) {
	if cs.result != nil || (!a.current(st) && a.waiting != st) {
		return
	}
	a.record(cs, res)
	if cs.tool != nil {
		a.emit(&agentsv1.Event{Kind: "tool.completed", Body: &agentsv1.Event_ToolCompleted{ToolCompleted: &agentsv1.ToolCompleted{Result: wire.ToolResult(res)}}})
	}
	st.running--
	if st.running == 0 {
		a.attachedDone(st)
	}
}

// record keeps a call's result; in a round that waits for clients it is
// also stored, so it outlives a restart.
func (a *actor) record(cs *callState, res session.ToolResult) {
	cs.result = &res
	if cs.token == "" {
		return
	}
	if _, err := a.r.store.CompleteDeferred(a.r.ctx, cs.token, res, a.r.now()); err != nil {
		a.r.log.Error("record attached result", "session", a.id, "call", res.CallID, "err", err)
	}
}

func (a *actor) paramsCopy() map[string]string {
	out := make(map[string]string, len(a.params))
	for k, v := range a.params {
		out[k] = v
	}
	return out
}

// callEnv is what a tool call needs to know about its session; it is a
// copy, because the call runs off the actor goroutine.
type callEnv struct {
	sessionID string
	owner     string
	depth     int
	agent     string
	params    map[string]string
}

// execute runs one tool call to its result. Every failure becomes an
// error result the model reads; a cancelled call reports cancelled.
func (r *Runner) execute(ctx context.Context, env callEnv, tool *catalog.Tool, call session.ToolCall) session.ToolResult {
	began := time.Now()
	var res session.ToolResult
	switch {
	case tool.Bash != nil:
		script := *tool.Bash
		if script.Limits == (bashtool.Limits{}) {
			script.Limits = r.opts.ToolLimits
		}
		out := script.Run(ctx, []byte(call.Arguments), bashtool.Env{
			SessionID:  env.sessionID,
			AgentSlug:  env.agent,
			ToolCallID: call.ID,
			Extra:      env.params,
		})
		res = session.ToolResult{CallID: call.ID, Name: call.Name, Text: out.Text, Status: session.ResultOK}
		if out.IsError {
			res.Status = session.ResultError
		}
	case tool.Helper != "":
		res = r.runHelper(ctx, env, tool.Helper, call)
	case tool.Kind == session.ToolSystem:
		res = r.runSystemTool(ctx, env, call)
	default:
		res = errorResult(call, fmt.Sprintf("tool %q cannot be run by the server", call.Name), 0)
	}
	if ctx.Err() != nil && res.Status != session.ResultOK {
		res.Status = session.ResultCancelled
		if res.Text == "" {
			res.Text = "cancelled"
		}
	}
	res.Duration = time.Since(began)
	return res
}

func errorResult(call session.ToolCall, text string, took time.Duration) session.ToolResult {
	return session.ToolResult{CallID: call.ID, Name: call.Name, Text: text, Status: session.ResultError, Duration: took}
}

// runHelper runs a helper agent as a child session of the caller and
// returns its final answer as the call's result.
func (r *Runner) runHelper(ctx context.Context, env callEnv, helper string, call session.ToolCall) session.ToolResult {
	var args struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal([]byte(orEmptyObject(call.Arguments)), &args); err != nil || args.Prompt == "" {
		return errorResult(call, `the helper needs {"prompt": "…"}: a non-empty prompt string`, 0)
	}
	if env.depth+1 > r.opts.MaxDepth {
		return errorResult(call, fmt.Sprintf("helper agents may nest %d deep at most", r.opts.MaxDepth), 0)
	}
	child, err := r.CreateSession(ctx, env.owner, CreateRequest{
		Agent:    helper,
		Message:  &Message{Text: args.Prompt},
		ParentID: env.sessionID,
		Params:   env.params,
	})
	if err != nil {
		return errorResult(call, fmt.Sprintf("could not start the helper %s: %v", helper, publicText(err)), 0)
	}
	childID := child.Meta.ID
	r.emitFor(env.sessionID, env.owner, &agentsv1.Event{Kind: "subcall.started", Body: &agentsv1.Event_SubcallStarted{SubcallStarted: &agentsv1.SubcallStarted{
		ChildSessionId: childID, Agent: helper, CallId: call.ID, Depth: int32(child.Meta.Depth),
	}}})
	final, err := r.awaitRun(ctx, childID)
	if err != nil {
		// The parent's call was cancelled: the child stops with it.
		stopCtx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
		defer cancel()
		_, _ = r.CancelRun(stopCtx, "", childID)
		r.emitFor(env.sessionID, env.owner, &agentsv1.Event{Kind: "subcall.failed", Body: &agentsv1.Event_SubcallFailed{SubcallFailed: &agentsv1.SubcallFailed{
			ChildSessionId: childID, CallId: call.ID, Reason: "cancelled",
		}}})
		return session.ToolResult{CallID: call.ID, Name: call.Name, Text: "cancelled", Status: session.ResultCancelled, ChildSessionID: childID}
	}
	if final.status == session.StatusRunning {
		// The server is stopping and the child's run will resume at the
		// next start; the parent learns the call did not finish here.
		return session.ToolResult{CallID: call.ID, Name: call.Name, Text: abortedText, Status: session.ResultAborted, ChildSessionID: childID}
	}
	if final.status != session.StatusReady || final.reason != "" {
		// Failed, paused, waiting, cancelled or out of steps: no answer.
		reason := final.reason
		if reason == "" {
			reason = string(final.status)
		}
		r.emitFor(env.sessionID, env.owner, &agentsv1.Event{Kind: "subcall.failed", Body: &agentsv1.Event_SubcallFailed{SubcallFailed: &agentsv1.SubcallFailed{
			ChildSessionId: childID, CallId: call.ID, Reason: reason,
		}}})
		return session.ToolResult{CallID: call.ID, Name: call.Name, Text: fmt.Sprintf("the helper %s did not answer: %s", helper, reason), Status: session.ResultError, ChildSessionID: childID}
	}
	r.emitFor(env.sessionID, env.owner, &agentsv1.Event{Kind: "subcall.completed", Body: &agentsv1.Event_SubcallCompleted{SubcallCompleted: &agentsv1.SubcallCompleted{
		ChildSessionId: childID, CallId: call.ID, Text: final.text,
	}}})
	return session.ToolResult{CallID: call.ID, Name: call.Name, Text: final.text, Status: session.ResultOK, ChildSessionID: childID}
}

func orEmptyObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}
