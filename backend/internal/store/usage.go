package store

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agents-os/agents/backend/internal/session"
)

// UsageQuery asks for usage over time: the model calls made in [Since,
// Until), summed per bucket of length Bucket counted from the Unix epoch
// (so UTC hours and days), by owner, agent and model.
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
// midnight UTC). The sums are cast since PostgreSQL sums BIGINTs into
// NUMERIC. %s is the owner condition.
const sqlUsageSeries = `SELECT bucket, owner, agent, model,
	CAST(COUNT(*) AS BIGINT) AS calls,
	CAST(SUM(prompt) AS BIGINT) AS prompt,
	CAST(SUM(completion) AS BIGINT) AS completion,
	CAST(SUM(cost) AS BIGINT) AS cost
FROM (SELECT at - at % CAST(? AS BIGINT) AS bucket, owner, agent, model, prompt, completion, cost
	FROM model_calls WHERE at >= ? AND at < ?%s) calls
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
	query := s.read.Rebind(strings.Replace(sqlUsageSeries, "%s", cond, 1))
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
