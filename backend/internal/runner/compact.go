package runner

import (
	"context"
	"errors"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/tracing"
	"github.com/agents-os/agents/backend/internal/wire"
)

// maxCompactions bounds the compactions before one model call: when that
// many did not bring the request under the threshold, it is sent as it
// is (and an overflow the provider reports still compacts once more).
const maxCompactions = 3

// fit is what a session's requests must fit in.
type fit struct {
	window, maxOutput, threshold int64
	settings                     catalog.Compaction
}

// window returns the limits of the session's model, with what a provider
// taught this server about its window, and the agent's compaction
// settings for them.
func (a *actor) window() fit {
	lim, settings := a.r.ModelLimits(a.agent)
	return fit{window: lim.ContextWindow, maxOutput: lim.MaxOutputTokens, threshold: settings.Threshold, settings: settings}
}

// ModelLimits returns the limits of an agent's model as this server
// applies them (the catalog's, which resolves every one, or the window a
// provider stated, when smaller) and the agent's compaction settings for
// them.
func (r *Runner) ModelLimits(agent *catalog.Agent) (catalog.Limits, catalog.Compaction) {
	lim, settings := agent.Model.Limits, agent.Compaction
	if learned, ok := r.LearnedWindow(agent.Model.Name); ok && learned < lim.ContextWindow {
		lim.ContextWindow, lim.Source = learned, catalog.LimitsLearned
		lim.MaxOutputTokens = min(lim.MaxOutputTokens, learned)
		settings = agent.CompactionFor(lim)
	}
	return lim, settings
}

// learnWindow keeps the window a provider stated for a model, for every
// session of this server that uses it.
func (r *Runner) learnWindow(model string, window int64) {
	if window > 0 && model != "" {
		r.learned.Store(model, window)
	}
}

// LearnedWindow returns the window a provider stated for a model.
func (r *Runner) LearnedWindow(model string) (int64, bool) {
	v, ok := r.learned.Load(model)
	if !ok {
		return 0, false
	}
	return v.(int64), true
}

// compactPlan is what one compaction does.
type compactPlan struct {
	reason, instruction string
	before              int64
	// base is the end of the summary in force, cut the new one's; equal
	// when the compaction only prunes.
	base, cut int
	prev      string
	// pruneEnd and pruneOver say which results are pruned; pruned counts
	// those newly pruned and saved what that saves.
	pruneEnd  int
	pruneOver int64
	pruned    int
	saved     int64
}

// planCompaction decides what a compaction of the history does to bring
// a request of measured tokens under the threshold: prune the long tool
// results of older turns when that is enough, else fold the older turns
// into a summary, keeping the newest turns (up to KeepRecent tokens)
// whole and never parting a tool call from its result. force (a manual
// compaction, an overflow) summarises even when pruning would do. ok is
// false when there is nothing to compact.
func (a *actor) planCompaction(f fit, measured int64, reason, instruction string, force bool) (compactPlan, bool) {
	p := &a.prompt
	turns := a.st.turns
	n, base := len(turns), p.view.base
	plan := compactPlan{reason: reason, instruction: instruction, before: measured, base: base, prev: p.view.summary,
		pruneEnd: p.view.pruneEnd, pruneOver: p.view.pruneOver}
	keep := f.settings.KeepRecent
	if force {
		keep = min(keep, measured/4)
	}
	// The newest cut that keeps at least one exchange whole, and the
	// oldest whose tail fits in keep.
	cut, last := 0, 0
	var tail int64
	for i := n - 1; i > base; i-- {
		tail += p.turnTokens(i)
		if !cuttable(turns, i) {
			continue
		}
		if !answeredBefore(turns[base:i]) {
			break // a summary of no answer gains nothing
		}
		if last == 0 {
			last = i
		}
		if tail <= keep {
			cut = i
		}
	}
	if cut == 0 {
		cut = last
	}
	if cut > 0 {
		plan.pruneEnd, plan.pruneOver = cut, f.settings.PruneOver
		for i := base; i < cut; i++ {
			u := turns[i].User
			if u == nil {
				continue
			}
			for _, r := range u.ToolResults {
				before := p.view.pruneOver > 0 && i < p.view.pruneEnd && prunable(r, p.view.pruneOver)
				if !before && prunable(r, plan.pruneOver) {
					plan.pruned++
					plan.saved += int64(p.estimator.Message(llm.ToolResultMessage(r.CallID, r.Text)) - p.estimator.Message(llm.ToolResultMessage(r.CallID, stub(r))))
				}
			}
		}
	}
	switch {
	case cut == 0:
		return plan, false
	case plan.pruned > 0 && !force && measured-plan.saved <= f.threshold:
		plan.cut = base // pruning is enough
	default:
		plan.cut = cut
	}
	return plan, true
}

