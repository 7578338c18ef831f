package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Budgets keeps what session trees and owners may spend and what they
// spent, and admits model calls against it.
//
// A model call is admitted with Reserve before it starts and settled by
// the Change that stores its answer (Change.Spend). Admission holds a
// lock per owner and per tree (PostgreSQL: transaction-scoped advisory
// locks; SQLite: its single writer) and reads the spend and the other
// calls' reservations in one statement, so two admissions of one owner
// or tree are ordered, and each sees the reservations of the calls
// admitted before it, on one server or on several sharing a database.
type Budgets interface {
	// Reserve admits a model call and records its reservation, replacing
	// the session's earlier one; a refused call reserves nothing.
	Reserve(ctx context.Context, r Reservation) (Admission, error)
	// TreeBudget returns the budget of the tree rooted at root (nil for
	// none) and what the whole tree spent.
	TreeBudget(ctx context.Context, root string) (*session.Budget, session.Spend, error)
	// SetTreeBudget replaces the budget of the tree rooted at root.
	SetTreeBudget(ctx context.Context, root string, b session.Budget, at time.Time) error
	// SetOwnerBudget replaces an owner's own budget.
	SetOwnerBudget(ctx context.Context, b session.OwnerBudget, at time.Time) error
	// OwnerBudget returns an owner's own budget; found is false when it
	// has none.
	OwnerBudget(ctx context.Context, owner string) (b session.OwnerBudget, found bool, err error)
	// OwnerSpend returns what an owner spent in the period that holds at
	// and in total.
	OwnerSpend(ctx context.Context, owner string, period session.Period, at time.Time) (inPeriod, total session.Spend, err error)
	// UsageSeries sums the model calls of q's range per bucket, owner,
	// agent and model.
	UsageSeries(ctx context.Context, q UsageQuery) ([]UsagePoint, error)
	// FoldModelCalls sums the model calls made before a time per UTC
	// hour, owner, agent and model, keeps the sums for the usage series
	// and deletes the calls, and returns how many it folded. The series
	// reads the same after as before, and servers sharing a database may
	// fold at once: each call is folded once.
	FoldModelCalls(ctx context.Context, before time.Time) (int, error)
}

// Reservation asks to admit a model call of a session.
//
// The call spends its input whatever it answers, and at most the output
// it asks for: admission grants it an output cap, what its budgets leave
// after its input, and the call asks the model for no more. What the call
// holds while it runs (Input plus the granted output, and their cost) is
// what the other calls of its tree and owner see as taken, so calls
// running at once cannot together spend past a budget except by the error
// of the measure of their inputs.
type Reservation struct {
	SessionID, RootID, Owner string
	// Input is the call's input tokens, measured before it is sent; the
	// measure errs on the high side, since a budget can overrun by what it
	// under-counts.
	Input int64
	// Output is the most output the call would like (the model's maximum
	// output); MinOutput the least worth starting the call for (at least
	// 1, at most Output): a budget that leaves less refuses the call.
	Output, MinOutput int64
	// Price prices the call's tokens for the cost limits: input at the
	// input price (none of it counted as cached) and output at the output
	// price. The zero Price is a model without one: its calls cost
	// nothing, and no cost limit caps them.
	Price session.Price
	// Now is the time of the request; Expires when the reservation
	// stops holding anything, should its server never settle it.
	Now, Expires time.Time
	// OwnerDefault is the budget of an owner that has none of its own.
	OwnerDefault *session.OwnerBudget
}

// minOutput is the least output r's call may be granted.
func (r Reservation) minOutput() int64 { return max(1, min(r.MinOutput, r.Output)) }

// held is what r's call holds while it runs, given its output cap.
func (r Reservation) held(output int64) session.Spend {
	return session.Spend{
		Tokens: r.Input + output,
		Cost:   r.Price.Cost(session.Usage{Prompt: r.Input, Completion: output}),
	}
}

// Budget scopes, as Admission.Exceeded names them.
const (
	ScopeSession = "session"
	ScopeOwner   = "owner"
)

