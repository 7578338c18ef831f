package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/backend/internal/tracing"
	"github.com/agents-os/agents/backend/internal/wire"
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
	ctx    context.Context
	cancel context.CancelFunc
	// lose cancels the run with a cause (errLeaseLost).
	lose     context.CancelCauseFunc
	maxSteps int
	steps    int
	step     *step
	// stop, when set, ends the run at the next boundary with this reason.
	stop string
	// pause ends the run at the next boundary with status paused.
	pause bool
	// owner holds the run's place in the run limits.
	owner string
	// budget, when the run stops for a spent budget, names it.
	budget string
	// span is the run's invoke_agent span (see trace.go); ctx carries it.
	// spent is what the run's model calls spent, kept only while the
	// span records.
	span  trace.Span
	spent session.Usage
	// agentVersion is the version of its stored agent current when the
	// run started, which every step of the run runs (0: a file agent);
	// a pinned session runs its pin instead (see agentFor).
	agentVersion int64
	// compactions counts the compactions since the last model answer;
	// overflowed says the provider refused a request of this run for the
	// window, and compactOnly that the run only compacts (Compact).
	compactions int
	overflowed  bool
	compactOnly bool
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
	// agentVersion is the version of the agent the step runs: it
	// finishes on it even when the agent changes meanwhile.
	agentVersion int64
	// recorded says every call of the round has a row in the store: the
	// round has deferred calls, so its results must survive a restart.
	recorded bool
	// resume is set once a client asked the run to go on when the round's
	// last deferred call is answered.
	resume bool
	// progress is the turn the model is streaming.
	progress progress
	// tools are the tools offered to the model in this step: its calls
	// are resolved against them. Set by the model call's goroutine before
	// it reports back.
	tools *catalog.Toolset
	// shutdown says a call was cut by the server stopping: the round is
	// not stored, so the next start takes it up again.
	shutdown bool
	// completed is the tool.completed event of the round's last call,
	// written with the round's results when nothing else waits.
	completed []*agentsv1.Event
	// admission is the budgets' answer that let the model call start;
	// admitted says there was one.
	admission store.Admission
	admitted  bool
	// input is the request's measured input tokens.
	input int64
}

// callState is one tool call of a step.
type callState struct {
	call   session.ToolCall
	tool   tool.Tool
	cancel context.CancelFunc
	result *session.ToolResult
	// token is the call's row in the store, for a recorded round.
	token string
	// stored says the result is in the call's row already.
	stored bool
	// approval says the call waits, or waited, for a client's approval;
	// approved that it got it and runs on the server.
	approval, approved bool
	// running says the call runs on a goroutine of its own (see launch).
	running bool
	// child is the helper's child session the call waits for, once
	// known; waits, while the call rests because the child waits for a
	// client, says what for (see helperwait.go).
	child, waits string
}

// startRun starts a run with a model call, writing e (a new user turn,
// say) together with the run's start: a crash can never leave a turn that
// was meant to start a run without one. The caller checked none is active.
func (a *actor) startRun(e *edit, trigger agentsv1.RunTrigger, maxSteps int) error {
	if err := a.openRun(e, trigger, maxSteps); err != nil {
		return err
	}
	a.beginStep()
	return nil
}

// openRun writes e with the session marked running and run.started, and
// makes the run active, without starting a step.
func (a *actor) openRun(e *edit, trigger agentsv1.RunTrigger, maxSteps int) error {
	return a.openRunWith(e, trigger, maxSteps, true)
}

