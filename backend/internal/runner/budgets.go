package runner

import (
	"context"
	"strings"
	"time"

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

// Budgets are the runner's budget settings.
type Budgets struct {
	// Prices are what models cost, by model name.
	Prices map[string]session.Price
	// OwnerDefault is the budget of an owner with none of its own.
	OwnerDefault *session.OwnerBudget
	// ReserveTokens is what a model call reserves for its answer, on top
	// of what the session's previous call used (the new call's input is
	// at least that history). Calls of one tree or owner running at once
	// see each other's reservations as spent, so they cannot together
	// start past a budget while each spends no more than it reserved.
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

// reservation is what the session's next model call reserves: the
// previous call's input and output (the next input holds them) and room
// for the answer.
func (a *actor) reservation() store.Reservation {
	var prev int64
	for i := len(a.st.turns) - 1; i >= 0; i-- {
		if t := a.st.turns[i].LLM; t != nil {
			prev = t.Usage.Tokens()
			break
		}
	}
	b := a.r.opts.Budgets
	var cost session.Nanos
	if p, ok := b.price(a.agent.Model.Name); ok {
		cost = p.Cost(session.Usage{Prompt: prev, Completion: b.ReserveTokens})
	}
	now := a.r.now()
	return store.Reservation{
		SessionID: a.id, RootID: a.st.meta.Root(), Owner: a.st.meta.Owner,
		Tokens: prev + b.ReserveTokens, Cost: cost,
		Now: now, Expires: now.Add(reservationTTL),
		OwnerDefault: b.OwnerDefault,
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
	a.st.meta.Budget, a.st.meta.TreeSpend = adm.TreeBudget, adm.TreeSpend
	a.endRun(session.StatusPaused, StopBudget, "")
}

// Update is what UpdateSession changes; nil fields stay.
type Update struct {
	// Budget replaces the tree's budget; one with no limit removes it.
	Budget *session.Budget `json:"budget,omitempty"`
	Title  *string         `json:"title,omitempty"`
}

// UpdateSession changes a root session's budget or any session's title;
// a run in flight goes on, and a run stopped by its budget waits for
// Resume. A session another server holds is changed there.
func (r *Runner) UpdateSession(ctx context.Context, owner, id string, u Update) (session.Meta, error) {
	if u.Budget == nil && u.Title == nil {
		return session.Meta{}, errs.Invalid("invalid_argument", "set budget or title")
	}
	var meta session.Meta
	_, err := r.onHolder(ctx, id, owner, cmdUpdate, u, &meta, func() error {
		var err error
		meta, err = r.updateLocal(ctx, owner, id, u)
		return err
	})
	return meta, err
}

func (r *Runner) updateLocal(ctx context.Context, owner, id string, u Update) (session.Meta, error) {
	return r.control(ctx, owner, id, func(a *actor) error {
		e := a.edit()
		if u.Title != nil {
			e.meta.Title = strings.TrimSpace(*u.Title)
		}
		if u.Budget != nil {
			if a.st.meta.ParentID != "" {
				return errs.Invalid("invalid_argument", "session %s is a helper's session: it spends the budget of its root session %s; set the budget there", a.id, a.st.meta.Root())
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
}

// SetOwnerBudget replaces an owner's budget.
func (r *Runner) SetOwnerBudget(ctx context.Context, b session.OwnerBudget) (session.OwnerBudget, error) {
	if b.Period == "" {
		b.Period = session.PeriodTotal
	}
	b.Source = "owner"
	if err := r.store.SetOwnerBudget(ctx, b, r.now()); err != nil {
		return session.OwnerBudget{}, err
	}
	return b, nil
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
