package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
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
}

// Reservation asks to admit a model call of a session.
type Reservation struct {
	SessionID, RootID, Owner string
	// Tokens and Cost are what the call may spend, at most: what the
	// other calls of the tree and the owner see as taken while it runs.
	Tokens int64
	Cost   session.Nanos
	// Now is the time of the request; Expires when the reservation
	// stops holding anything, should its server never settle it.
	Now, Expires time.Time
	// OwnerDefault is the budget of an owner that has none of its own.
	OwnerDefault *session.OwnerBudget
}

// Budget scopes, as Admission.Exceeded names them.
const (
	ScopeSession = "session"
	ScopeOwner   = "owner"
)

// Admission is the answer to a Reservation.
type Admission struct {
	// Exceeded is "" when the call may start, else the budget that is
	// spent: ScopeSession (the tree's) or ScopeOwner.
	Exceeded string
	// TreeBudget is the tree's budget (nil for none) and TreeSpend what
	// the tree spent.
	TreeBudget *session.Budget
	TreeSpend  session.Spend
	// Owner is the owner's budget in force and OwnerSpend what the owner
	// spent in its current period.
	Owner      session.OwnerBudget
	OwnerSpend session.Spend
}

// SpendChange adds what a model call spent to its tree and owner and
// releases the session's reservation. Changes apply it last, just before
// their events, in key order, so transactions that settle the calls of
// several owners at once take the spend rows in one order.
type SpendChange struct {
	SessionID, RootID, Owner string
	Spend                    session.Spend
	At                       time.Time
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
	(SELECT COUNT(*) FROM tree_budgets WHERE root_id = ?) AS tree_set,
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

// Reserve implements Budgets. Most calls are under no budget at all: one
// read, outside any transaction and lock, tells, and such a call reserves
// nothing, so an unbudgeted step costs no write. A call under a budget is
// admitted again under the budgets' locks, where the reservations of the
// calls in flight are counted, and reserves what it may spend. A budget
// set between the two reads applies from the next call on, as one set
// while a call runs does.
func (s *SQL) Reserve(ctx context.Context, r Reservation) (Admission, error) {
	adm, err := s.admission(ctx, s.read, r)
	if err == nil && !adm.TreeBudget.Limited() && !adm.Owner.Budget.Limited() {
		return adm, nil
	}
	err = WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		if s.dialect.LockBudget != "" {
			// Owner first, then tree: every admission takes them in this
			// order (a tree has one owner), so two never wait on each other.
			for _, key := range []string{"owner:" + r.Owner, "tree:" + r.RootID} {
				if _, err := tx.ExecContext(ctx, tx.Rebind(s.dialect.LockBudget), key); err != nil {
					return s.translate(err, nil, "lock budget %s", key)
				}
			}
		}
		var err error
		if adm, err = s.admission(ctx, tx, r); err != nil || adm.Exceeded != "" {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(sqlPutReservation), r.SessionID, r.RootID, r.Owner, r.Tokens, int64(r.Cost), nanos(r.Expires)); err != nil {
			return s.translate(err, unknownSession(r.SessionID), "reserve budget for %s", r.SessionID)
		}
		return nil
	})
	if _, typed := errs.As(err); err != nil && !typed {
		err = s.translate(err, nil, "reserve budget for %s", r.SessionID)
	}
	return adm, err
}

// admissionReader is where an admission reads: the database, or a
// transaction holding the budgets' locks.
type admissionReader interface {
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	Rebind(query string) string
}

