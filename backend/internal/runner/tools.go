package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/tool"
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
			cs.approval = rows[i].Reason == reasonApproval
		}
		st.calls[i] = cs
		t, ok := st.tools.Get(call.Name)
		cs.tool = t
		switch {
		case call.Mode == session.CallDeferred:
			// The decision made when the model asked (see decide).
			deferred = append(deferred, rows[i])
		case !ok:
			// Answered on the spot; the round ends below once the calls
			// that do run are done too.
			res := errorResult(call, fmt.Sprintf("unknown tool %q", call.Name), 0)
			cs.result = &res
		}
	}
	for _, cs := range st.calls {
		if cs.result == nil && cs.call.Mode != session.CallDeferred {
			a.launch(st, cs, false)
		}
	}
	if len(deferred) > 0 {
		a.waiting = st
		a.st.deferred = append(a.st.deferred, deferred...)
		a.st.meta.PendingCalls = len(a.st.deferred)
	}
	if st.running == 0 {
		a.attachedDone(st)
	}
}

// launch runs one attached call on its own goroutine; it reports back to
// the actor. A call of a round rebuilt from the store has no tool yet: it
// is found in the session's toolset, as the step that asked for the call
// found it (see toolset). rejoin takes up a call that was in flight when
// the server stopped: a tool whose work outlives the process (a helper's
// child) waits for that work again; any other call gets an aborted
// result, as it may or may not have had its effect.
func (a *actor) launch(st *step, cs *callState, rejoin bool) {
	st.running++
	cs.running, cs.waits = true, ""
	ctx, cancel := context.WithCancel(st.ctx)
	cs.cancel = cancel
	env := a.callEnv()
	t, call := cs.tool, cs.call
	var tools func(context.Context) *catalog.Toolset
	if t == nil {
		tools = a.toolset()
	}
	// Refused once the runner closes, when the actor drops its run (see
	// shutdown): the next start takes the call up.
	a.r.goroutines.Go(func() {
		ctx, span := a.r.tracer.StartTool(ctx, call, env.sessionID)
		res, stopped := a.r.runCall(ctx, env, t, tools, call, rejoin)
		a.r.tracer.EndTool(span, res, stopped)
		cancel()
		a.post(func(a *actor) { a.callDone(st, cs, res, stopped) })
	})
}

// runCall finds a launched call's tool when it has none yet, and runs
// the call (see launch).
func (r *Runner) runCall(ctx context.Context, env callEnv, t tool.Tool, tools func(context.Context) *catalog.Toolset, call session.ToolCall, rejoin bool) (session.ToolResult, bool) {
	if t == nil {
		var ok bool
		if t, ok = tools(ctx).Get(call.Name); !ok && rejoin {
			return abortedResult(call), false
		} else if !ok {
			return errorResult(call, "the agent no longer has the tool "+call.Name, 0), false
		}
	}
	if rejoin {
		rt, ok := t.(tool.Resumable)
		if !ok {
			return abortedResult(call), false
		}
		child, err := rt.Rejoin(ctx, &host{r: r, env: env}, call.ID)
		if err != nil {
			r.log.Error("find the work of a call to take up", "session", env.sessionID, "call", call.ID, "err", err)
		}
		if child == "" {
			return abortedResult(call), false
		}
		env.child = child
	}
	return r.execute(ctx, env, t, call)
}

// toolset returns the function that lists the session's tools as they
// are now, for its agent and with its params: the one way a session's
// tools are found, by the step that offers them to the model and by a
// round rebuilt after an eviction or a restart alike, so both see the
// same tools, those of MCP servers that take the session's params too,
// and those of the toolgroups its history activated (see disclosure.go).
// Call it on the actor; the function it returns may start MCP servers,
// so run that off the actor.
func (a *actor) toolset() func(context.Context) *catalog.Toolset {
	agent, params, active := a.agent, a.paramsSnapshot(), a.activeGroups()
	return func(ctx context.Context) *catalog.Toolset {
		if agent == nil {
			return &catalog.Toolset{}
		}
		return agent.Disclose(agent.Toolset(ctx, params), active)
	}
}

