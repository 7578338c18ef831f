package runner

import (
	"context"
	"slices"
	"sync"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/llm"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/tool"
	"github.com/agents-os/agents/backend/internal/wire"
)

// Reasons of the rows of calls that wait for approval.
const (
	// reasonApproval marks a call the server runs once a client approves
	// it (the agent file's approval policy holds it back).
	reasonApproval = "approval"
	// reasonApproved marks such a call once approved: it runs, or ran, on
	// the server, and a restart takes it for a call in flight.
	reasonApproved = store.ReasonApproved
)

// What the model reads of an approval that was not granted.
const (
	notApprovedText     = "the call was not approved"
	interruptedApproval = "the call was not run: a new message interrupted the run before it was approved"
	cancelledApproval   = "the call was not run: its approval was cancelled"
)

// decision is how one call the model asked for is carried out.
type decision struct {
	mode session.CallMode
	// reason, for a deferred call, is stored with its row: why a client
	// answers it (reasonClientTool, reasonApproval).
	reason string
}

// decide is the one place between the model's request and execution
// where a call is judged: it stamps the call with its tool's kind and says
// whether the server runs it now (attached) or a client answers it first
// (deferred): a client tool's call, or a call the agent's approval policy
// holds back until a client approves it. The decision is stored with the
// model's turn, so it holds across a restart.
//
// The policy judges the arguments as the tool decodes them
// (tool.DecodeArgs), and the call is stored with them in their canonical
// spelling: what a client asked to approve reads, and what execute
// decodes again and gives the tool, is the value judged, at once, after
// an approval or after a restart. Arguments the tool refuses are neither
// judged nor deferred, and keep the model's text: the server answers the
// call with the refusal (see execute).
func (a *actor) decide(st *step, c llm.ToolCall) (session.ToolCall, decision) {
	call := session.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments, Mode: session.CallAttached}
	t, ok := st.tools.Get(c.Name)
	if !ok {
		// Unknown: answered with an error when the round starts.
		return call, decision{mode: session.CallAttached}
	}
	call.Kind = t.Spec().Kind
	args, err := a.r.schemas.Decode(t.Spec(), c.Arguments)
	if err != nil {
		return call, decision{mode: session.CallAttached}
	}
	call.Arguments = string(args.JSON())
	d := decision{mode: t.Mode()}
	switch {
	case d.mode == session.CallDeferred:
		d.reason = reasonClientTool
	case a.asksApproval(c.Name, args):
		d = decision{mode: session.CallDeferred, reason: reasonApproval}
	}
	call.Mode = d.mode
	return call, d
}

// asksApproval reports whether a call of the tool with these arguments
// waits for approval: the agent's policy says so, and no client allowed
// the tool for the rest of the session.
func (a *actor) asksApproval(name string, args tool.Args) bool {
	if a.agent == nil || slices.Contains(a.st.meta.AllowedTools, name) {
		return false
	}
	p := a.agent.ApprovalFor(name)
	return p != nil && p.Asks(args)
}

// clientAnswered reports whether a row's call is answered by a client:
// a client tool's call or an approval.
func clientAnswered(reason string) bool {
	return reason == reasonClientTool || reason == reasonApproval
}

// ApprovalAnswer is a client's answer to a call that waits for approval.
type ApprovalAnswer struct {
	Approve bool
	// Reason, for a refusal, is what the model reads.
	Reason string
	// Always allows the tool for the rest of the session.
	Always bool
}

// checkAnswer refuses an answer of the wrong kind for the row, and an
// answer to a call that was settled or answered already.
func checkAnswer(row session.DeferredCall, answer CallAnswer) error {
	switch {
	case row.Reason == reasonApproved:
		return errs.FailedPrecondition(errs.CodeCallCompleted, "call %s was approved already and runs on the server", row.Call.ID)
	case !clientAnswered(row.Reason):
		return errs.FailedPrecondition(errs.CodeCallNotDeferred, "call %s is run by the server, not by a client", row.Call.ID)
	case row.Reason == reasonApproval && answer.Approval == nil:
		return errs.Invalid(errs.CodeInvalidArgument, "call %s of %s waits for approval: answer it with approval {approve, reason, always}", row.Call.ID, row.Call.Name)
	case row.Reason != reasonApproval && answer.Approval != nil:
		return errs.Invalid(errs.CodeInvalidArgument, "call %s is a client tool's call: answer it with text or error, not approval", row.Call.ID)
	}
	return nil
}

// answeredError is the error for an answer that comes too late: the call
// has a result (res, nil when unknown). An approval that no client
// answered says how it was settled.
func answeredError(row session.DeferredCall, res *session.ToolResult) error {
	if res == nil {
		res = row.Result
	}
	if row.Reason == reasonApproval && res != nil && res.Status == session.ResultCancelled {
		return errs.FailedPrecondition(errs.CodeApprovalSettled, "the approval of call %s (%s) was settled without an answer: %s", row.Call.ID, row.Call.Name, res.Text)
	}
	return errs.FailedPrecondition(errs.CodeCallCompleted, "call %s was already completed", row.Call.ID)
}

