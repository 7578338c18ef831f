package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// Reasons a run stops, as reported in run.stopped.
const (
	StopDone      = "done"
	StopCancelled = "cancelled"
	StopPaused    = "paused"
	StopWaiting   = "waiting"
	StopMaxSteps  = "max_steps"
)

// run is the active run of a session.
type run struct {
	ctx      context.Context
	cancel   context.CancelFunc
	maxSteps int
	steps    int
	step     *step
	// stop, when set, ends the run at the next boundary with this reason.
	stop string
	// pause ends the run at the next boundary with status paused.
	pause bool
}

// step is one model call and the tool calls it asked for.
type step struct {
	ctx     context.Context
	cancel  context.CancelFunc
	started time.Time
	model   time.Duration
	// cut says the step was cut short on purpose (interrupt, cancel):
	// a model error caused by it is not a failure.
	cut bool
	// toolsStarted and toolsEnded bracket the tool calls of the step.
	toolsStarted, toolsEnded time.Time
	calls                    []*callState
	// running counts attached calls still in flight.
	running   int
	turnIndex int
	// recorded says every call of the round has a row in the store: the
	// round has deferred calls, so its results must survive a restart.
	recorded bool
	// resume is set once a client asked the run to go on when the round's
	// last deferred call is answered.
	resume bool
}

// callState is one tool call of a step.
type callState struct {
	call   session.ToolCall
	tool   *catalog.Tool
	cancel context.CancelFunc
	result *session.ToolResult
	// token is the call's row in the store, for a recorded round.
	token string
}

// startRun begins a run with a model call; the caller checked that none is
// active.
func (a *actor) startRun(trigger agentsv1.RunTrigger, maxSteps int) error {
	if err := a.openRun(trigger, maxSteps); err != nil {
		return err
	}
	a.beginStep()
	return nil
}

// openRun marks a run active without starting a step.
func (a *actor) openRun(trigger agentsv1.RunTrigger, maxSteps int) error {
	if missing := a.missingParams(); len(missing) > 0 {
		return paramsRequired(missing)
	}
	if maxSteps <= 0 {
		maxSteps = a.maxSteps()
	}
	if a.r.draining.Load() {
		return errClosing
	}
	ctx, cancel := context.WithCancel(a.r.ctx)
	a.run = &run{ctx: ctx, cancel: cancel, maxSteps: maxSteps}
	a.r.active.Add(1)
	if err := a.setStatus(session.StatusRunning, ""); err != nil {
		a.closeRun()
		return err
	}
	a.emit(&agentsv1.Event{Kind: "run.started", Body: &agentsv1.Event_RunStarted{RunStarted: &agentsv1.RunStarted{Trigger: trigger}}})
	return nil
}

func (a *actor) maxSteps() int {
	if a.agent != nil && a.agent.MaxSteps > 0 {
		return a.agent.MaxSteps
	}
	return a.r.opts.MaxSteps
}

// beginStep starts the next model call, unless the run must stop first.
func (a *actor) beginStep() {
	run := a.run
	switch {
	case a.r.draining.Load():
		// The server is stopping: the step that just ended is stored, the
		// store still says running, and the next start goes on from here.
		a.closeRun()
		return
	case run.stop != "":
		a.endRun(session.StatusReady, run.stop, "")
		return
	case run.pause:
		a.endRun(session.StatusPaused, StopPaused, "")
		return
	case run.steps >= run.maxSteps:
		a.endRun(session.StatusReady, StopMaxSteps, "")
		return
	}
	if a.agent == nil {
		a.failRun("unknown_agent", fmt.Sprintf("agent %q is not loaded", a.st.meta.Agent))
		return
	}
	if len(a.st.mail) > 0 {
		// Rule R1: every step starts by folding the pending mail into a
		// user turn, so the model sees it now.
		if err := a.appendUserTurn(session.UserTurn{}); err != nil {
			a.failRun("store_error", "could not store the mail")
			return
		}
	}
	model, err := a.r.opts.Models(a.agent.Model)
	if err != nil {
		a.failRun("model_error", err.Error())
		return
	}
	run.steps++
	ctx, cancel := context.WithCancel(run.ctx)
	st := &step{ctx: ctx, cancel: cancel, started: a.r.now(), turnIndex: len(a.st.turns)}
	run.step = st
	req := a.buildRequest()
	go func() {
		began := time.Now()
		resp, err := model.Stream(ctx, req, func(d llm.Delta) { a.publishDelta(st, d) })
		took := time.Since(began)
		a.post(func(a *actor) { a.modelDone(st, resp, err, took) })
	}()
}