// openRunWith is openRun; needParams says the run cannot start without
// the agent's required params (a recovered round that only waits for a
// helper's child can).
func (a *actor) openRunWith(e *edit, trigger agentsv1.RunTrigger, maxSteps int, needParams bool) error {
	if missing := a.missingParams(); len(missing) > 0 && needParams {
		return paramsRequired(missing)
	}
	if maxSteps <= 0 {
		maxSteps = a.maxSteps()
	}
	if a.r.draining.Load() {
		return errClosing
	}
	if err := a.r.slots.take(e.meta.Owner); err != nil {
		return err
	}
	e.meta.Status, e.meta.StatusReason = session.StatusRunning, ""
	version := a.r.runVersion(e.meta, trigger)
	if v := max(version, e.meta.AgentPin); v > 0 {
		// Stored with the run's start: what the session runs, and what
		// a run recovered after a crash goes on with.
		e.meta.AgentVersion = v
	}
	// Every run's start has the event: its messages are one allocation.
	started := &struct {
		ev      agentsv1.Event
		body    agentsv1.Event_RunStarted
		started agentsv1.RunStarted
	}{}
	started.started.Trigger = trigger
	started.body.RunStarted = &started.started
	started.ev.Body = &started.body
	e.emit(a, events.WithKind(&started.ev))
	if err := a.apply(e); err != nil {
		a.r.slots.give(e.meta.Owner)
		return err
	}
	ctx, cancel := context.WithCancelCause(a.r.ctx)
	ctx, span := a.startRunSpan(ctx, trigger)
	a.run = &run{ctx: ctx, cancel: func() { cancel(nil) }, lose: cancel, maxSteps: maxSteps, owner: e.meta.Owner, span: span,
		agentVersion: version}
	a.r.active.Add(1)
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
	// Each step takes its agent from the catalog: the version the run
	// started with (or the session's pin), so a run never mixes versions
	// of a stored agent; a reload of the files reaches live sessions at
	// their next step.
	if err := a.refreshAgent(); agentGone(err) {
		a.failRun(errs.CodeOf(err), err.Error())
		return
	}
	if a.agent == nil {
		a.failRun(errs.CodeUnknownAgent, fmt.Sprintf("agent %q is not loaded", a.st.meta.Agent))
		return
	}
	if missing := a.missingParams(); len(missing) > 0 {
		// Only a run taken up after a restart gets here without them.
		a.closeRun()
		a.needParams(missing)
		return
	}
	if len(a.st.mail) > 0 || a.dangling() {
		// Rule R1: every step starts by folding the pending mail into a
		// user turn, so the model sees it now. A history that ends with
		// calls nobody answered gets their results first.
		e := a.edit()
		a.addUserTurn(e, session.UserTurn{})
		if err := a.apply(e); err != nil {
			a.stall(e, err, func() {
				if a.run == run {
					a.beginStep()
				}
			})
			return
		}
	}
	run.steps++
	a.launchStep()
}

