package runner

import (
	"context"
	"errors"
	"slices"
	"time"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/committer"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/events"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
	"github.com/agents-os/agents/backend/internal/wire"
)

// Every change a client may observe is written in one transaction with
// the events that describe it (and with the mail it triggers): an edit
// collects them, apply writes them, and only then does the actor's state
// change and the events go out. So an event a client sees is always
// committed, and a failed write changes nothing, in the store or in memory.

// edit is a change to the actor's session being put together.
type edit struct {
	// create makes meta a new session with turns as its first turns.
	create    bool
	meta      session.Meta
	turns     []session.Turn
	delivered []string
	deferred  []session.DeferredCall
	completed []store.Completion
	mail      []session.Mail
	helpers   []store.HelperCall
	idem      *store.IdempotencyRecord
	// updated announces the new metadata (and the newest new turn) with
	// session.updated, ahead of events.
	updated bool
	events  []*agentsv1.Event
	// notify are the watchers to tell about mail the change delivers.
	notify []watchNote
	// settled are deferred calls the change answers without a client.
	settled []string
	// approved are calls that waited for approval and now run.
	approved []string
	// treeBudget replaces the budget of the session's tree.
	treeBudget *session.Budget
	// spend settles the model call whose answer the change stores.
	spend *store.SpendChange
	// release frees what the session's model call reserved.
	release bool
	// firing is a schedule's firing the change does.
	firing *store.FiringClaim
	// outcome records how the run stopped on the firings that started
	// it.
	outcome *store.RunOutcome
}

// edit starts a change from the session as it is.
func (a *actor) edit() *edit {
	return &edit{meta: a.st.meta, updated: true}
}

// addTurn appends a turn. Every turn goes through here, which is where the
// history keeps its one rule: every tool call has a result before anything
// follows it. A turn that would follow calls without results gets them
// first (aborted, as nothing answered them).
func (a *actor) addTurn(e *edit, t session.Turn) {
	prev := a.lastTurn(e)
	if missing := unansweredCalls(prev, t); len(missing) > 0 {
		a.settleRows(e, missing)
		if t.User == nil {
			a.addTurn(e, session.Turn{User: &session.UserTurn{ToolResults: missing}})
		} else {
			u := *t.User
			u.ToolResults = append(slices.Clone(u.ToolResults), missing...)
			u.ToolResults = orderResults(prev.LLM.ToolCalls, u.ToolResults)
			t.User = &u
		}
	}
	t.Index = e.meta.TurnCount
	t.Created = a.r.now()
	e.meta.Usage = e.meta.Usage.Add(t.Usage())
	if t.LLM != nil {
		e.meta.AgentVersion = t.LLM.AgentVersion
	}
	e.meta.TurnCount++
	e.turns = append(e.turns, t)
}

// settleRows completes, with e, the stored rows of calls that get results
// this way, so no deferred call is left waiting for an answer that can no
// longer matter.
func (a *actor) settleRows(e *edit, results []session.ToolResult) {
	for _, r := range results {
		for _, d := range a.st.deferred {
			if d.Call.ID == r.CallID {
				e.completed = append(e.completed, store.Completion{Token: d.Token, Result: r, At: a.r.now()})
				e.settled = append(e.settled, d.Token)
				e.meta.PendingCalls--
			}
		}
	}
}

// lastTurn is the newest turn with e applied; nil when there is none.
func (a *actor) lastTurn(e *edit) *session.Turn {
	if n := len(e.turns); n > 0 {
		return &e.turns[n-1]
	}
	if n := len(a.st.turns); n > 0 {
		return &a.st.turns[n-1]
	}
	return nil
}

// unansweredText is the result given to a call that nothing answered
// before the history moved on.
const unansweredText = "no result was recorded for this call; it may or may not have run"

// unansweredCalls returns results for the calls of prev (a model turn)
// that next does not answer; nil when prev called no tool or next answers
// them all.
func unansweredCalls(prev *session.Turn, next session.Turn) []session.ToolResult {
	if prev == nil || prev.LLM == nil || len(prev.LLM.ToolCalls) == 0 {
		return nil
	}
	answered := map[string]bool{}
	if next.User != nil {
		for _, r := range next.User.ToolResults {
			answered[r.CallID] = true
		}
	}
	var missing []session.ToolResult
	for _, c := range prev.LLM.ToolCalls {
		if !answered[c.ID] {
			missing = append(missing, session.ToolResult{CallID: c.ID, Name: c.Name, Text: unansweredText, Status: session.ResultAborted})
		}
	}
	return missing
}