// Admission is the answer to a Reservation.
type Admission struct {
	// Exceeded is "" when the call may start, else the budget that has
	// no room for it: ScopeSession (the tree's) or ScopeOwner.
	Exceeded string
	// Held reports a refusal owed only to other calls' reservations: what
	// is spent leaves room for the call, so it may be admitted once they
	// settle. False when a budget is spent.
	Held bool
	// Output is the output cap of an admitted call under a budget, in
	// [MinOutput, Output]: the call must ask the model for no more. Zero
	// when no budget applies, and nothing caps the call.
	Output int64
	// TreeBudget is the tree's budget (nil for none) and TreeSpend what
	// the tree spent.
	TreeBudget *session.Budget
	TreeSpend  session.Spend
	// Owner is the owner's budget in force and OwnerSpend what the owner
	// spent in its current period.
	Owner      session.OwnerBudget
	OwnerSpend session.Spend
	// Reserved says the call holds a reservation, which its spend
	// releases (SpendChange.Reserved).
	Reserved bool
	// Read says the budgets and the spend were read: a call under no
	// budget is admitted without reading them, and its TreeSpend is zero,
	// not the tree's.
	Read bool
}

// SpendAfter is the tree's spend once the call adm admitted spent spent:
// the spend adm read plus the call's, or, for a call admitted under no
// budget without reading it, the spend the session saw (seen) plus the
// call's.
func (adm Admission) SpendAfter(seen, spent session.Spend) session.Spend {
	if !adm.Read {
		return seen.Add(spent)
	}
	return adm.TreeSpend.Add(spent)
}

// SpendChange adds what a model call spent to its tree and owner and
// releases the session's reservation. Changes apply it last, just before
// their events, in key order, so transactions that settle the calls of
// several owners at once take the spend rows in one order.
type SpendChange struct {
	SessionID, RootID, Owner string
	Spend                    session.Spend
	At                       time.Time
	// The call as the usage series counts it (model_calls): the session's
	// agent, the model that answered, and the tokens split into input and
	// output (Spend.Tokens is their sum).
	Agent, Model       string
	Prompt, Completion int64
	// Reserved says the call held a reservation (Admission.Reserved): a
	// call under no budget reserved nothing and has nothing to release.
	Reserved bool
}

type admissionRow struct {
	TreeSet       int           `db:"tree_set"`
	TreeTokens    sql.NullInt64 `db:"tree_tokens"`
	TreeCost      sql.NullInt64 `db:"tree_cost"`
	OwnerSet      int           `db:"owner_set"`
	OwnerTokens   sql.NullInt64 `db:"owner_tokens"`
	OwnerCost     sql.NullInt64 `db:"owner_cost"`
	OwnerPeriod   string        `db:"owner_period"`
	TreeSpent     int64         `db:"tree_spent"`
	TreeSpentCost int64         `db:"tree_spent_cost"`
	OwnTotal      int64         `db:"own_total"`
	OwnTotalCost  int64         `db:"own_total_cost"`
	OwnDay        int64         `db:"own_day"`
	OwnDayCost    int64         `db:"own_day_cost"`
	OwnMonth      int64         `db:"own_month"`
	OwnMonthCost  int64         `db:"own_month_cost"`
	TreeHeld      int64         `db:"tree_held"`
	TreeHeldCost  int64         `db:"tree_held_cost"`
	OwnHeld       int64         `db:"own_held"`
	OwnHeldCost   int64         `db:"own_held_cost"`
}