// callDone records one finished attached call.
func (a *actor) callDone(st *step, cs *callState, res session.ToolResult, stopped bool) {
	if cs.result != nil || (!a.current(st) && a.waiting != st) {
		return
	}
	cs.running = false
	switch {
	case stopped && res.ChildSessionID != "":
		// The helper's child waits for a client: the call rests until
		// the child goes on (see helperwait.go).
		cs.child, cs.waits = res.ChildSessionID, res.Text
	case stopped:
		st.shutdown = true
	default:
		cs.result = &res
		ev := events.WithKind(&agentsv1.Event{SessionId: a.id, Owner: a.owner,
			Body: &agentsv1.Event_ToolCompleted{ToolCompleted: &agentsv1.ToolCompleted{Result: wire.ToolResult(res)}}})
		if st.running == 1 && cs.token == "" && unanswered(st) == 0 {
			// The round's last call in a round that goes on at once: its
			// event goes out with the round's results, in one write.
			st.completed = append(st.completed, ev)
			st.running--
			a.attachedDone(st)
			return
		}
		ch := &store.Change{}
		if cs.token != "" {
			// A round that waits for clients keeps its results in the
			// store, so they outlive a restart.
			ch.Completed = []store.Completion{{Token: cs.token, Result: res, At: a.r.now()}}
		}
		if err := a.write(a.r.ctx, ch, []*agentsv1.Event{ev}); err != nil {
			a.log().Error("record tool result", "session", a.id, "call", res.CallID, "err", err)
		} else {
			cs.stored = cs.token != ""
		}
	}
	st.running--
	if st.running == 0 {
		a.attachedDone(st)
	}
}

// paramsSnapshot is paramsCopy for a reader that never writes to it:
// nil for a session without params, most of them, which spares every
// step a map.
func (a *actor) paramsSnapshot() map[string]string {
	if len(a.params) == 0 {
		return nil
	}
	return a.paramsCopy()
}

func (a *actor) paramsCopy() map[string]string {
	out := make(map[string]string, len(a.params))
	for k, v := range a.params {
		out[k] = v
	}
	return out
}

// callEnv returns what a call of this session knows about it.
func (a *actor) callEnv() callEnv {
	return callEnv{
		sessionID: a.id,
		owner:     a.owner,
		depth:     a.st.meta.Depth,
		agent:     a.st.meta.Agent,
		params:    a.paramsCopy(),
	}
}

// callEnv is what a tool call needs to know about its session; it is a
// copy, because the call runs off the actor goroutine.
type callEnv struct {
	sessionID string
	owner     string
	depth     int
	agent     string
	params    map[string]string
	// child is the helper's child session, when a restarted call waits
	// for it again.
	child string
}

// execute runs one tool call to its result, through the tool's own
// Execute, on its arguments as the tool decodes them (the value decide
// judged); arguments the tool refuses are the call's error result, and
// nothing runs. Every failure becomes an error result the model reads; a
// cancelled call reports cancelled. stopped says the call did not finish
// and must be taken up again: because the server is stopping (at the
// next start), or because the helper's child it waits for waits for a
// client (once the child goes on); then res names the child
// (ChildSessionID) and what it waits for (Text).
func (r *Runner) execute(ctx context.Context, env callEnv, t tool.Tool, call session.ToolCall) (res session.ToolResult, stopped bool) {
	began := time.Now()
	args, err := r.schemas.Decode(t.Spec(), call.Arguments)
	if err != nil {
		return errorResult(call, err.Error(), time.Since(began)), false
	}
	progress := r.newProgress(env, call.ID)
	out := t.Execute(ctx, tool.Call{
		ID:   call.ID,
		Name: call.Name,
		Args: args,
		Session: tool.Session{
			ID:     env.sessionID,
			Owner:  env.owner,
			Agent:  env.agent,
			Depth:  env.depth,
			Params: env.params,
		},
		Progress: progress.report,
		Host:     &host{r: r, env: env},
		Resume:   env.child,
	})
	progress.stop()
	if out.Suspended {
		// The child a call waits for, if any, and what it waits for.
		return session.ToolResult{CallID: call.ID, Name: call.Name, ChildSessionID: out.ChildSessionID, Text: out.Text}, true
	}
	res = session.ToolResult{CallID: call.ID, Name: call.Name, Text: out.Text, Status: out.Status, ChildSessionID: out.ChildSessionID}
	if res.Status == "" {
		res.Status = session.ResultOK
	}
	if ctx.Err() != nil && res.Status != session.ResultOK {
		res.Status = session.ResultCancelled
		if res.Text == "" {
			res.Text = "cancelled"
		}
	}
	res.Duration = time.Since(began)
	return res, false
}

func errorResult(call session.ToolCall, text string, took time.Duration) session.ToolResult {
	return session.ToolResult{CallID: call.ID, Name: call.Name, Text: text, Status: session.ResultError, Duration: took}
}