// orderResults puts results in the order of the calls they answer.
func orderResults(calls []session.ToolCall, results []session.ToolResult) []session.ToolResult {
	pos := map[string]int{}
	for i, c := range calls {
		pos[c.ID] = i
	}
	slices.SortStableFunc(results, func(x, y session.ToolResult) int { return pos[x.CallID] - pos[y.CallID] })
	return results
}

// emit adds an event about the session.
func (e *edit) emit(a *actor, ev *agentsv1.Event) {
	ev.SessionId, ev.Owner = a.id, e.meta.Owner
	e.events = append(e.events, ev)
}

// apply writes e and, once it is stored, makes it the actor's state and
// publishes its events. On failure nothing changed.
func (a *actor) apply(e *edit) error {
	if err := a.ws.writeRefusal(); err != nil {
		return err
	}
	if a.ws.inDoubt() {
		// Memory may not be what the store has: nothing is written on it.
		return errStoreUnavailable
	}
	if a.ws.retrying() {
		// An earlier failed write goes first, or nothing does.
		moved := len(a.ws.pending.turns) > 0
		if err := a.resync(); committer.Classify(err) == committer.Permanent {
			return errSessionReloaded
		} else if committer.Classify(err) == committer.Lost {
			return err
		} else if err != nil {
			return errStoreUnavailable
		}
		if moved {
			// e was made on the history as it was before the turns the
			// pending write added: the caller tries again on the new one.
			return errStoreUnavailable
		}
	}
	return a.applyNow(e)
}

var errStoreUnavailable = errs.Unavailable(errs.CodeStoreUnavailable, "the database refused a write; try again shortly")

// errSessionReloaded answers a request that came while the session was
// settled from the store (see settleFromStore): it was not carried out.
var errSessionReloaded = errs.Conflict(errs.CodeSessionReloaded, "the session was reloaded from the database; try again")

// resync writes the edit a failed write left behind. Once it is stored,
// what waited for it (then) runs next. A failure the store will repeat
// however often it is asked is not asked again: the session is settled
// from what the store holds (see settleFromStore).
func (a *actor) resync() error {
	e := a.ws.pending
	if landed, _ := a.landed(e); landed {
		a.stored(e)
	} else if err := a.applyNow(e); err != nil {
		attempts := a.ws.refused()
		if committer.Classify(err) == committer.Permanent {
			a.log().Error("the store refused a write for good", "session", a.id, "attempts", attempts, "err", err)
			a.settleFromStore(e)
		}
		return err
	}
	// Mail other sessions' changes handed over while the write waited is
	// in memory only, and the pending count is computed from it.
	a.st.meta.PendingMail = len(a.st.mail)
	then := a.ws.caughtUp()
	a.delivered(e.notify)
	a.ws.queue(func() {
		if then != nil {
			then()
		}
		// Mail that came while the write waited found no run to fold it.
		a.wakeForMail()
	})
	return nil
}

// stall keeps a write of the active run that failed: a write the store
// may take later is kept, with what comes after it (then), and written
// again with backoff; the run stays active, and says running, in memory
// and in the store, until then. A write the store will never take ends
// the run from what the store holds. A write refused because the server
// is closing leaves the run to the next start, as a shutdown does.
func (a *actor) stall(e *edit, err error, then func()) {
	switch {
	case committer.Classify(err) == committer.Lost:
		// Another server runs the session now: the run stopped here
		// already, and goes no further (see loseLease).
	case committer.Classify(err) == committer.Closing:
		a.closeRun()
	case a.ws.retrying():
		// e never reached the store: an earlier write waits (which no run
		// write should find). The run cannot go on in order.
		a.log().Error("run write behind a pending one", "session", a.id, "err", err)
		a.failRun(errs.CodeStoreError, "could not store the run's progress")
	case committer.Classify(err) == committer.Transient:
		a.log().Warn("the store refused a write for now; keeping it", "session", a.id, "err", err)
		a.ws.keep(e, then)
	default:
		a.log().Error("the store refused a write for good", "session", a.id, "err", err)
		a.settleFromStore(nil)
	}
}

