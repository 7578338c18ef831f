package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/agents-os/agents/backend/internal/catalog"
	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
	"github.com/agents-os/agents/backend/internal/store"
)

// StopBudget is the reason a run stops when a budget is spent: no model
// call started, the session is paused, and Resume continues it once the
// budget is raised.
const StopBudget = "budget_exceeded"

// reservationTTL bounds how long a model call's reservation holds when
// its server stops without settling it; the session's next admission
// replaces it sooner.
const reservationTTL = 15 * time.Minute

// minOutput is the least output worth starting a model call for: a budget
// that leaves less after the call's input refuses it, rather than start a
// call cut off before it could answer. 64 tokens hold a short answer or a
// tool call.
const minOutput = 64

// A call refused only because other calls in flight hold its budgets
// waits for them to settle, asking again every admitPoll (doubling up to
// admitPollMax), for at most admitWait: as long as a model call usually
// takes, so a budget with room refuses nothing, while a call whose
// budgets stay held (calls that run for minutes, or a stopped server's
// reservations, which hold for reservationTTL) pauses with
// budget_exceeded rather than wait unseen.
const (
	admitWait    = 30 * time.Second
	admitPoll    = 25 * time.Millisecond
	admitPollMax = 500 * time.Millisecond
)

// Budgets are the runner's budget settings.
type Budgets struct {
	// Prices are what models cost, by model name.
	Prices map[string]session.Price
	// OwnerDefault is the budget of an owner with none of its own.
	OwnerDefault *session.OwnerBudget
	// ReserveTokens is the output a model call under a budget reserves
	// and asks for at most when its model's maximum output is not known
	// (the catalog's default maximum when zero). A call reserves its measured input and
	// that output, capped at what its budgets leave; calls of one tree or
	// owner running at once see each other's reservations as spent.
	ReserveTokens int64
	// OnUsage, when set, is told the usage of every model answer (the
	// metrics count it by owner and model).
	OnUsage func(owner, model string, u session.Usage)
}

// price returns the price of the model that answered, else of the model
// the agent asked for.
func (b Budgets) price(models ...string) (session.Price, bool) {
	for _, m := range models {
		if p, ok := b.Prices[m]; ok && m != "" {
			return p, true
		}
	}
	return session.Price{}, false
}

// priced gives u its cost, when a price is known.
func (b Budgets) priced(u session.Usage, models ...string) session.Usage {
	if p, ok := b.price(models...); ok {
		c := p.Cost(u)
		u.Cost = &c
	}
	return u
}

// callBudget is what a step's admission needs of the session, taken on
// the actor: the worker that lists the step's tools measures the request
// and asks for the reservation off the actor.
type callBudget struct {
	session, root, owner string
	price                session.Price
	ownerDefault         *session.OwnerBudget
	now                  func() time.Time
}

func (a *actor) callBudget() callBudget {
	c := callBudget{
		session: a.id, root: a.st.meta.Root(), owner: a.st.meta.Owner,
		ownerDefault: a.r.opts.Budgets.OwnerDefault, now: a.r.now,
	}
	// Priced as the answer will be when the provider names no other
	// model; the zero price when it has none.
	c.price, _ = a.r.opts.Budgets.price(a.agent.Model.Name)
	return c
}

// maxOutput is the most output a call of the agent's model may produce:
// the model's limit (the catalog resolves one for every model), unless
// nobody states it (the catalog's default for an unknown model), where
// Budgets.ReserveTokens says.
func (a *actor) maxOutput() int64 {
	lim := a.agent.Model.Limits
	if n := a.r.opts.Budgets.ReserveTokens; lim.Source == catalog.LimitsDefault && n > 0 {
		return n
	}
	return lim.MaxOutputTokens
}

// reservation is what the step's model call asks of its budgets: its
// input of input tokens, and up to maxOutput tokens of output.
func (c callBudget) reservation(input, maxOutput int64) store.Reservation {
	now := c.now()
	return store.Reservation{
		SessionID: c.session, RootID: c.root, Owner: c.owner,
		Input: input, Output: maxOutput, MinOutput: min(minOutput, maxOutput),
		Price: c.price,
		Now:   now, Expires: now.Add(reservationTTL),
		OwnerDefault: c.ownerDefault,
	}
}

// admit asks the budgets to admit a step's model call, input tokens long.
// A call refused only because other calls in flight hold its budgets
// waits for them to settle (see admitWait), asking again each time; the
// refusal stands once the wait is over. It returns ctx's error once ctx
// is done.
func (r *Runner) admit(ctx context.Context, c callBudget, input, maxOutput int64) (store.Admission, error) {
	deadline := time.Now().Add(admitWait)
	poll := admitPoll
	for {
		adm, err := r.store.Reserve(ctx, c.reservation(input, maxOutput))
		if err != nil || adm.Exceeded == "" || !adm.Held || time.Now().After(deadline) {
			return adm, err
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return adm, ctx.Err()
		case <-t.C:
		}
		poll = min(2*poll, admitPollMax)
	}
}