// runHelper runs a helper agent as a child session of the caller and
// returns its final answer as the call's result. Which child a call runs
// is stored with the child, so after a restart the call waits for the same
// child instead of starting the work again. stopped says the server is
// stopping while the child still runs: the call is taken up at the next
// start.
func (r *Runner) runHelper(ctx context.Context, env callEnv, call tool.Call, run tool.HelperRun) tool.Result {
	helper := run.Agent
	childID := call.Resume
	if childID == "" {
		if env.depth+1 > r.opts.MaxDepth {
			return tool.Failed(fmt.Sprintf("helper agents may nest %d deep at most", r.opts.MaxDepth))
		}
		params := env.params
		if n := run.Narrowing; n != nil && len(n.Params) > 0 {
			params = make(map[string]string, len(env.params)+len(n.Params))
			maps.Copy(params, env.params)
			maps.Copy(params, n.Params)
		}
		child, err := r.CreateSession(ctx, env.owner, CreateRequest{
			Agent:    helper,
			Message:  &Message{Text: run.Prompt},
			ParentID: env.sessionID,
			Params:   params,
			helperOf: &helperOf{callID: call.ID, agent: helper, narrowing: run.Narrowing},
		})
		if err != nil {
			return tool.Failed(fmt.Sprintf("could not start the helper %s: %v", helper, publicText(err)))
		}
		childID = child.Meta.ID
	} else {
		// Taken up again after a restart: the child may not have been
		// recovered yet.
		err := r.withSession(ctx, childID, func(a *actor) error { return a.recoverRun() })
		if errs.KindOf(err) == errs.KindNotFound {
			return tool.Failed(fmt.Sprintf("the helper %s's session %s is gone", helper, childID))
		}
	}
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	r.followChild(followCtx, childID, call.Progress)
	final, err := r.awaitChild(ctx, childID)
	if err == nil && final.waits != "" {
		// The child waits for its clients (an approval, say): so does
		// the call, and the parent with it, until the child goes on
		// (see helperwait.go). Its answer is the parent's result, once
		// it has one.
		return tool.Result{Suspended: true, ChildSessionID: childID, Text: helperWaits(childID, helper, final.waits)}
	}
	if err != nil {
		if r.ctx.Err() != nil || r.draining.Load() || errors.Is(context.Cause(ctx), errLeaseLost) {
			// The server that takes the parent up waits for the child
			// again.
			return tool.Result{Suspended: true}
		}
		// The parent's call was cancelled: the child stops with it.
		stopCtx, cancel := context.WithTimeout(r.ctx, 5*time.Second)
		defer cancel()
		_, _ = r.CancelRun(stopCtx, "", childID)
		r.subcall(env, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_SubcallFailed{SubcallFailed: &agentsv1.SubcallFailed{
			ChildSessionId: childID, CallId: call.ID, Reason: "cancelled",
		}}}))
		return tool.Result{Text: "cancelled", Status: session.ResultCancelled, ChildSessionID: childID}
	}
	if final.status == session.StatusRunning {
		if r.ctx.Err() != nil || r.draining.Load() || errors.Is(context.Cause(ctx), errLeaseLost) {
			// The server is stopping and the child's run will resume at
			// the next start; so will this call, waiting for it.
			return tool.Result{Suspended: true}
		}
		final.reason = "its run stopped without an answer"
	}
	if final.status != session.StatusReady || final.reason != "" {
		// Failed, cancelled or out of steps: no answer.
		reason := final.reason
		if reason == "" {
			reason = string(final.status)
		}
		r.subcall(env, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_SubcallFailed{SubcallFailed: &agentsv1.SubcallFailed{
			ChildSessionId: childID, CallId: call.ID, Reason: reason,
		}}}))
		return tool.Result{Text: fmt.Sprintf("the helper %s did not answer: %s", helper, reason), Status: session.ResultError, ChildSessionID: childID}
	}
	r.subcall(env, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_SubcallCompleted{SubcallCompleted: &agentsv1.SubcallCompleted{
		ChildSessionId: childID, CallId: call.ID, Text: final.text,
	}}}))
	return tool.Result{Text: final.text, Status: session.ResultOK, ChildSessionID: childID}
}

// awaitChild waits for a helper's child to be at rest (see awaitRun).
// A child another server runs (servers that claimed a parent and its
// child apart) is waited for in the store, where its run ends.
func (r *Runner) awaitChild(ctx context.Context, id string) (runOutcome, error) {
	for {
		out, err := r.awaitRun(ctx, id)
		if errs.CodeOf(err) != errs.CodeLeaseHeld {
			return out, err
		}
		meta, err := r.store.GetMeta(ctx, id)
		if err != nil {
			return runOutcome{}, err
		}
		if meta.Status.AcceptsInput() {
			_, turns, err := r.store.LoadSession(ctx, id)
			if err != nil {
				return runOutcome{}, err
			}
			out := runOutcome{status: meta.Status, reason: meta.StatusReason, text: lastAnswerOf(turns)}
			switch meta.Status {
			case session.StatusPaused:
				out.waits = "is paused"
			case session.StatusWaiting:
				// The server that runs the child knows what it waits
				// for; its status reason says it to a user.
				out.waits = "waits: " + meta.StatusReason
			}
			return out, nil
		}
		t := time.NewTimer(readPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return runOutcome{}, ctx.Err()
		case <-t.C:
		}
	}
}

// subcall publishes an event of a helper call, stamped with the parent.
func (r *Runner) subcall(env callEnv, ev *agentsv1.Event) {
	ev.SessionId, ev.Owner = env.sessionID, env.owner
	if err := r.announce(r.ctx, ev); err != nil {
		r.log.Error("announce helper call", "session", env.sessionID, "err", err)
	}
}