// approve runs an approved call on the server, attached to the round as
// it would have run, with e (the answer's write). A waiting session runs
// again while the call runs; the round goes on once every call has its
// result.
func (a *actor) approve(e *edit, st *step, cs *callState, always bool) error {
	e.approved = []string{cs.token}
	e.meta.PendingCalls--
	if always && !slices.Contains(e.meta.AllowedTools, cs.call.Name) {
		e.meta.AllowedTools = append(slices.Clone(e.meta.AllowedTools), cs.call.Name)
	}
	e.emit(a, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_ToolStarted{ToolStarted: &agentsv1.ToolStarted{Call: wire.ToolCall(cs.call)}}}))
	if a.run == nil {
		if err := a.openRun(e, agentsv1.RunTrigger_RUN_TRIGGER_RESUME, 0); err != nil {
			return err
		}
		// The round becomes the run's step again, so cancelling the run
		// cancels the call.
		st.ctx, st.cancel = context.WithCancel(a.run.ctx)
		st.started = a.r.now()
		st.progress.stored = true
		a.run.step = st
	} else if err := a.apply(e); err != nil {
		return err
	}
	cs.approved = true
	st.resume = true
	a.dropDeferred(st)
	a.launch(st, cs, false)
	return nil
}

// settleApprovals answers every open approval of the waiting round with a
// cancelled result saying why, so none is left dangling. A round with
// nothing else to wait for goes on (with trigger) when no run is active;
// an active run goes on as its attached calls end. It returns how many it
// settled.
func (a *actor) settleApprovals(why string, trigger agentsv1.RunTrigger) (int, error) {
	st := a.waiting
	if st == nil {
		return 0, nil
	}
	var settled []callResult
	for _, cs := range st.calls {
		if cs.approval && !cs.approved && cs.result == nil {
			settled = append(settled, callResult{cs: cs, res: session.ToolResult{CallID: cs.call.ID, Name: cs.call.Name, Text: why, Status: session.ResultCancelled}})
		}
	}
	if len(settled) == 0 {
		return 0, nil
	}
	if a.run == nil && unanswered(st) == len(settled) {
		e := a.edit()
		e.meta.PendingCalls -= len(settled)
		if err := a.continueRound(e, st, trigger, settled...); err == nil {
			st.resume = true
			a.dropDeferred(st)
			return len(settled), nil
		}
		// The run cannot start now (no free run, params missing): the
		// answers are stored below and Resume continues the round.
	}
	e := a.edit()
	for _, an := range settled {
		// Stored with the resume the round has once they are, as a
		// client's answer would be.
		e.completed = append(e.completed, store.Completion{Token: an.cs.token, Result: an.res, At: a.r.now(), Resume: true})
	}
	e.meta.PendingCalls -= len(settled)
	if err := a.apply(e); err != nil {
		return 0, err
	}
	answered(settled...)
	st.resume = true
	a.dropDeferred(st)
	return len(settled), nil
}

// goneCalls remembers the tokens of deferred calls whose session was
// deleted, so a late answer learns why its token is unknown. It keeps the
// newest few only: after that, the token is simply unknown.
type goneCalls struct {
	mu     sync.Mutex
	why    map[string]string
	tokens []string
}

const maxGoneCalls = 4096

func (g *goneCalls) add(tokens []string, why string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.why == nil {
		g.why = map[string]string{}
	}
	for _, t := range tokens {
		g.why[t] = why
		g.tokens = append(g.tokens, t)
	}
	for len(g.tokens) > maxGoneCalls {
		delete(g.why, g.tokens[0])
		g.tokens = g.tokens[1:]
	}
}

// explain turns an unknown token's error into one saying why, when the
// token's session was deleted.
func (g *goneCalls) explain(token string, err error) error {
	if errs.KindOf(err) != errs.KindNotFound {
		return err
	}
	g.mu.Lock()
	why, ok := g.why[token]
	g.mu.Unlock()
	if !ok {
		return err
	}
	return errs.NotFound(errs.CodeUnknownToken, "the call of this continuation token was settled without an answer: %s", why)
}

// pendingTokens lists the tokens of the session's open deferred calls.
func (a *actor) pendingTokens() []string {
	out := make([]string, len(a.st.deferred))
	for i, d := range a.st.deferred {
		out[i] = d.Token
	}
	return out
}

// approvedChange is the store's part of e's approvals.
func approvedChange(tokens []string) *store.Approved {
	if len(tokens) == 0 {
		return nil
	}
	return &store.Approved{Tokens: tokens, Reason: reasonApproved}
}