// settleFromStore ends a write the store refused for good. The store is
// the truth: the session is read again from it, and the run, if the store
// still says it is going, ends there once, with the end the write meant
// (end, a run's end) or failed, rebuilt on the stored history. When even
// that is refused, the session is left as the store has it and takes
// input again; its next write carries its status.
func (a *actor) settleFromStore(end *edit) {
	a.ws.drop()
	a.closeRun()
	a.waiting = nil // until restore rebuilds it from the stored rows
	st, err := a.r.load(a.r.ctx, a.id)
	switch {
	case errs.KindOf(err) == errs.KindNotFound:
		a.ws.end(a.unknown())
		return
	case err != nil:
		a.log().Error("reload session", "session", a.id, "err", err)
		if a.st.meta.Status == session.StatusRunning {
			a.st.meta.Status, a.st.meta.StatusReason = session.StatusFailed, storeRefusedReason
		}
		return
	}
	a.restore(st)
	a.prompt = prompt{}
	a.turnCache.drop()
	a.turnCache = nil
	if st.meta.Status != session.StatusRunning {
		return
	}
	e := a.edit()
	status, reason := session.StatusFailed, storeRefusedReason
	if end != nil && len(end.turns) == 0 && end.meta.Status != session.StatusRunning {
		status, reason = end.meta.Status, end.meta.StatusReason
		for _, ev := range end.events {
			if ev.SessionId == a.id {
				e.events = append(e.events, ev)
			}
		}
	} else {
		e.emit(a, events.WithKind(&agentsv1.Event{Body: &agentsv1.Event_SessionFailed{SessionFailed: &agentsv1.SessionFailed{Reason: reason, Code: errs.CodeStoreError}}}))
	}
	e.meta.Status, e.meta.StatusReason = status, reason
	a.watchMail(e, status, reason, "")
	if err := a.applyNow(e); err != nil {
		a.log().Error("settle session from the store", "session", a.id, "err", err)
		a.st.meta.Status, a.st.meta.StatusReason = status, reason
		return
	}
	a.delivered(e.notify)
}

// storeRefusedReason is the status reason of a run the store would not
// let go on.
const storeRefusedReason = "the database refused the run's progress; the session is as the database has it"

func (a *actor) applyNow(e *edit) error {
	e.meta.Updated = a.r.now()
	ch := &store.Change{
		Create:        e.create,
		Meta:          &e.meta,
		NewTurns:      e.turns,
		DeliveredMail: e.delivered,
		NewDeferred:   e.deferred,
		Completed:     e.completed,
		Approved:      approvedChange(e.approved),
		NewMail:       e.mail,
		HelperCalls:   e.helpers,
		Idempotency:   e.idem,
		TreeBudget:    e.treeBudget,
		Spend:         e.spend,
		Release:       e.release,
		Firing:        e.firing,
		RunOutcome:    e.outcome,
	}
	evs := e.events
	if e.updated && !e.create {
		evs = make([]*agentsv1.Event, 0, 1+len(e.events))
		evs = append(evs, a.updatedEvent(e))
		evs = append(evs, e.events...)
	}
	if err := a.write(a.r.ctx, ch, evs); err != nil {
		if committer.Classify(err) != committer.Transient {
			return err
		}
		landed, told := a.landed(e)
		if !told {
			a.ws.suspect(&doubt{e: e, landed: func() (bool, bool) { return a.landed(e) }})
		}
		if !landed {
			return err
		}
	}
	a.stored(e)
	return nil
}

// updatedEvent is the session.updated event of e: its new metadata and
// the newest of its turns. Every write of a step has one, so its
// messages are one allocation.
func (a *actor) updatedEvent(e *edit) *agentsv1.Event {
	p := &struct {
		ev   agentsv1.Event
		body agentsv1.Event_SessionUpdated
		upd  agentsv1.SessionUpdated
	}{}
	p.upd.Meta = wire.Meta(e.meta)
	if n := len(e.turns); n > 0 {
		p.upd.HeadTurn = wire.TurnForEvent(e.turns[n-1])
	}
	p.body.SessionUpdated = &p.upd
	p.ev = agentsv1.Event{SessionId: a.id, Owner: e.meta.Owner, Body: &p.body}
	return events.WithKind(&p.ev)
}