// admission reads the budgets, the spend and the other calls'
// reservations that r's call is judged by, and judges it: Exceeded names
// the budget that is spent, counting the reservations as spent.
func (s *SQL) admission(ctx context.Context, q admissionReader, r Reservation) (Admission, error) {
	var adm Admission
	var row admissionRow
	now := nanos(r.Now)
	day, month := session.PeriodDay.Key(r.Now), session.PeriodMonth.Key(r.Now)
	total := string(session.PeriodTotal)
	err := q.GetContext(ctx, &row, q.Rebind(sqlAdmission),
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
	adm.TreeBudget = budgetOf(row.TreeSet > 0, row.TreeTokens, row.TreeCost)
	adm.TreeSpend = session.Spend{Tokens: row.TreeSpent, Cost: session.Nanos(row.TreeSpentCost)}
	adm.Owner = ownerBudgetOf(r.Owner, row.OwnerSet > 0, row.OwnerTokens, row.OwnerCost, row.OwnerPeriod, r.OwnerDefault)
	switch adm.Owner.Period {
	case session.PeriodDay:
		adm.OwnerSpend = session.Spend{Tokens: row.OwnDay, Cost: session.Nanos(row.OwnDayCost)}
	case session.PeriodMonth:
		adm.OwnerSpend = session.Spend{Tokens: row.OwnMonth, Cost: session.Nanos(row.OwnMonthCost)}
	default:
		adm.OwnerSpend = session.Spend{Tokens: row.OwnTotal, Cost: session.Nanos(row.OwnTotalCost)}
	}
	// Calls in flight count as spent what they reserved: a call starts
	// only while something is left beyond them.
	treeHeld := session.Spend{Tokens: row.TreeHeld, Cost: session.Nanos(row.TreeHeldCost)}
	ownHeld := session.Spend{Tokens: row.OwnHeld, Cost: session.Nanos(row.OwnHeldCost)}
	switch {
	case adm.TreeBudget.Exceeded(adm.TreeSpend.Add(treeHeld)):
		adm.Exceeded = ScopeSession
	case adm.Owner.Budget.Limited() && (&adm.Owner.Budget).Exceeded(adm.OwnerSpend.Add(ownHeld)):
		adm.Exceeded = ScopeOwner
	}
	return adm, nil
}

// ownerBudgetOf is the budget in force for an owner: its own row, else
// the default, else none.
func ownerBudgetOf(owner string, set bool, tokens, cost sql.NullInt64, period string, def *session.OwnerBudget) session.OwnerBudget {
	switch {
	case set:
		b := budgetOf(true, tokens, cost)
		return session.OwnerBudget{Owner: owner, Budget: *b, Period: session.Period(period), Source: "owner"}
	case def != nil:
		d := *def
		d.Owner, d.Source = owner, "default"
		return d
	}
	return session.OwnerBudget{Owner: owner, Period: session.PeriodTotal, Source: "none"}
}

const sqlPutTreeBudget = `INSERT INTO tree_budgets (root_id, tokens, cost, updated) VALUES (?, ?, ?, ?)
	ON CONFLICT (root_id) DO UPDATE SET tokens = excluded.tokens, cost = excluded.cost, updated = excluded.updated`

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
	if _, err := tx.ExecContext(ctx, tx.Rebind(sqlPutTreeBudget), root, nullTokens(b.Tokens), nullCost(b.Cost), nanos(at)); err != nil {
		return s.translate(err, unknownSession(root), "set the budget of %s", root)
	}
	return nil
}

func nullTokens(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

const sqlPutOwnerBudget = `INSERT INTO owner_budgets (owner, tokens, cost, period, updated) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT (owner) DO UPDATE SET tokens = excluded.tokens, cost = excluded.cost,
	period = excluded.period, updated = excluded.updated`

// SetOwnerBudget implements Budgets.
func (s *SQL) SetOwnerBudget(ctx context.Context, b session.OwnerBudget, at time.Time) error {
	_, err := s.write.ExecContext(ctx, s.write.Rebind(sqlPutOwnerBudget), b.Owner, nullTokens(b.Budget.Tokens), nullCost(b.Budget.Cost), string(b.Period), nanos(at))
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
		Period string        `db:"period"`
	}
	err := s.read.GetContext(ctx, &row, s.read.Rebind(`SELECT tokens, cost, period FROM owner_budgets WHERE owner = ?`), owner)
	if err == sql.ErrNoRows {
		return session.OwnerBudget{}, false, nil
	}
	if err != nil {
		return session.OwnerBudget{}, false, s.translate(err, nil, "read the budget of owner %s", owner)
	}
	return ownerBudgetOf(owner, true, row.Tokens, row.Cost, row.Period, nil), true, nil
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

// spendKey is one row of the spend table.
type spendKey struct{ scope, name, period string }

// applySpends adds the changes' spend to the spend rows, each row once
// and in key order, and releases their sessions' reservations.
func (s *SQL) applySpends(ctx context.Context, tx *sqlx.Tx, spends []*SpendChange) error {
	if len(spends) == 0 {
		return nil
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
	// One statement for every row (each once, so PostgreSQL's upsert
	// never meets a row twice) and one for the reservations.
	values := make([]string, len(keys))
	args := make([]any, 0, 5*len(keys))
	for i, k := range keys {
		sp := sums[k]
		values[i] = "(?, ?, ?, ?, ?)"
		args = append(args, k.scope, k.name, k.period, sp.Tokens, int64(sp.Cost))
	}
	q := sqlAddSpend + strings.Join(values, ", ") + sqlAddSpendConflict
	if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
		return s.translate(err, nil, "add spend")
	}
	ids := make([]string, len(spends))
	for i, sp := range spends {
		ids[i] = sp.SessionID
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

// releaseReservation drops a session's reservation: its call ended with
// nothing to spend.
func (s *SQL) releaseReservation(ctx context.Context, tx *sqlx.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM reservations WHERE session_id = ?`), id); err != nil {
		return s.translate(err, nil, "release the reservation of %s", id)
	}
	return nil
}