// cuttable reports whether a summary may end before turn i: the turn
// before it is not a model turn whose calls turn i answers.
func cuttable(turns []session.Turn, i int) bool {
	prev := turns[i-1]
	return prev.LLM == nil || len(prev.LLM.ToolCalls) == 0
}

// answeredBefore reports whether turns hold a model answer.
func answeredBefore(turns []session.Turn) bool {
	for _, t := range turns {
		if t.LLM != nil {
			return true
		}
	}
	return false
}

// turnTokens is what turn i weighs in the rendered request.
func (p *prompt) turnTokens(i int) int64 {
	k := i - p.view.base
	if k < 0 || k >= len(p.starts) {
		return 0
	}
	end := len(p.msgs)
	if k+1 < len(p.starts) {
		end = p.starts[k+1]
	}
	var n int64
	for j := p.starts[k]; j < end && j < len(p.counts); j++ {
		n += int64(p.counts[j])
	}
	return n
}

// compactFirst compacts the session before st's model call: a compaction
// that only prunes is written at once, a summary is asked of the model
// first. Either way the step starts again once the compaction is stored.
// With nothing to compact, the call goes as it is.
func (a *actor) compactFirst(st *step, measured int64, reason, instruction string) {
	if !a.current(st) {
		return
	}
	if err := st.ctx.Err(); err != nil {
		// Cut (cancel, interrupt) before the call: as a cut model call.
		a.modelDone(st, llm.Response{}, err, 0)
		return
	}
	run := a.run
	run.compactions++
	f := a.window()
	force := reason != session.CompactThreshold
	plan, ok := a.planCompaction(f, measured, reason, instruction, force)
	if !ok {
		a.cannotCompact(st, reason)
		return
	}
	if plan.cut == plan.base {
		a.storeCompaction(st, plan, f, llm.Response{})
		return
	}
	e := a.edit()
	e.updated = false
	e.emit(a, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_CompactionStarted{CompactionStarted: &agentsv1.CompactionStarted{
		Reason: reason, Tokens: measured, Threshold: f.threshold, ContextWindow: f.window,
	}}}))
	if err := a.apply(e); err != nil {
		a.stall(e, err, func() {
			if a.current(st) {
				a.summarise(st, plan, f)
			}
		})
		return
	}
	a.summarise(st, plan, f)
}

// restep starts the step again after a compaction, through the checks
// of a step boundary: a stop, a pause or a drain asked meanwhile ends the
// run there, and mail that came meanwhile is folded first. The step was
// counted once already.
func (a *actor) restep() {
	a.run.steps--
	a.beginStep()
}

// cannotCompact goes on when there is nothing to compact: a manual
// compaction says so, an overflow fails the run (the provider would only
// refuse again), a threshold sends the request as it is.
func (a *actor) cannotCompact(st *step, reason string) {
	switch {
	case reason == session.CompactOverflow:
		a.failRun(errs.CodeContextLengthExceeded, "the request does not fit in the model's context window, and nothing older is left to compact")
	case a.run.compactOnly:
		a.endRun(session.StatusReady, StopDone, "")
	default:
		a.run.compactions = maxCompactions // no more tries before this call
		a.restep()
	}
}

// summarise asks the model for the summary of the turns the plan folds,
// off the actor, under the tree's budget and in the run's trace.
func (a *actor) summarise(st *step, plan compactPlan, f fit) {
	modelSpec := a.agent.Model
	if f.settings.Model != "" {
		modelSpec.Name = f.settings.Model
	}
	model, err := a.r.opts.Models(modelSpec)
	if err != nil {
		a.failRun(errs.CodeModelError, err.Error())
		return
	}
	prompt := f.settings.Prompt
	if len(prompt) == 0 {
		prompt = DefaultCompactionPrompt
	}
	// The summary call must fit in the window too: its answer gets room
	// for a summary, and it folds fewer turns when their transcript would
	// not fit beside it.
	output := min(f.maxOutput, max(f.window/8, 256), 4096)
	var req llm.Request
	var input int64
	for {
		req = summaryRequest(modelSpec.Name, prompt, plan.prev, a.st.turns[plan.base:plan.cut], plan.instruction, itemBytes(f.window))
		input = int64(a.prompt.estimator.Request(req))
		if input+output <= f.window-f.settings.Margin {
			break
		}
		cut := plan.cut - 1
		for cut > plan.base && !(cuttable(a.st.turns, cut) && answeredBefore(a.st.turns[plan.base:cut])) {
			cut--
		}
		if cut <= plan.base {
			a.cannotCompact(st, plan.reason)
			return
		}
		plan.cut = cut
	}
	req.SessionID = a.id
	req.MaxTokens = int(output)
	budget := a.callBudget()
	flavor, agentModel := modelSpec.Flavor, a.agent.Model.Name
	ctx := st.ctx
	a.r.workers.do(func() {
		adm, err := a.r.admit(ctx, budget, input, output)
		switch {
		case err != nil && ctx.Err() != nil:
			a.post(func(a *actor) { a.summaryDone(st, plan, f, llm.Response{}, ctx.Err()) })
			return
		case err != nil:
			a.post(func(a *actor) {
				if a.current(st) && a.run.ctx.Err() == nil {
					a.failRun(errs.CodeBudgetUnavailable, "the budgets could not be read: "+err.Error())
				}
			})
			return
		case adm.Exceeded != "":
			a.post(func(a *actor) { a.budgetStopped(st, adm) })
			return
		}
		st.admission, st.admitted = adm, true
		if adm.Output > 0 {
			req.MaxTokens = int(adm.Output)
		}
		spanCtx, span := a.r.tracer.StartCompaction(ctx, a.id, plan.reason, plan.before)
		chatCtx, chat := a.r.tracer.StartChat(spanCtx, flavor, modelSpec.URL, a.id, req)
		resp, err := model.Stream(chatCtx, req, func(llm.Delta) {})
		a.r.tracer.EndChat(chat, resp, a.r.opts.Budgets.chatCost(chat, resp, agentModel), err)
		tracing.EndCompaction(span, err)
		a.post(func(a *actor) { a.summaryDone(st, plan, f, resp, err) })
	})
}