func (a *actor) publishDelta(st *step, d llm.Delta) {
	switch {
	case d.Text != "":
		a.emit(&agentsv1.Event{Kind: "text.delta", Body: &agentsv1.Event_TextDelta{TextDelta: &agentsv1.TextDelta{Text: d.Text, TurnIndex: int32(st.turnIndex)}}})
	case d.Thinking != "":
		a.emit(&agentsv1.Event{Kind: "thinking.delta", Body: &agentsv1.Event_ThinkingDelta{ThinkingDelta: &agentsv1.ThinkingDelta{Text: d.Thinking, TurnIndex: int32(st.turnIndex)}}})
	}
}

// current reports whether st is the step in flight: reports from a step
// that was abandoned are dropped.
func (a *actor) current(st *step) bool {
	return a.run != nil && a.run.step == st
}

// modelDone takes the model's answer: it stores the LLM turn, then starts
// the tool calls or ends the round.
func (a *actor) modelDone(st *step, resp llm.Response, err error, took time.Duration) {
	if !a.current(st) {
		return
	}
	st.model = took
	if err != nil && !(st.cut && (isCancel(err) || errors.Is(err, llm.ErrInterrupted))) {
		if a.run.ctx.Err() != nil {
			return // the server is stopping; the run resumes at the next start
		}
		a.failRun("model_error", err.Error())
		return
	}
	turn := session.LLMTurn{
		Text:         resp.Text,
		Thinking:     resp.Thinking,
		Model:        resp.Model,
		FinishReason: resp.FinishReason,
		Usage: session.Usage{
			Prompt:     int64(resp.Usage.PromptTokens),
			Completion: int64(resp.Usage.CompletionTokens),
			Cached:     int64(resp.Usage.CachedTokens),
			Reasoning:  int64(resp.Usage.ReasoningTokens),
		},
	}
	if err != nil {
		// Cut short: keep the text that arrived; calls that were still
		// being written are dropped because they never ran.
		turn.Interrupted = true
	} else {
		for _, c := range resp.ToolCalls {
			turn.ToolCalls = append(turn.ToolCalls, a.classify(c))
		}
	}
	rows := a.roundRows(st, turn.ToolCalls)
	if err := a.commitWith(nil, rows, session.Turn{LLM: &turn}); err != nil {
		a.failRun("store_error", "could not store the answer")
		a.r.log.Error("commit llm turn", "session", a.id, "err", err)
		return
	}
	if len(turn.ToolCalls) == 0 {
		a.roundDone(st, turn.Text)
		return
	}
	a.startCalls(st, turn.ToolCalls, rows)
}

// classify stamps a model's tool call with its kind and mode.
func (a *actor) classify(c llm.ToolCall) session.ToolCall {
	call := session.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Mode: session.CallAttached}
	if t, ok := a.agent.Tool(c.Name); ok {
		call.Kind = t.Kind
		call.Mode = t.Mode()
	}
	return call
}

// answered reports whether the history ends with a model answer that
// called no tool and no mail waits: a run would have nothing to do.
func (a *actor) answered() bool {
	n := len(a.st.turns)
	return n > 0 && a.st.turns[n-1].LLM != nil && len(a.st.turns[n-1].LLM.ToolCalls) == 0 && len(a.st.mail) == 0
}

// roundDone ends a round that made no tool calls: the run continues when
// mail is waiting, and ends otherwise.
func (a *actor) roundDone(st *step, text string) {
	a.reportStep(st)
	if len(a.st.mail) > 0 && a.run.stop == "" {
		a.beginStep() // it folds the mail that arrived during the step
		return
	}
	reason := StopDone
	if a.run.stop != "" {
		reason = a.run.stop
	}
	a.endRun(session.StatusReady, reason, text)
}

// callsDone ends a round whose tool calls all have results: the results
// and the pending mail become the next user turn, and the run goes on.
func (a *actor) callsDone(st *step) {
	if err := a.storeRound(st); err != nil {
		a.failRun("store_error", "could not store the tool results")
		return
	}
	a.reportStep(st)
	a.beginStep()
}

func (a *actor) reportStep(st *step) {
	if a.r.opts.OnStep == nil || st.recorded {
		return
	}
	stats := StepStats{SessionID: a.id, Total: a.r.now().Sub(st.started), Model: st.model}
	if !st.toolsEnded.IsZero() {
		stats.Tools = st.toolsEnded.Sub(st.toolsStarted)
	}
	a.r.opts.OnStep(stats)
}