// launchStep starts the model call of the run's step: the request is
// measured first, and compacted when it would not fit (see compact.go).
// A compaction comes back here once it is stored.
func (a *actor) launchStep() {
	run := a.run
	model, err := a.r.opts.Models(a.agent.Model)
	if err != nil {
		a.failRun(errs.CodeModelError, err.Error())
		return
	}
	ctx, cancel := context.WithCancel(run.ctx)
	st := &step{ctx: ctx, cancel: cancel, started: a.r.now(), turnIndex: len(a.st.turns), agentVersion: a.agent.Version}
	st.progress.turnIndex = st.turnIndex
	run.step = st
	req := a.buildRequest()
	measured := a.prompt.measure(a.st.turns)
	if ask := a.compactAsk; ask != nil {
		a.compactAsk = nil
		a.compactFirst(st, measured.estimated, session.CompactManual, *ask)
		return
	}
	fit := a.window()
	p := &a.prompt
	counter, estimator := p.counter, p.estimator
	tools := a.toolset()
	budget, maxOutput := a.callBudget(), min(fit.maxOutput, a.maxOutput())
	flavor, endpoint, modelName := a.agent.Model.Flavor, a.agent.Model.URL, a.agent.Model.Name
	compacting := run.compactions < maxCompactions
	a.r.workers.do(func() {
		began := time.Now()
		// Listing the tools may start MCP servers: off the actor. Their
		// definitions are part of the input.
		st.tools = tools(ctx)
		req.Tools = toolSpecs(st.tools)
		listed := time.Since(began)
		input := measured.estimated
		if !measured.withTools() {
			input += int64(estimator.Tools(req.Tools))
		}
		if input > fit.threshold {
			// Near the window the estimate's margin matters: the
			// tokenizer decides. Its vocabulary is built on first need:
			// the first request of a family to come this near waits for
			// it (a fraction of a second, once), rather than compact on
			// the estimate.
			if !counter.Exact() {
				select {
				case <-counter.Ready():
				case <-time.After(tokenizerWait):
				case <-ctx.Done():
				}
			}
			input = measured.exact(counter, req)
			if input > fit.threshold && compacting {
				a.post(func(a *actor) { a.compactFirst(st, input, session.CompactThreshold, "") })
				return
			}
		}
		st.input = input
		output := maxOutput
		if room := fit.window - input - fit.settings.Margin; room < output {
			// Near the window: the answer gets what is left of it, less
			// the margin kept for the measure's error, so the request is
			// not refused for its output.
			output = max(room, minOutput)
			req.MaxTokens = int(output)
		}
		// The budgets admit the call before it starts, off the actor: the
		// database decides, for every server on it.
		adm, err := a.r.admit(ctx, budget, input, output)
		if err != nil && ctx.Err() != nil {
			// The step was cut (cancel, interrupt) or the server is
			// stopping before the call started: as if the model call had
			// been cut.
			a.post(func(a *actor) { a.modelDone(st, llm.Response{}, ctx.Err(), 0) })
			return
		}
		if err != nil {
			a.post(func(a *actor) {
				if a.current(st) && a.run.ctx.Err() == nil {
					a.failRun(errs.CodeBudgetUnavailable, "the budgets could not be read: "+err.Error())
				}
			})
			return
		}
		if adm.Exceeded != "" {
			a.post(func(a *actor) { a.budgetStopped(st, adm) })
			return
		}
		st.admission, st.admitted = adm, true
		if adm.Output > 0 {
			// The call may spend no more output than it reserved.
			req.MaxTokens = int(adm.Output)
		}
		// The model's time is the tools' listing and the call, not the
		// wait for admission.
		began = time.Now().Add(-listed)
		chatCtx, span := a.r.tracer.StartChat(ctx, flavor, endpoint, a.id, req)
		resp, err := model.Stream(chatCtx, req, func(d llm.Delta) { a.publishDelta(st, d) })
		took := time.Since(began)
		a.r.tracer.EndChat(span, resp, a.r.opts.Budgets.chatCost(span, resp, modelName), err)
		a.post(func(a *actor) { a.modelDone(st, resp, err, took) })
	})
}

// refreshAgent takes the definition the session's next step runs (see
// agentFor); nil, with the error saying why, when there is none.
func (a *actor) refreshAgent() error {
	var started int64
	if a.run != nil {
		started = a.run.agentVersion
	}
	agent, err := a.r.agentFor(a.r.ctx, a.st.meta, started)
	a.agent = agent
	return err
}

// dangling reports whether the history ends with tool calls that have no
// results and no round waits for them.
func (a *actor) dangling() bool {
	n := len(a.st.turns)
	return n > 0 && a.st.turns[n-1].LLM != nil && len(a.st.turns[n-1].LLM.ToolCalls) > 0
}