// sqlAdmission reads, in one statement and so from one snapshot, the
// budgets, the spend and the reservations of the other calls in flight.
const sqlAdmission = `SELECT
	COALESCE((SELECT 1 + auto_resume FROM tree_budgets WHERE root_id = ?), 0) AS tree_set,
	(SELECT tokens FROM tree_budgets WHERE root_id = ?) AS tree_tokens,
	(SELECT cost FROM tree_budgets WHERE root_id = ?) AS tree_cost,
	(SELECT COUNT(*) FROM owner_budgets WHERE owner = ?) AS owner_set,
	(SELECT tokens FROM owner_budgets WHERE owner = ?) AS owner_tokens,
	(SELECT cost FROM owner_budgets WHERE owner = ?) AS owner_cost,
	COALESCE((SELECT period FROM owner_budgets WHERE owner = ?), '') AS owner_period,
	COALESCE((SELECT tokens FROM spend WHERE scope = 'tree' AND name = ? AND period = 'total'), 0) AS tree_spent,
	COALESCE((SELECT cost FROM spend WHERE scope = 'tree' AND name = ? AND period = 'total'), 0) AS tree_spent_cost,
	COALESCE((SELECT tokens FROM spend WHERE scope = 'owner' AND name = ? AND period = ?), 0) AS own_total,
	COALESCE((SELECT cost FROM spend WHERE scope = 'owner' AND name = ? AND period = ?), 0) AS own_total_cost,
	COALESCE((SELECT tokens FROM spend WHERE scope = 'owner' AND name = ? AND period = ?), 0) AS own_day,
	COALESCE((SELECT cost FROM spend WHERE scope = 'owner' AND name = ? AND period = ?), 0) AS own_day_cost,
	COALESCE((SELECT tokens FROM spend WHERE scope = 'owner' AND name = ? AND period = ?), 0) AS own_month,
	COALESCE((SELECT cost FROM spend WHERE scope = 'owner' AND name = ? AND period = ?), 0) AS own_month_cost,
	COALESCE((SELECT SUM(tokens) FROM reservations WHERE root_id = ? AND session_id <> ? AND expires > ?), 0) AS tree_held,
	COALESCE((SELECT SUM(cost) FROM reservations WHERE root_id = ? AND session_id <> ? AND expires > ?), 0) AS tree_held_cost,
	COALESCE((SELECT SUM(tokens) FROM reservations WHERE owner = ? AND session_id <> ? AND expires > ?), 0) AS own_held,
	COALESCE((SELECT SUM(cost) FROM reservations WHERE owner = ? AND session_id <> ? AND expires > ?), 0) AS own_held_cost`

const sqlPutReservation = `INSERT INTO reservations (session_id, root_id, owner, tokens, cost, expires)
	VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (session_id) DO UPDATE SET root_id = excluded.root_id,
	owner = excluded.owner, tokens = excluded.tokens, cost = excluded.cost,
	expires = excluded.expires`

// sqlAnyBudget tells whether any tree or owner has a budget at all.
const sqlAnyBudget = `SELECT EXISTS (SELECT 1 FROM tree_budgets) OR EXISTS (SELECT 1 FROM owner_budgets)`

// sqlBudgetsInForce tells whether a tree or an owner has a budget of
// its own: most calls have neither, and for them this one read of two
// keys is the whole admission.
const sqlBudgetsInForce = `SELECT
	EXISTS (SELECT 1 FROM tree_budgets WHERE root_id = ?) OR
	EXISTS (SELECT 1 FROM owner_budgets WHERE owner = ?)`

// Reserve implements Budgets. Most calls are under no budget at all: one
// read of two keys, outside any transaction and lock, tells, and such a
// call reads no spend, reserves nothing and gets no output cap, so an
// unbudgeted step costs no write. A call under a budget is read in full,
// then judged again under the budgets' locks, where the reservations of
// the calls in flight are counted, and reserves its input and the output
// it is granted. A budget set between the reads applies from the next
// call on, as one set while a call runs does.
func (s *SQL) Reserve(ctx context.Context, r Reservation) (Admission, error) {
	if r.OwnerDefault == nil || !r.OwnerDefault.Budget.Limited() {
		inForce, err := s.budgetsInForce(ctx, r)
		if err != nil {
			return Admission{}, s.translate(err, nil, "read the budgets of %s", r.SessionID)
		}
		if !inForce {
			return Admission{Owner: ownerBudgetOf(r.Owner, budgetNone, sql.NullInt64{}, sql.NullInt64{}, "", r.OwnerDefault)}, nil
		}
	}
	adm, err := s.admission(ctx, s.st.admission.GetContext, r)
	if err == nil && (adm.Exceeded != "" || !adm.TreeBudget.Limited() && !adm.Owner.Budget.Limited()) {
		// A refusal writes nothing, and one judged a moment ago stands:
		// so a call waiting for others' reservations asks again without
		// taking the budgets' locks.
		return adm, nil
	}
	err = WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		if s.dialect.LockName != "" {
			// Owner first, then tree: every admission takes them in this
			// order (a tree has one owner), so two never wait on each other.
			for _, key := range []string{"owner:" + r.Owner, "tree:" + r.RootID} {
				if _, err := tx.ExecContext(ctx, tx.Rebind(s.dialect.LockName), key); err != nil {
					return s.translate(err, nil, "lock budget %s", key)
				}
			}
		}
		var err error
		if adm, err = s.admission(ctx, s.st.admissionLocked.in(ctx, tx).GetContext, r); err != nil || adm.Exceeded != "" {
			return err
		}
		held := r.held(adm.Output)
		if _, err := s.st.putReservation.in(ctx, tx).ExecContext(ctx, r.SessionID, r.RootID, r.Owner, held.Tokens, int64(held.Cost), nanos(r.Expires)); err != nil {
			return s.translate(err, unknownSession(r.SessionID), "reserve budget for %s", r.SessionID)
		}
		adm.Reserved = true
		return nil
	})
	if _, typed := errs.As(err); err != nil && !typed {
		err = s.translate(err, nil, "reserve budget for %s", r.SessionID)
	}
	return adm, err
}