// summaryDone takes the summary call's answer.
func (a *actor) summaryDone(st *step, plan compactPlan, f fit, resp llm.Response, err error) {
	if !a.current(st) {
		return
	}
	switch {
	case err != nil && st.cut && isCancel(err):
		// Cut by a cancel or an interrupt: no summary; the run goes on
		// (or stops) as after a cut model call.
		if a.run.stop != "" {
			a.endRun(session.StatusReady, a.run.stop, "")
			return
		}
		a.restep()
		return
	case err != nil && a.run.ctx.Err() != nil:
		return // the server is stopping; the run resumes at the next start
	case err != nil:
		a.failRun(errs.CodeCompactionFailed, "the summary call failed: "+err.Error())
		return
	case resp.Text == "":
		a.failRun(errs.CodeCompactionFailed, "the model wrote an empty summary")
		return
	}
	a.storeCompaction(st, plan, f, resp)
}

// storeCompaction writes the compaction turn (with the summary call's
// spend, when there was one), then starts the step again on the
// compacted history.
func (a *actor) storeCompaction(st *step, plan compactPlan, f fit, resp llm.Response) {
	c := session.Compaction{
		Reason:        plan.reason,
		PruneEnd:      plan.pruneEnd,
		PruneOver:     plan.pruneOver,
		PrunedResults: plan.pruned,
		TokensBefore:  plan.before,
		Instruction:   plan.instruction,
	}
	if plan.cut > plan.base {
		c.SummaryEnd, c.Summary = plan.cut, resp.Text
		c.Model = resp.Model
		for _, t := range a.st.turns[plan.base:plan.cut] {
			if t.Compaction == nil {
				c.SummarizedTurns++
			}
		}
		c.Usage = a.spent(resp)
	}
	c.TokensAfter = a.measureAfter(c, plan.before)
	e := a.edit()
	a.addTurn(e, session.Turn{Compaction: &c})
	if plan.cut > plan.base {
		spent := c.Usage.Spend()
		e.spend = &store.SpendChange{
			SessionID: a.id, RootID: e.meta.Root(), Owner: e.meta.Owner, Spend: spent, At: a.r.now(), Reserved: st.admission.Reserved,
			Agent: e.meta.Agent, Model: c.Model, Prompt: c.Usage.Prompt, Completion: c.Usage.Completion,
		}
		if st.admitted {
			e.meta.Budget, e.meta.TreeSpend = st.admission.TreeBudget, st.admission.SpendAfter(e.meta.TreeSpend, spent)
		}
	}
	head := e.turns[len(e.turns)-1]
	e.emit(a, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_SessionCompacted{SessionCompacted: &agentsv1.SessionCompacted{
		Meta: wire.Meta(e.meta), Turn: wire.TurnForEvent(head),
	}}}))
	next := func() {
		if !a.current(st) {
			return
		}
		if a.run.compactOnly {
			a.endRun(session.StatusReady, StopDone, "")
			return
		}
		a.restep()
	}
	if err := a.apply(e); err != nil {
		a.stall(e, err, next)
		return
	}
	next()
}

