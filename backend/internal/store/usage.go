package store

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/session"
)

// UsageQuery asks for usage over time: the model calls made in [Since,
// Until), summed per bucket of length Bucket counted from the Unix epoch
// (so UTC hours and days), by owner, agent and model. The calls folded
// (FoldModelCalls) are known by their hour only: Since, Until and Bucket
// are whole hours, or the calls of an hour folded are all counted where
// the hour starts.
type UsageQuery struct {
	// Owner limits the sum to one owner's calls; empty is every owner's.
	Owner        string
	Since, Until time.Time
	Bucket       time.Duration
}

// UsagePoint is what the calls of one bucket, owner, agent and model
// spent.
type UsagePoint struct {
	Start              time.Time
	Owner, Agent       string
	Model              string
	Calls              int64
	Prompt, Completion int64
	Cost               session.Nanos
}

const (
	sqlAddModelCalls = `INSERT INTO model_calls (at, owner, agent, model, session_id, prompt, completion, cost) VALUES`
	modelCallColumns = 8
)

// modelCallRows is the largest INSERT of model calls that is prepared
// besides the one-row one; see execRows.
const modelCallRows = 4

// addModelCalls records each spend's model call for the usage series, in
// the transaction that adds its spend.
func (s *SQL) addModelCalls(ctx context.Context, tx *sqlx.Tx, spends []*SpendChange) error {
	args := make([]any, 0, modelCallColumns*len(spends))
	for _, sp := range spends {
		args = append(args, nanos(sp.At), sp.Owner, sp.Agent, sp.Model, sp.SessionID, sp.Prompt, sp.Completion, int64(sp.Spend.Cost))
	}
	if s.dialect.Embedded || len(spends) == 1 {
		if err := execRows(ctx, tx, s.st.addModelCall[:], modelCallColumns, args); err != nil {
			return s.translate(err, nil, "record model calls")
		}
		return nil
	}
	// One statement, one round trip.
	if _, err := tx.ExecContext(ctx, tx.Rebind(insertSQL(sqlAddModelCalls, modelCallColumns, len(spends))), args...); err != nil {
		return s.translate(err, nil, "record model calls")
	}
	return nil
}

// sqlUsageSeries sums model calls per bucket in one statement both
// dialects run alike: at is an integer of nanoseconds, so the bucket's
// start is at minus at modulo the bucket's length, integer arithmetic in
// SQLite and PostgreSQL both (and a UTC boundary, the epoch being
// midnight UTC). The calls folded into model_call_hours count with those
// still kept one by one: a folded call was deleted from model_calls in
// the transaction that added it to its hour, so none counts twice, and
// an hour folded in part is the sum of both. The sums are cast since
// PostgreSQL sums BIGINTs into NUMERIC. %s is the owner condition.
const sqlUsageSeries = `SELECT bucket, owner, agent, model,
	CAST(SUM(calls) AS BIGINT) AS calls,
	CAST(SUM(prompt) AS BIGINT) AS prompt,
	CAST(SUM(completion) AS BIGINT) AS completion,
	CAST(SUM(cost) AS BIGINT) AS cost
FROM (SELECT at - at % CAST(? AS BIGINT) AS bucket, owner, agent, model, CAST(1 AS BIGINT) AS calls, prompt, completion, cost
	FROM model_calls WHERE at >= ? AND at < ?%s
	UNION ALL
	SELECT hour - hour % CAST(? AS BIGINT) AS bucket, owner, agent, model, calls, prompt, completion, cost
	FROM model_call_hours WHERE hour >= ? AND hour < ?%s) calls
GROUP BY bucket, owner, agent, model
ORDER BY bucket, owner, agent, model`

// UsageSeries implements Budgets.
func (s *SQL) UsageSeries(ctx context.Context, q UsageQuery) ([]UsagePoint, error) {
	bucket := q.Bucket.Nanoseconds()
	args := []any{bucket, nanos(q.Since), nanos(q.Until)}
	cond := ""
	if q.Owner != "" {
		cond = " AND owner = ?"
		args = append(args, q.Owner)
	}
	// The same arguments again, for the folded hours.
	args = append(args, args...)
	var rows []struct {
		Bucket     int64  `db:"bucket"`
		Owner      string `db:"owner"`
		Agent      string `db:"agent"`
		Model      string `db:"model"`
		Calls      int64  `db:"calls"`
		Prompt     int64  `db:"prompt"`
		Completion int64  `db:"completion"`
		Cost       int64  `db:"cost"`
	}
	query := s.read.Rebind(strings.ReplaceAll(sqlUsageSeries, "%s", cond))
	if err := s.read.SelectContext(ctx, &rows, query, args...); err != nil {
		return nil, s.translate(err, nil, "read the usage series")
	}
	out := make([]UsagePoint, len(rows))
	for i, r := range rows {
		out[i] = UsagePoint{
			Start: time.Unix(0, r.Bucket).UTC(), Owner: r.Owner, Agent: r.Agent, Model: r.Model,
			Calls: r.Calls, Prompt: r.Prompt, Completion: r.Completion, Cost: session.Nanos(r.Cost),
		}
	}
	return out, nil
}

// foldBatch bounds the calls one transaction of FoldModelCalls folds, so
// the writer is never held long, not even by the first fold of calls
// kept for months.
const foldBatch = 5000