// budgetStopped ends a run whose model call was not admitted: the session
// pauses with reason budget_exceeded, naming the budget that is spent.
func (a *actor) budgetStopped(st *step, adm store.Admission) {
	if !a.current(st) {
		return
	}
	a.run.steps-- // the step never called the model
	a.run.budget = adm.Exceeded
	// What the budgets read is the session's once the end is written.
	e := a.edit()
	e.meta.Budget, e.meta.TreeSpend = adm.TreeBudget, adm.TreeSpend
	a.endRunWith(e, session.StatusPaused, StopBudget, "")
}

// Update is what UpdateSession changes; nil fields stay.
type Update struct {
	// Budget replaces the tree's budget; one with no limit removes it.
	Budget *session.Budget `json:"budget,omitempty"`
	Title  *string         `json:"title,omitempty"`
}

// UpdateSession changes a root session's budget or any session's title;
// a run in flight goes on, and a run stopped by its budget waits for
// Resume, unless the new budget asks to resume by itself: then the
// sessions of the tree it paused resume, and the answer says so. A
// session another server holds is changed there.
func (r *Runner) UpdateSession(ctx context.Context, owner, id string, u Update) (session.Meta, error) {
	if u.Budget == nil && u.Title == nil {
		return session.Meta{}, errs.Invalid(errs.CodeInvalidArgument, "set budget or title")
	}
	meta, _, err := onHolder(ctx, r, owner, id, updateCommand(u))
	if err != nil || u.Budget == nil || !u.Budget.AutoResume {
		return meta, err
	}
	// The budget is set whatever the resumes answer: they are logged.
	if err := r.resumeBelow(ctx, owner, id); err != nil {
		r.log.Warn("resume a tree its raised budget paused", "session", id, "err", err)
	}
	if !pausedByBudget(meta) {
		return meta, nil
	}
	resumed, err := r.resumeOne(ctx, owner, id, nil)
	if err != nil {
		r.log.Warn("resume a session its raised budget paused", "session", id, "err", err)
		return meta, nil
	}
	return resumed, r.readTree(ctx, &resumed)
}

// pausedByBudget reports whether a budget paused the session.
func pausedByBudget(m session.Meta) bool {
	return m.Status == session.StatusPaused && m.StatusReason == StopBudget
}

// resumeBelow resumes the descendants of the session id that a budget
// paused, without params (a helper's session goes on without its
// parent's), each on the server that holds it.
func (r *Runner) resumeBelow(ctx context.Context, owner, id string) error {
	below, err := r.descendants(ctx, id)
	if err != nil {
		return err
	}
	for _, m := range below {
		// A tree has one owner: another's request finds none of it
		// (the session itself answers that it is unknown).
		if !pausedByBudget(m) || owner != AnyOwner && m.Owner != owner {
			continue
		}
		if _, err := r.resumeOne(ctx, owner, m.ID, nil); err != nil && errs.KindOf(err) != errs.KindNotFound {
			return fmt.Errorf("resume %s under %s: %w", m.ID, id, err)
		}
	}
	return nil
}

// updateCommand is UpdateSession on the session's holder.
type updateCommand Update

func (updateCommand) name() string { return "update_session" }

func (u updateCommand) apply(ctx context.Context, r *Runner, at target) (session.Meta, error) {
	return r.updateLocal(ctx, at.owner, at.session, Update(u))
}

func (r *Runner) updateLocal(ctx context.Context, owner, id string, u Update) (session.Meta, error) {
	meta, err := r.control(ctx, owner, id, func(a *actor) error {
		e := a.edit()
		if u.Title != nil {
			e.meta.Title = cleanTitle(*u.Title)
		}
		if u.Budget != nil {
			if a.st.meta.ParentID != "" {
				return errs.Invalid(errs.CodeInvalidArgument, "session %s is a helper's session: it spends the budget of its root session %s; set the budget there", a.id, a.st.meta.Root())
			}
			b := *u.Budget
			e.treeBudget = &b
			e.meta.Budget = nil
			if b.Limited() {
				e.meta.Budget = &b
			}
		}
		return a.apply(e)
	})
	if err == nil {
		err = r.readTree(ctx, &meta)
	}
	return meta, err
}

// readTree gives m its tree's budget and spend as the store has them. An
// actor's copy is as of its session's last model call: the other
// sessions of its tree (a root's helpers) spend without telling it. A
// root without a budget costs no read: with no limit there is nothing
// left to get wrong, and its spend is as of its last call.
func (r *Runner) readTree(ctx context.Context, m *session.Meta) error {
	if m.Budget == nil && m.RootID == "" {
		return nil
	}
	b, spent, err := r.store.TreeBudget(ctx, m.Root())
	if err != nil {
		return err
	}
	m.Budget, m.TreeSpend = b, spent
	return nil
}