// The states of SQL.budgets and SQL.firings: what an embedded database,
// which one server alone writes, is known to hold of some rows.
const (
	rowsUnread  int32 = iota // not read yet
	rowsAbsent               // none at all
	rowsPresent              // some, or some are being written
)

// budgetsInForce tells whether r's tree or owner has a budget of its own.
// On an embedded database every budget is set through this store, so once
// it has read that there is none anywhere, no call reads again until one
// is set (noteBudget). A database other servers share is read every time.
func (s *SQL) budgetsInForce(ctx context.Context, r Reservation) (bool, error) {
	if s.dialect.Embedded {
		switch s.budgets.Load() {
		case rowsAbsent:
			return false, nil
		case rowsUnread:
			var some bool
			if err := s.st.anyBudget.GetContext(ctx, &some); err != nil {
				return false, err
			}
			// A budget set meanwhile has moved the state on: it stays.
			if !some && s.budgets.CompareAndSwap(rowsUnread, rowsAbsent) {
				return false, nil
			}
		}
	}
	var inForce bool
	err := s.st.budgetsInForce.GetContext(ctx, &inForce, r.RootID, r.Owner)
	return inForce, err
}

// noReservations tells that no call of this server has reserved anything:
// on an embedded database known to hold no budget, Reserve writes none,
// so there is nothing to release. (One left by an earlier run of the
// server under a budget since removed counts until it expires, as one
// a crash leaves always did.)
func (s *SQL) noReservations() bool {
	return s.dialect.Embedded && s.budgets.Load() == rowsAbsent
}

// noteBudget records, before a budget is written, that the database may
// hold one: from now on admissions read it.
func (s *SQL) noteBudget() { s.budgets.Store(rowsPresent) }

// admission reads, with get (sqlAdmission prepared on a pool or bound in
// a transaction holding the budgets' locks), the budgets, the spend and
// the other calls' reservations that r's call is judged by, and judges it
// (see judge).
func (s *SQL) admission(ctx context.Context, get func(ctx context.Context, dest any, args ...any) error, r Reservation) (Admission, error) {
	adm := Admission{Read: true}
	var row admissionRow
	now := nanos(r.Now)
	day, month := session.PeriodDay.Key(r.Now), session.PeriodMonth.Key(r.Now)
	total := string(session.PeriodTotal)
	err := get(ctx, &row,
		r.RootID, r.RootID, r.RootID,
		r.Owner, r.Owner, r.Owner, r.Owner,
		r.RootID, r.RootID,
		r.Owner, total, r.Owner, total,
		r.Owner, day, r.Owner, day,
		r.Owner, month, r.Owner, month,
		r.RootID, r.SessionID, now, r.RootID, r.SessionID, now,
		r.Owner, r.SessionID, now, r.Owner, r.SessionID, now)
	if err != nil {
		return adm, s.translate(err, nil, "read the budgets of %s", r.SessionID)
	}
	adm.TreeBudget = budgetOf(row.TreeSet, row.TreeTokens, row.TreeCost)
	adm.TreeSpend = session.Spend{Tokens: row.TreeSpent, Cost: session.Nanos(row.TreeSpentCost)}
	// Judging needs the limits only: the admission reads no auto_resume.
	adm.Owner = ownerBudgetOf(r.Owner, row.OwnerSet, row.OwnerTokens, row.OwnerCost, row.OwnerPeriod, r.OwnerDefault)
	switch adm.Owner.Period {
	case session.PeriodDay:
		adm.OwnerSpend = session.Spend{Tokens: row.OwnDay, Cost: session.Nanos(row.OwnDayCost)}
	case session.PeriodMonth:
		adm.OwnerSpend = session.Spend{Tokens: row.OwnMonth, Cost: session.Nanos(row.OwnMonthCost)}
	default:
		adm.OwnerSpend = session.Spend{Tokens: row.OwnTotal, Cost: session.Nanos(row.OwnTotalCost)}
	}
	treeHeld := session.Spend{Tokens: row.TreeHeld, Cost: session.Nanos(row.TreeHeldCost)}
	ownHeld := session.Spend{Tokens: row.OwnHeld, Cost: session.Nanos(row.OwnHeldCost)}
	adm.judge(r, treeHeld, ownHeld)
	return adm, nil
}