// FoldModelCalls implements Budgets. Each batch deletes the calls with
// RETURNING and adds what it deleted to the hours, in one transaction: a
// call is deleted once, by one transaction, whichever servers fold at
// once (PostgreSQL: a second DELETE waits for the first's row locks and
// then skips the rows it deleted), and the upsert adds to an hour
// atomically. So no call is counted twice or lost, and a call written
// meanwhile is either deleted and folded or neither. The folds of servers
// sharing a database also take turns (foldModelCalls), which this does
// not rely on.
func (s *SQL) FoldModelCalls(ctx context.Context, before time.Time) (int, error) {
	end := nanos(before)
	// Most folds find nothing to fold (a server folds every minute): a
	// look at the index, and no write.
	var oldest []int64
	if err := s.read.SelectContext(ctx, &oldest, s.read.Rebind(`SELECT at FROM model_calls WHERE at < ? ORDER BY at LIMIT 1`), end); err != nil {
		return 0, s.translate(err, nil, "find model calls to fold")
	}
	if len(oldest) == 0 {
		return 0, nil
	}
	folded := 0
	for {
		// The batch ends after the foldBatch-th oldest call to fold (with
		// those of its instant), or at before.
		var nth []int64
		if err := s.read.SelectContext(ctx, &nth, s.read.Rebind(`SELECT at FROM model_calls WHERE at < ? ORDER BY at LIMIT 1 OFFSET ?`), end, foldBatch-1); err != nil {
			return folded, s.translate(err, nil, "find model calls to fold")
		}
		cut, last := end, true
		if len(nth) > 0 && nth[0]+1 < end {
			cut, last = nth[0]+1, false
		}
		n, err := s.foldModelCalls(ctx, cut)
		folded += n
		if err != nil || last {
			return folded, err
		}
	}
}

// hourKey names one row of model_call_hours, and hourSums is what its
// calls spent.
type (
	hourKey struct {
		hour                int64
		owner, agent, model string
	}
	hourSums struct{ calls, prompt, completion, cost int64 }
)

func (a hourKey) compare(b hourKey) int {
	return cmp.Or(cmp.Compare(a.hour, b.hour), cmp.Compare(a.owner, b.owner), cmp.Compare(a.agent, b.agent), cmp.Compare(a.model, b.model))
}

const (
	sqlFoldModelCalls = `INSERT INTO model_call_hours (hour, owner, agent, model, calls, prompt, completion, cost) VALUES`
	sqlFoldConflict   = ` ON CONFLICT (hour, owner, agent, model) DO UPDATE SET
	calls = model_call_hours.calls + excluded.calls,
	prompt = model_call_hours.prompt + excluded.prompt,
	completion = model_call_hours.completion + excluded.completion,
	cost = model_call_hours.cost + excluded.cost`
	modelCallHourColumns = 8
	// foldRows bounds the hours one upsert adds to.
	foldRows = 100
)

// foldModelCalls folds the calls made before cut (nanoseconds) in one
// transaction.
func (s *SQL) foldModelCalls(ctx context.Context, cut int64) (int, error) {
	n := 0
	err := WithTx(ctx, s.write, func(tx *sqlx.Tx) error {
		if s.dialect.LockName != "" {
			// One fold at a time: two DELETEs of different ranges could
			// take the rows they share in two orders and deadlock, and
			// the second would scan what the first deletes. A fold is
			// short; the second waits, then finds little or nothing.
			if _, err := tx.ExecContext(ctx, tx.Rebind(s.dialect.LockName), "model-call-fold"); err != nil {
				return s.translate(err, nil, "lock the fold of model calls")
			}
		}
		rows, err := tx.QueryxContext(ctx, tx.Rebind(`DELETE FROM model_calls WHERE at < ? RETURNING at, owner, agent, model, prompt, completion, cost`), cut)
		if err != nil {
			return s.translate(err, nil, "fold model calls")
		}
		sums := map[hourKey]*hourSums{}
		for rows.Next() {
			var (
				k                            hourKey
				at, prompt, completion, cost int64
			)
			if err := rows.Scan(&at, &k.owner, &k.agent, &k.model, &prompt, &completion, &cost); err != nil {
				rows.Close()
				return s.translate(err, nil, "fold model calls")
			}
			n++
			k.hour = at - at%int64(time.Hour)
			h := sums[k]
			if h == nil {
				h = &hourSums{}
				sums[k] = h
			}
			h.calls++
			h.prompt += prompt
			h.completion += completion
			h.cost += cost
		}
		if err := rows.Err(); err != nil {
			return s.translate(err, nil, "fold model calls")
		}
		if err := rows.Close(); err != nil {
			return s.translate(err, nil, "fold model calls")
		}
		// In key order, so two servers folding at once take the hours'
		// rows in one order and cannot deadlock.
		hours := slices.SortedFunc(maps.Keys(sums), hourKey.compare)
		for len(hours) > 0 {
			batch := hours[:min(len(hours), foldRows)]
			hours = hours[len(batch):]
			args := make([]any, 0, modelCallHourColumns*len(batch))
			for _, k := range batch {
				h := sums[k]
				args = append(args, k.hour, k.owner, k.agent, k.model, h.calls, h.prompt, h.completion, h.cost)
			}
			q := insertSQL(sqlFoldModelCalls, modelCallHourColumns, len(batch)) + sqlFoldConflict
			if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
				return s.translate(err, nil, "add folded model calls to their hours")
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