// landed reports whether a failed write is stored after all: the
// connection was lost while the database committed it, so the error told
// nothing. Each write stamps the metadata anew and the actor is the
// session's only writer, so the stored stamp is the write's when it
// landed. Its events are in the log, but were not published. A write
// found landed is taken as written. told is false when the store could
// not be asked (the database still away): a run's write is then told
// when it is tried again (resync), a client's once the store answers
// (settleDoubt).
func (a *actor) landed(e *edit) (landed, told bool) {
	if e.meta.Updated.Equal(a.st.meta.Updated) {
		return false, true
	}
	m, err := a.r.store.GetMeta(a.r.ctx, a.id)
	switch {
	case errs.KindOf(err) == errs.KindNotFound:
		return false, true
	case err != nil:
		return false, false
	}
	return m.Updated.Equal(e.meta.Updated), true
}

// doubtPause is the least time between two looks at a write in doubt:
// while the database is away, a session taking commands must not try
// it for each.
const doubtPause = 250 * time.Millisecond

// settleDoubt runs before each command while a write is in doubt. Once
// the store answers, a write that did not land is forgotten: memory was
// right. One that landed made memory wrong (the client was told it
// failed, and memory lacks it), so the session is read again from the
// store (reload). While the store cannot be asked, writes are refused
// (apply) and reads answer from memory.
func (a *actor) settleDoubt() {
	d := a.ws.doubtDue(time.Now())
	if d == nil {
		return
	}
	landed, told := d.landed()
	if !told {
		d.after = time.Now().Add(doubtPause)
		return
	}
	a.ws.resolved()
	if landed {
		a.log().Warn("a write whose outcome was not known is stored; the session is read again", "session", a.id)
		a.reload()
	}
}

// reload makes the session what the store has, as a restart does: what
// memory had going (a run, a pending write) goes, and what the store
// says is going (a run, a wake for mail) is taken up. When the store
// cannot be read, the session stays in doubt, and the next command
// tries again.
func (a *actor) reload() {
	a.closeRun()
	a.ws.drop()
	a.waiting = nil
	st, err := a.r.load(a.r.ctx, a.id)
	switch {
	case errs.KindOf(err) == errs.KindNotFound:
		a.ws.end(a.unknown())
		return
	case err != nil:
		a.log().Warn("read the session again", "session", a.id, "err", err)
		a.ws.suspect(&doubt{landed: func() (bool, bool) { return true, true }})
		return
	}
	a.restore(st)
	a.prompt = prompt{}
	a.turnCache.drop()
	a.turnCache = nil
	if err := a.recoverSession(); err != nil {
		a.log().Error("take the session up again", "session", a.id, "err", err)
	}
}

// stored makes a stored edit the actor's state.
func (a *actor) stored(e *edit) {
	if e.create {
		// The hold of a session can only be taken once it is stored.
		// Another server that took it in between (it saw a running
		// session without a server) runs it now.
		if err := a.takeHold(a.r.ctx); err != nil {
			a.loseLease(err)
		}
	}
	a.st.meta = e.meta
	a.st.turns = append(a.st.turns, e.turns...)
	if len(e.settled) > 0 {
		a.st.deferred = slices.DeleteFunc(a.st.deferred, func(d session.DeferredCall) bool { return slices.Contains(e.settled, d.Token) })
		a.st.meta.PendingCalls = len(a.st.deferred)
		a.waiting = nil
	}
	if len(e.delivered) > 0 {
		a.st.mail = slices.DeleteFunc(a.st.mail, func(m session.Mail) bool { return slices.Contains(e.delivered, m.ID) })
	}
}

// write commits a change with its events through the committer, which
// publishes them once they are stored.
func (r *Runner) write(ctx context.Context, ch *store.Change, evs []*agentsv1.Event) error {
	err := r.commits.Write(ctx, ch, evs)
	if err != nil && r.ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Not taken because the runner is closing (its writes use its
		// context): say so, as the committer would.
		return errClosing
	}
	if err == nil && len(ch.NewMail) > 0 {
		r.place.MailStored(ch.NewMail)
	}
	return err
}

// announce logs and publishes events that change no state of their own
// (a helper call's progress, a rejected mail, a reload of the agents).
func (r *Runner) announce(ctx context.Context, evs ...*agentsv1.Event) error {
	return r.write(ctx, &store.Change{}, evs)
}

// Announce publishes a server-wide event (agents.changed) through the log.
func (r *Runner) Announce(ctx context.Context, ev *agentsv1.Event) error {
	return r.announce(ctx, ev)
}