// judge grants r's call its output cap, or refuses it. Under each budget
// in force (the tree's, the owner's) the call may have what the limits
// leave after the spend, the other calls' reservations (they count as
// spent: each may yet spend all it holds) and its own input; a cost limit
// leaves as many output tokens as its money buys at the output price. The
// cap is the least of these and Output; below MinOutput the call is
// refused, by the first budget that leaves too little with what is spent
// alone (the budget is spent: Held is false), else by the first that
// leaves too little with the reservations (Held: they may settle).
func (adm *Admission) judge(r Reservation, treeHeld, ownHeld session.Spend) {
	type scope struct {
		name  string
		b     *session.Budget
		spent session.Spend
		held  session.Spend
	}
	var scopes []scope
	if adm.TreeBudget.Limited() {
		scopes = append(scopes, scope{ScopeSession, adm.TreeBudget, adm.TreeSpend, treeHeld})
	}
	if adm.Owner.Budget.Limited() {
		scopes = append(scopes, scope{ScopeOwner, &adm.Owner.Budget, adm.OwnerSpend, ownHeld})
	}
	if len(scopes) == 0 {
		return
	}
	least := r.minOutput()
	for _, sc := range scopes {
		if room(sc.b, sc.spent, r) < least {
			adm.Exceeded = sc.name
			return
		}
	}
	grant := r.Output
	for _, sc := range scopes {
		g := room(sc.b, sc.spent.Add(sc.held), r)
		if g < least {
			adm.Exceeded, adm.Held = sc.name, true
			return
		}
		grant = min(grant, g)
	}
	adm.Output = grant
}

// room is how many output tokens b leaves r's call once spent and the
// call's input are taken; negative when even the input does not fit, and
// math.MaxInt64 when b does not limit the call's output.
func room(b *session.Budget, spent session.Spend, r Reservation) int64 {
	out := int64(math.MaxInt64)
	if b.Tokens != nil {
		out = *b.Tokens - spent.Tokens - r.Input
	}
	if b.Cost != nil {
		left := *b.Cost - spent.Cost - r.Price.Cost(session.Usage{Prompt: r.Input})
		perToken := r.Price.OutputPerMTok * session.NanosPerDollar / 1e6 // nanodollars an output token costs
		switch {
		case left <= 0:
			// Spent, or no money left after the input: a limit reached
			// stops the calls of a model without a price too.
			out = -1
		case perToken > 0:
			if n := math.Floor(float64(left) / perToken); n < float64(out) {
				out = int64(n)
			}
		}
	}
	return out
}

// ownerBudgetOf is the budget in force for an owner: its own row (see
// budgetOf), else the default, else none.
func ownerBudgetOf(owner string, row int, tokens, cost sql.NullInt64, period string, def *session.OwnerBudget) session.OwnerBudget {
	switch {
	case row != budgetNone:
		b := budgetOf(row, tokens, cost)
		return session.OwnerBudget{Owner: owner, Budget: *b, Period: session.Period(period), Source: "owner"}
	case def != nil:
		d := *def
		d.Owner, d.Source = owner, "default"
		return d
	}
	return session.OwnerBudget{Owner: owner, Period: session.PeriodTotal, Source: "none"}
}

// sqlTreeBudget reads a tree's budget and spend.
const sqlTreeBudget = `SELECT
	COALESCE((SELECT 1 + auto_resume FROM tree_budgets WHERE root_id = ?), 0) AS budget_set,
	(SELECT tokens FROM tree_budgets WHERE root_id = ?) AS budget_tokens,
	(SELECT cost FROM tree_budgets WHERE root_id = ?) AS budget_cost,
	COALESCE((SELECT tokens FROM spend WHERE scope = 'tree' AND name = ? AND period = 'total'), 0) AS tree_tokens,
	COALESCE((SELECT cost FROM spend WHERE scope = 'tree' AND name = ? AND period = 'total'), 0) AS tree_cost`