// publishDelta runs on the model call's goroutine: it adds the delta to
// the step's turn in progress and publishes it in one critical section,
// so a view taken under the same lock is exact about which deltas it
// holds.
func (a *actor) publishDelta(st *step, d llm.Delta) {
	st.progress.mu.Lock()
	defer st.progress.mu.Unlock()
	ev := st.progress.add(d)
	if ev == nil {
		return
	}
	ev.SessionId, ev.Owner = a.id, a.owner
	a.r.hub.PublishDelta(ev)
	if a.r.opts.RelayDelta != nil {
		a.r.opts.RelayDelta(ev)
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
		if a.overflowed(st, err) {
			return
		}
		a.failRun(errs.CodeModelError, err.Error())
		return
	}
	a.run.compactions, a.run.overflowed = 0, false
	turn := session.LLMTurn{
		Text:         resp.Text,
		Thinking:     resp.Thinking,
		Model:        resp.Model,
		FinishReason: resp.FinishReason,
		AgentVersion: st.agentVersion,
		Usage:        a.spent(resp),
		Duration:     took,
	}
	if err != nil {
		// Cut short: keep the text that arrived; calls that were still
		// being written are dropped because they never ran.
		turn.Interrupted = true
	}
	var reasons []string
	if err == nil {
		for _, c := range resp.ToolCalls {
			call, d := a.decide(st, c)
			turn.ToolCalls = append(turn.ToolCalls, call)
			reasons = append(reasons, d.reason)
		}
	}
	e := a.edit()
	a.addTurn(e, session.Turn{LLM: &turn})
	// The answer settles the call's reservation with what it spent, in
	// the write that stores it.
	spent := turn.Usage.Spend()
	e.spend = &store.SpendChange{
		SessionID: a.id, RootID: e.meta.Root(), Owner: e.meta.Owner, Spend: spent, At: a.r.now(), Reserved: st.admission.Reserved,
		Agent: e.meta.Agent, Model: turn.Model, Prompt: turn.Usage.Prompt, Completion: turn.Usage.Completion,
	}
	if st.admitted {
		e.meta.Budget, e.meta.TreeSpend = st.admission.TreeBudget, st.admission.SpendAfter(e.meta.TreeSpend, spent)
	}
	rows := a.roundRows(st, turn.ToolCalls, reasons)
	e.deferred = rows
	if deferred := deferredOf(rows); len(deferred) > 0 {
		views := make([]*agentsv1.DeferredCall, len(deferred))
		for i, d := range deferred {
			views[i] = wire.DeferredCall(d)
		}
		e.emit(a, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_CallsDeferred{CallsDeferred: &agentsv1.CallsDeferred{Calls: views}}}))
	}
	for _, c := range turn.ToolCalls {
		// The calls the server runs start as soon as the turn is stored:
		// say so in the same write.
		if _, ok := st.tools.Get(c.Name); ok && c.Mode != session.CallDeferred {
			e.emit(a, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_ToolStarted{ToolStarted: &agentsv1.ToolStarted{Call: wire.ToolCall(c)}}}))
		}
	}
	if len(turn.ToolCalls) == 0 && (len(a.st.mail) == 0 || a.run.stop != "") {
		// The answer ends the run: the turn and the run's end are one
		// write.
		a.reportStep(st)
		a.answerEnds(e, turn.Text)
		return
	}
	if err := a.apply(e); err != nil {
		a.stall(e, err, func() {
			if a.current(st) {
				a.answerStored(st, turn, rows)
			}
		})
		return
	}
	a.answerStored(st, turn, rows)
}

// spent is what a model call spent, priced, and told to Budgets.OnUsage.
func (a *actor) spent(resp llm.Response) session.Usage {
	u := a.r.opts.Budgets.priced(usageOf(resp), resp.Model, a.agent.Model.Name)
	if f := a.r.opts.Budgets.OnUsage; f != nil {
		// The agent's model, not the name the provider answered with:
		// metrics label it, and agent files are a bounded set.
		f(a.owner, a.agent.Model.Name, u)
	}
	if a.run != nil {
		a.run.traceSpent(u)
	}
	return u
}

// usageOf is the usage the provider reported for an answer.
func usageOf(resp llm.Response) session.Usage {
	return session.Usage{
		Prompt:     int64(resp.Usage.PromptTokens),
		Completion: int64(resp.Usage.CompletionTokens),
		Cached:     int64(resp.Usage.CachedTokens),
		Reasoning:  int64(resp.Usage.ReasoningTokens),
	}
}

// answerStored goes on once the model's answer is stored: with its tool
// calls, or with the end of the round.
func (a *actor) answerStored(st *step, turn session.LLMTurn, rows []session.DeferredCall) {
	st.progress.mu.Lock()
	st.progress.stored = true
	st.progress.mu.Unlock()
	if len(turn.ToolCalls) == 0 {
		a.roundDone(st, turn.Text)
		return
	}
	a.startCalls(st, turn.ToolCalls, rows)
}

// deferredOf keeps the rows of calls a client answers.
func deferredOf(rows []session.DeferredCall) []session.DeferredCall {
	var out []session.DeferredCall
	for _, r := range rows {
		if clientAnswered(r.Reason) {
			out = append(out, r)
		}
	}
	return out
}