// SetOwnerBudget replaces an owner's budget, and resumes the owner's
// sessions a budget paused where the new budget or the session's own asks
// to resume by itself.
func (r *Runner) SetOwnerBudget(ctx context.Context, b session.OwnerBudget) (session.OwnerBudget, error) {
	if b.Period == "" {
		b.Period = session.PeriodTotal
	}
	b.Source = "owner"
	if err := r.store.SetOwnerBudget(ctx, b, r.now()); err != nil {
		return session.OwnerBudget{}, err
	}
	r.resumePaused(ctx, b.Owner, autoResumes)
	return b, nil
}

// autoResumes reports whether a session a budget paused resumes by itself
// once its owner's budget has room again: the owner's budget or the
// session's tree's asks for it.
func autoResumes(owner session.OwnerBudget, m session.Meta) bool {
	return owner.Budget.AutoResume || m.Budget != nil && m.Budget.AutoResume
}

// resumePaused resumes the owner's sessions (every owner's for "") that
// a budget paused, where asks says yes to their owner's budget in force
// and to the session. Those whose tree's budget is spent stay paused:
// they would pause again at once; one whose budgets leave too little for
// its next call still does. Failures are logged: nobody waits for these
// resumes.
func (r *Runner) resumePaused(ctx context.Context, owner string, asks func(session.OwnerBudget, session.Meta) bool) {
	f := store.ListFilter{Owner: owner, Status: session.StatusPaused, PageSize: store.MaxPageSize}
	budgets := map[string]*session.OwnerBudget{} // each owner's in force; nil when unread
	for {
		list, next, err := r.store.ListSessions(ctx, f)
		if err != nil {
			r.log.Warn("list the sessions a budget paused", "owner", owner, "err", err)
			return
		}
		for _, m := range list {
			if !pausedByBudget(m) || m.Budget.Exceeded(m.TreeSpend) {
				continue
			}
			b, known := budgets[m.Owner]
			if !known {
				ob, err := r.OwnerBudget(ctx, m.Owner)
				if err != nil {
					r.log.Warn("read the budget of an owner", "owner", m.Owner, "err", err)
				} else {
					b = &ob
				}
				budgets[m.Owner] = b
			}
			if b == nil || !asks(*b, m) {
				continue
			}
			if _, err := r.resumeOne(ctx, m.Owner, m.ID, nil); err != nil && errs.KindOf(err) != errs.KindNotFound {
				r.log.Warn("resume a session a budget paused", "session", m.ID, "err", err)
			}
		}
		if next == "" {
			return
		}
		f.PageToken = next
	}
}

// resumeAtRollover resumes, at each UTC midnight (where every day's and
// month's period ends), the sessions a budget paused whose owner's budget
// is of a day or a month, where it or the session's asks to resume by
// itself. Every server does it: a second Resume of a session that runs
// again changes nothing.
func (r *Runner) resumeAtRollover() {
	rolls := func(b session.OwnerBudget, m session.Meta) bool {
		return b.Period != session.PeriodTotal && autoResumes(b, m)
	}
	for {
		_, midnight := session.PeriodDay.Bounds(r.now())
		for now := r.now(); now.Before(midnight); now = r.now() {
			t := time.NewTimer(midnight.Sub(now))
			select {
			case <-r.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		r.resumePaused(r.ctx, "", rolls)
	}
}

// OwnerBudget returns the budget in force for an owner: its own, else
// the default.
func (r *Runner) OwnerBudget(ctx context.Context, owner string) (session.OwnerBudget, error) {
	b, found, err := r.store.OwnerBudget(ctx, owner)
	switch {
	case err != nil:
		return session.OwnerBudget{}, err
	case found:
		return b, nil
	case r.opts.Budgets.OwnerDefault != nil:
		d := *r.opts.Budgets.OwnerDefault
		d.Owner, d.Source = owner, "default"
		return d, nil
	}
	return session.OwnerBudget{Owner: owner, Period: session.PeriodTotal, Source: "none"}, nil
}

// OwnerUsage is what an owner spent.
type OwnerUsage struct {
	Budget     session.OwnerBudget
	Start, End time.Time // the current period; zero for the total
	InPeriod   session.Spend
	Total      session.Spend
	Exceeded   bool
	Left       *session.Budget
}

// OwnerUsage reads what an owner spent in its budget's current period and
// in total.
func (r *Runner) OwnerUsage(ctx context.Context, owner string) (OwnerUsage, error) {
	b, err := r.OwnerBudget(ctx, owner)
	if err != nil {
		return OwnerUsage{}, err
	}
	now := r.now()
	in, total, err := r.store.OwnerSpend(ctx, owner, b.Period, now)
	if err != nil {
		return OwnerUsage{}, err
	}
	u := OwnerUsage{Budget: b, InPeriod: in, Total: total}
	u.Start, u.End = b.Period.Bounds(now)
	u.Exceeded = b.Budget.Exceeded(in)
	u.Left = b.Budget.Left(in)
	return u, nil
}