// measureAfter is what the request weighs once c is in force: the
// estimate of the compacted rendering, in the units of the measure that
// asked for the compaction (the provider's, where it reported one), as
// the ratio of that measure to the estimate of the rendering before.
func (a *actor) measureAfter(c session.Compaction, before int64) int64 {
	a.prompt.update(a.agent, a.st.turns)
	was := a.prompt.estimate()
	turns := append(a.st.turns[:len(a.st.turns):len(a.st.turns)], session.Turn{Index: len(a.st.turns), Compaction: &c})
	var p prompt
	p.update(a.agent, turns)
	after := p.estimate()
	if was <= 0 || before <= 0 {
		return after
	}
	return after * before / was
}

// overflowed handles a provider's context_length_exceeded: the window it
// states is learned, and the session compacts once and tries again. A
// second overflow in a row fails the run.
func (a *actor) overflowed(st *step, err error) bool {
	var api *llm.APIError
	if !errors.As(err, &api) || !llm.IsContextOverflow(api) {
		return false
	}
	if window, ok := llm.StatedWindow(api.Message); ok {
		a.r.learnWindow(a.agent.Model.Name, window)
	}
	if a.run.overflowed {
		a.failRun(errs.CodeContextLengthExceeded, err.Error())
		return true
	}
	a.run.overflowed = true
	measured := max(st.input, a.prompt.measure(a.st.turns).estimated)
	a.compactFirst(st, measured, session.CompactOverflow, "")
	return true
}

// Compacted is what Compact did.
type Compacted struct {
	Meta session.Meta `json:"meta"`
	// Turn is the compaction turn; nil while it is pending.
	Turn *session.Turn `json:"turn,omitempty"`
	// Pending says the session was running: the compaction happens
	// before its next model call.
	Pending bool `json:"pending,omitempty"`
}

// compactCommand is Compact on the session's holder.
type compactCommand struct {
	Instruction string `json:"instruction,omitempty"`
}

func (compactCommand) name() string { return "compact_session" }

func (b compactCommand) apply(ctx context.Context, r *Runner, at target) (Compacted, error) {
	return r.compactLocal(ctx, at.owner, at.session, b.Instruction)
}

// Compact folds the older turns of a session into a summary now. A
// session with no run compacts in a run of its own, and Compact returns
// once the compaction is stored; a running session compacts before its
// next model call, and Compact returns at once, pending.
func (r *Runner) Compact(ctx context.Context, owner, id, instruction string) (Compacted, error) {
	done, _, err := onHolder(ctx, r, owner, id, compactCommand{Instruction: instruction})
	return done, err
}

func (r *Runner) compactLocal(ctx context.Context, owner, id, instruction string) (Compacted, error) {
	var idle <-chan struct{}
	var from int
	pending := false
	_, err := r.control(ctx, owner, id, func(a *actor) error {
		from = len(a.st.turns)
		if a.run != nil || a.waiting != nil {
			a.compactAsk = &instruction
			pending = true
			return nil
		}
		if err := a.compactNow(instruction); err != nil {
			return err
		}
		idle = a.waitIdle()
		return nil
	})
	if err != nil {
		return Compacted{}, err
	}
	if !pending {
		select {
		case <-idle:
		case <-ctx.Done():
			return Compacted{}, ctx.Err()
		}
	}
	var done Compacted
	err = r.withSession(ctx, id, func(a *actor) error {
		done = Compacted{Meta: a.st.meta, Pending: pending}
		for i := len(a.st.turns) - 1; i >= from; i-- {
			if a.st.turns[i].Compaction != nil {
				t := a.st.turns[i]
				done.Turn = &t
				break
			}
		}
		if !pending && done.Turn == nil && a.st.meta.Status != session.StatusFailed && a.st.meta.Status != session.StatusPaused {
			return errs.FailedPrecondition(errs.CodeNothingToCompact, "session %s has nothing to compact: its history is all recent turns", id)
		}
		return nil
	})
	return done, err
}

// compactNow starts a run that only compacts.
func (a *actor) compactNow(instruction string) error {
	if missing := a.missingParams(); len(missing) > 0 {
		return paramsRequired(missing)
	}
	if err := a.refreshAgent(); agentGone(err) {
		return err
	}
	if a.agent == nil {
		return errs.NotFound(errs.CodeUnknownAgent, "agent %q is not loaded", a.st.meta.Agent)
	}
	a.prompt.update(a.agent, a.st.turns)
	measured := a.prompt.measure(a.st.turns).estimated
	if _, ok := a.planCompaction(a.window(), measured, session.CompactManual, instruction, true); !ok {
		return errs.FailedPrecondition(errs.CodeNothingToCompact, "session %s has nothing to compact: its history is all recent turns", a.id)
	}
	if err := a.openRun(a.edit(), agentsv1.RunTrigger_RUN_TRIGGER_COMPACT, 0); err != nil {
		return err
	}
	a.run.compactOnly = true
	a.compactAsk = &instruction
	a.launchStep()
	return nil
}