// appendUserTurn stores a user turn with every pending mail folded in
// (rule R1). With the agent's mailInToolResult, mail goes into the last
// tool result instead of the turn's text.
func (a *actor) appendUserTurn(u session.UserTurn) error {
	mail := a.st.mail
	ids := make([]string, len(mail))
	for i, m := range mail {
		ids[i] = m.ID
	}
	if len(mail) > 0 {
		now := a.r.now()
		folded := make([]session.Mail, len(mail))
		for i, m := range mail {
			m.Delivered = &now
			// The files join the turn's attachments, where the model sees
			// them; the folded mail keeps their names.
			u.Attachments = append(u.Attachments, m.Body.Attachments...)
			m.Body.Attachments = nil
			folded[i] = m
		}
		u.Mail = folded
	}
	if err := a.commit(ids, session.Turn{User: &u}); err != nil {
		a.r.log.Error("commit user turn", "session", a.id, "err", err)
		return err
	}
	a.st.mail = nil
	return nil
}

// commit appends turns with the session's new metadata in one
// transaction, then publishes the change.
func (a *actor) commit(deliveredMail []string, turns ...session.Turn) error {
	return a.commitWith(deliveredMail, nil, turns...)
}

// commitWith is commit that also records deferred calls.
func (a *actor) commitWith(deliveredMail []string, deferred []session.DeferredCall, turns ...session.Turn) error {
	meta := a.st.meta
	now := a.r.now()
	for i := range turns {
		turns[i].Index = len(a.st.turns) + i
		turns[i].Created = now
		if turns[i].LLM != nil {
			meta.Usage = meta.Usage.Add(turns[i].LLM.Usage)
		}
	}
	meta.TurnCount += len(turns)
	meta.PendingMail -= len(deliveredMail)
	meta.Updated = now
	err := a.r.store.CommitStep(a.r.ctx, store.StepCommit{Meta: meta, NewTurns: turns, DeliveredMail: deliveredMail, NewDeferred: deferred})
	if err != nil {
		return err
	}
	a.st.meta = meta
	a.st.turns = append(a.st.turns, turns...)
	a.emitUpdated(&turns[len(turns)-1])
	return nil
}

// endRun records the end of a run.
func (a *actor) endRun(status session.Status, reason, text string) {
	run := a.run
	statusReason := ""
	if reason != StopDone {
		statusReason = reason
	}
	if err := a.setStatus(status, statusReason); err != nil {
		a.r.log.Error("store run end", "session", a.id, "err", err)
	}
	a.closeRun()
	a.emit(&agentsv1.Event{Kind: "run.stopped", Body: &agentsv1.Event_RunStopped{RunStopped: &agentsv1.RunStopped{
		Status: statusWire(status), Reason: reason, Steps: int32(run.steps), Text: text,
	}}})
	a.notifyWatchers(status, reason, text)
}

// failRun ends the run as failed; the session accepts input again.
func (a *actor) failRun(code, reason string) {
	if err := a.setStatus(session.StatusFailed, reason); err != nil {
		a.r.log.Error("store run failure", "session", a.id, "err", err)
	}
	a.closeRun()
	a.emit(&agentsv1.Event{Kind: "session.failed", Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Reason: reason, Code: code}}})
	a.notifyWatchers(session.StatusFailed, reason, "")
}

// closeRun forgets the active run: what is in flight is cancelled and
// whoever waits for the session to be idle is woken. Recording how the run
// ended is the caller's business.
func (a *actor) closeRun() {
	if a.run == nil {
		return
	}
	a.run.cancel()
	a.run = nil
	a.r.active.Add(-1)
	a.wakeIdleWaiters()
}

// setStatus stores a new status and publishes the change.
func (a *actor) setStatus(status session.Status, reason string) error {
	meta := a.st.meta
	meta.Status = status
	meta.StatusReason = reason
	meta.Updated = a.r.now()
	if err := a.r.store.UpdateMeta(a.r.ctx, meta); err != nil {
		return err
	}
	a.st.meta = meta
	a.emitUpdated(nil)
	return nil
}

// cutStep cancels the model call and the tool calls in flight; what they
// produced so far is kept and the run goes on from there.
func (a *actor) cutStep() {
	if a.run == nil || a.run.step == nil {
		return
	}
	a.run.step.cut = true
	a.run.step.cancel()
}