// TreeBudget implements Budgets.
func (s *SQL) TreeBudget(ctx context.Context, root string) (*session.Budget, session.Spend, error) {
	var row struct {
		Set       int           `db:"budget_set"`
		Tokens    sql.NullInt64 `db:"budget_tokens"`
		Cost      sql.NullInt64 `db:"budget_cost"`
		Spent     int64         `db:"tree_tokens"`
		SpentCost int64         `db:"tree_cost"`
	}
	err := s.st.treeBudget.GetContext(ctx, &row, root, root, root, root, root)
	if err != nil {
		return nil, session.Spend{}, s.translate(err, nil, "read the budget of %s", root)
	}
	return budgetOf(row.Set, row.Tokens, row.Cost), session.Spend{Tokens: row.Spent, Cost: session.Nanos(row.SpentCost)}, nil
}

const sqlPutTreeBudget = `INSERT INTO tree_budgets (root_id, tokens, cost, auto_resume, updated) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (root_id) DO UPDATE SET tokens = excluded.tokens, cost = excluded.cost,
	auto_resume = excluded.auto_resume, updated = excluded.updated`

// SetTreeBudget implements Budgets.
func (s *SQL) SetTreeBudget(ctx context.Context, root string, b session.Budget, at time.Time) error {
	return WithTx(ctx, s.write, func(tx *sqlx.Tx) error { return s.putTreeBudget(ctx, tx, root, b, at) })
}