// answered reports whether the history ends with a model answer that
// called no tool and no mail waits: a run would have nothing to do.
func (a *actor) answered() bool {
	last := lastExchanged(a.st.turns)
	return last != nil && last.LLM != nil && len(last.LLM.ToolCalls) == 0 && len(a.st.mail) == 0
}

// questioned reports whether the conversation ends with a user turn the
// model has not answered yet.
func (a *actor) questioned() bool {
	last := lastExchanged(a.st.turns)
	return last != nil && last.User != nil
}

// lastExchanged is the newest turn that is not a compaction: a
// compaction changes what is sent, not where the conversation stands.
func lastExchanged(turns []session.Turn) *session.Turn {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Compaction == nil {
			return &turns[i]
		}
	}
	return nil
}

// roundDone ends a round that made no tool calls: the run continues when
// mail is waiting, and ends otherwise.
func (a *actor) roundDone(st *step, text string) {
	a.reportStep(st)
	if len(a.st.mail) > 0 && a.run.stop == "" {
		a.beginStep() // it folds the mail that arrived during the step
		return
	}
	a.endRun(session.StatusReady, a.run.stopReason(), text)
}

// answerEnds writes e, the model's last answer, with the end of the run
// in the same write. When the store refuses that, the answer alone goes
// first and the end follows as endRun writes it, so an answer is never
// lost with an end the store would not take.
func (a *actor) answerEnds(e *edit, text string) {
	reason := a.run.stopReason()
	both := *e
	both.events = slices.Clone(e.events)
	a.markStopped(&both, session.StatusReady, reason, text)
	a.watchMail(&both, session.StatusReady, reason, text)
	if err := a.apply(&both); err == nil {
		a.closeRun()
		a.delivered(both.notify)
		return
	}
	run := a.run
	ended := func() {
		if a.run == run {
			a.endRun(session.StatusReady, reason, text)
		}
	}
	if err := a.apply(e); err != nil {
		a.stall(e, err, ended)
		return
	}
	ended()
}

// callsDone ends a round whose tool calls all have results: the results
// and the pending mail become the next user turn, and the run goes on.
func (a *actor) callsDone(st *step) {
	e := a.edit()
	e.events = append(e.events, st.completed...)
	st.completed = nil
	a.storeRound(e, st)
	if err := a.apply(e); err != nil {
		a.stall(e, err, func() {
			if a.current(st) {
				a.resultsStored(st)
			}
		})
		return
	}
	a.resultsStored(st)
}

// resultsStored goes on with the next step once a round's results are
// stored.
func (a *actor) resultsStored(st *step) {
	a.waiting = nil
	a.reportStep(st)
	a.beginStep()
}

func (a *actor) reportStep(st *step) {
	if a.r.opts.OnStep == nil || st.recorded {
		return
	}
	stats := StepStats{SessionID: a.id, Total: a.r.now().Sub(st.started), Model: st.model, Input: st.input}
	if !st.toolsEnded.IsZero() {
		stats.Tools = st.toolsEnded.Sub(st.toolsStarted)
	}
	a.r.opts.OnStep(stats)
}

// addUserTurn adds a user turn to e with every pending mail folded in
// (rule R1); the mail is marked delivered in the same write.
func (a *actor) addUserTurn(e *edit, u session.UserTurn) {
	if mail := a.st.mail; len(mail) > 0 {
		now := a.r.now()
		folded := make([]session.Mail, len(mail))
		for i, m := range mail {
			m.Delivered = &now
			// The files join the turn's attachments, where the model sees
			// them; the folded mail keeps their names.
			u.Attachments = append(u.Attachments, m.Body.Attachments...)
			m.Body.Attachments = nil
			folded[i] = m
			e.delivered = append(e.delivered, m.ID)
			e.meta.PendingMail--
		}
		u.Mail = folded
	}
	a.addTurn(e, session.Turn{User: &u})
}

// endRun records the end of a run.
func (a *actor) endRun(status session.Status, reason, text string) {
	a.endRunWith(a.edit(), status, reason, text)
}

// endRunWith records the end of a run with e.
func (a *actor) endRunWith(e *edit, status session.Status, reason, text string) {
	a.markStopped(e, status, reason, text)
	a.closeRun()
	a.settle(e, status, reason, text)
}