func (s *SQL) putTreeBudget(ctx context.Context, tx *sqlx.Tx, root string, b session.Budget, at time.Time) error {
	if !b.Limited() {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM tree_budgets WHERE root_id = ?`), root); err != nil {
			return s.translate(err, nil, "clear the budget of %s", root)
		}
		return nil
	}
	s.noteBudget()
	if _, err := tx.ExecContext(ctx, tx.Rebind(sqlPutTreeBudget), root, nullTokens(b.Tokens), nullCost(b.Cost), boolInt(b.AutoResume), nanos(at)); err != nil {
		return s.translate(err, unknownSession(root), "set the budget of %s", root)
	}
	return nil
}

// boolInt stores a bool as the integer both dialects read back.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func nullTokens(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

const sqlPutOwnerBudget = `INSERT INTO owner_budgets (owner, tokens, cost, period, auto_resume, updated) VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (owner) DO UPDATE SET tokens = excluded.tokens, cost = excluded.cost,
	period = excluded.period, auto_resume = excluded.auto_resume, updated = excluded.updated`

// SetOwnerBudget implements Budgets.
func (s *SQL) SetOwnerBudget(ctx context.Context, b session.OwnerBudget, at time.Time) error {
	s.noteBudget()
	_, err := s.write.ExecContext(ctx, s.write.Rebind(sqlPutOwnerBudget), b.Owner, nullTokens(b.Budget.Tokens), nullCost(b.Budget.Cost), string(b.Period), boolInt(b.Budget.AutoResume), nanos(at))
	if err != nil {
		return s.translate(err, nil, "set the budget of owner %s", b.Owner)
	}
	return nil
}

// OwnerBudget implements Budgets.
func (s *SQL) OwnerBudget(ctx context.Context, owner string) (session.OwnerBudget, bool, error) {
	var row struct {
		Tokens sql.NullInt64 `db:"tokens"`
		Cost   sql.NullInt64 `db:"cost"`
		Resume int           `db:"auto_resume"`
		Period string        `db:"period"`
	}
	err := s.read.GetContext(ctx, &row, s.read.Rebind(`SELECT tokens, cost, auto_resume, period FROM owner_budgets WHERE owner = ?`), owner)
	if err == sql.ErrNoRows {
		return session.OwnerBudget{}, false, nil
	}
	if err != nil {
		return session.OwnerBudget{}, false, s.translate(err, nil, "read the budget of owner %s", owner)
	}
	return ownerBudgetOf(owner, budgetSet+row.Resume, row.Tokens, row.Cost, row.Period, nil), true, nil
}

// OwnerSpend implements Budgets.
func (s *SQL) OwnerSpend(ctx context.Context, owner string, period session.Period, at time.Time) (session.Spend, session.Spend, error) {
	var rows []struct {
		Period string `db:"period"`
		Tokens int64  `db:"tokens"`
		Cost   int64  `db:"cost"`
	}
	key := period.Key(at)
	err := s.read.SelectContext(ctx, &rows, s.read.Rebind(`SELECT period, tokens, cost FROM spend
		WHERE scope = 'owner' AND name = ? AND period IN (?, ?)`), owner, key, string(session.PeriodTotal))
	if err != nil {
		return session.Spend{}, session.Spend{}, s.translate(err, nil, "read the spend of owner %s", owner)
	}
	var inPeriod, total session.Spend
	for _, r := range rows {
		sp := session.Spend{Tokens: r.Tokens, Cost: session.Nanos(r.Cost)}
		if r.Period == key {
			inPeriod = sp
		}
		if r.Period == string(session.PeriodTotal) {
			total = sp
		}
	}
	return inPeriod, total, nil
}

const (
	sqlAddSpend         = `INSERT INTO spend (scope, name, period, tokens, cost) VALUES `
	sqlAddSpendConflict = ` ON CONFLICT (scope, name, period) DO UPDATE SET
	tokens = spend.tokens + excluded.tokens, cost = spend.cost + excluded.cost`
)

// spendRows is how many spend rows one call settles: its tree's total
// and its owner's total, day and month.
const spendRows = 4

// spendKey is one row of the spend table.
type spendKey struct{ scope, name, period string }

// applySpends adds the changes' spend to the spend rows, each row once
// and in key order, and releases their sessions' reservations.
func (s *SQL) applySpends(ctx context.Context, tx *sqlx.Tx, spends []*SpendChange) error {
	if len(spends) == 0 {
		return nil
	}
	if err := s.addModelCalls(ctx, tx, spends); err != nil {
		return err
	}
	sums := map[spendKey]session.Spend{}
	for _, sp := range spends {
		for _, k := range []spendKey{
			{"tree", sp.RootID, string(session.PeriodTotal)},
			{"owner", sp.Owner, string(session.PeriodTotal)},
			{"owner", sp.Owner, session.PeriodDay.Key(sp.At)},
			{"owner", sp.Owner, session.PeriodMonth.Key(sp.At)},
		} {
			sums[k] = sums[k].Add(sp.Spend)
		}
	}
	keys := make([]spendKey, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b spendKey) int {
		return cmp.Or(cmp.Compare(a.scope, b.scope), cmp.Compare(a.name, b.name), cmp.Compare(a.period, b.period))
	})
	args := make([]any, 0, 5*len(keys))
	for _, k := range keys {
		sp := sums[k]
		args = append(args, k.scope, k.name, k.period, sp.Tokens, int64(sp.Cost))
	}
	if s.dialect.Embedded {
		// Prepared statements of four rows (what one call settles: its
		// tree's total and its owner's three periods) and of one.
		if err := execRows(ctx, tx, s.st.addSpend[:], 5, args); err != nil {
			return s.translate(err, nil, "add spend")
		}
		for _, sp := range spends {
			if !sp.Reserved {
				continue
			}
			if err := s.releaseReservation(ctx, tx, sp.SessionID); err != nil {
				return err
			}
		}
		return nil
	}
	// One statement for every row (each once, so PostgreSQL's upsert
	// never meets a row twice) and one for the reservations: one round
	// trip each.
	q := insertSQL(sqlAddSpend, 5, len(keys)) + sqlAddSpendConflict
	if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
		return s.translate(err, nil, "add spend")
	}
	var ids []string
	for _, sp := range spends {
		if sp.Reserved {
			ids = append(ids, sp.SessionID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	q, in, err := sqlx.In(`DELETE FROM reservations WHERE session_id IN (?)`, ids)
	if err != nil {
		return fmt.Errorf("release reservations: %w", err)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(q), in...); err != nil {
		return s.translate(err, nil, "release reservations")
	}
	return nil
}

const sqlReleaseReservation = `DELETE FROM reservations WHERE session_id = ?`

// releaseReservation drops a session's reservation: its call ended with
// nothing to spend, or spent.
func (s *SQL) releaseReservation(ctx context.Context, tx *sqlx.Tx, id string) error {
	if s.noReservations() {
		return nil
	}
	if _, err := s.st.releaseReservation.in(ctx, tx).ExecContext(ctx, id); err != nil {
		return s.translate(err, nil, "release the reservation of %s", id)
	}
	return nil
}