// markStopped adds to e the end of the active run: its status (with the
// reason, unless it is done) and run.stopped.
func (a *actor) markStopped(e *edit, status session.Status, reason, text string) {
	statusReason := ""
	if reason != StopDone {
		statusReason = reason
	}
	e.meta.Status, e.meta.StatusReason = status, statusReason
	tracing.RunStopped(a.run.span, reason, a.run.budget)
	// No model call is in flight once the run stops: what it reserved,
	// if anything, is free again.
	e.release = true
	e.outcome = &store.RunOutcome{SessionID: a.id, Status: string(status), Reason: reason, At: a.r.now()}
	// Every run's end has the event: its messages are one allocation.
	p := &struct {
		ev      agentsv1.Event
		body    agentsv1.Event_RunStopped
		stopped agentsv1.RunStopped
	}{}
	p.stopped = agentsv1.RunStopped{Status: statusWire(status), Reason: reason, Steps: int32(a.run.steps), Text: text}
	if reason == StopBudget {
		p.stopped.Budget = a.run.budget
	}
	p.body.RunStopped = &p.stopped
	p.ev.Body = &p.body
	e.emit(a, events.WithKind(&p.ev))
}

// stopReason is how the run ends when it ends at a boundary: the reason
// it was told to stop for, or done.
func (r *run) stopReason() string {
	if r.stop != "" {
		return r.stop
	}
	return StopDone
}

// failRun ends the run as failed; the session accepts input again.
func (a *actor) failRun(code, reason string) {
	if a.run != nil {
		tracing.RunFailed(a.run.span, code, reason)
	}
	a.closeRun()
	a.fail(code, reason)
}

// fail marks a session without an active run as failed.
func (a *actor) fail(code, reason string) {
	e := a.edit()
	e.meta.Status, e.meta.StatusReason = session.StatusFailed, reason
	e.release = true
	e.outcome = &store.RunOutcome{SessionID: a.id, Status: string(session.StatusFailed), Reason: code, At: a.r.now()}
	e.emit(a, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Reason: reason, Code: code}}}))
	a.settle(e, session.StatusFailed, reason, "")
}

// settle writes the status a run ended with, and the watchers' mail with
// it. It cannot fail: the session has no run any more, so neither may it
// say running. When the store refuses the write, the actor keeps the new
// status and its events and writes them again until the store takes them
// (see resync), and no other write of the session goes through before.
func (a *actor) settle(e *edit, status session.Status, reason, text string) {
	a.watchMail(e, status, reason, text)
	err := a.apply(e)
	switch {
	case err == nil:
		a.delivered(e.notify)
		return
	case a.ws.retrying():
		// The earlier failed write is still pending: this one's status,
		// events and mail follow it.
		a.log().Warn("store run end behind a pending write", "session", a.id, "err", err)
		a.ws.follow(e)
	case committer.Classify(err) == committer.Lost:
		return // another server runs the session now
	case committer.Classify(err) == committer.Permanent:
		a.log().Error("the store refused a run end for good", "session", a.id, "err", err)
		a.settleFromStore(e)
		return
	default:
		a.log().Warn("the store refused a run end for now; keeping it", "session", a.id, "err", err)
		a.ws.keep(e, nil)
	}
	a.st.meta.Status, a.st.meta.StatusReason = e.meta.Status, e.meta.StatusReason
}

// closeRun forgets the active run: what is in flight is cancelled and
// whoever waits for the session to be idle is woken. Recording how the run
// ended is the caller's business.
func (a *actor) closeRun() {
	if a.run == nil {
		return
	}
	a.run.cancel()
	if a.run.span.IsRecording() {
		tracing.RunSpent(a.run.span, a.run.spent)
	}
	a.run.span.End()
	a.r.slots.give(a.run.owner)
	a.run = nil
	a.r.active.Add(-1)
	a.wakeIdleWaiters()
}

// setStatus stores a new status and publishes the change, with events.
func (a *actor) setStatus(status session.Status, reason string, evs ...*agentsv1.Event) error {
	e := a.edit()
	e.meta.Status, e.meta.StatusReason = status, reason
	for _, ev := range evs {
		e.emit(a, ev)
	}
	return a.apply(e)
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
