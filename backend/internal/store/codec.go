package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agents-os/agents/backend/internal/session"
)

// Times are stored as Unix nanoseconds (UTC) in 64-bit integers: they sort
// and compare as numbers in both dialects, with no text format to parse and
// no trailing-zero trimming to break ordering (as RFC 3339 text has). The
// zero time is stored as 0 so it round-trips.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func nullNanos(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: nanos(*t), Valid: true}
}

func fromNullNanos(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromNanos(n.Int64)
	return &t
}

// encode marshals v to JSON text; JSON columns are TEXT in both dialects.
func encode(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode %T: %w", v, err)
	}
	return string(b), nil
}

func decode(s string, v any) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("decode %T: %w", v, err)
	}
	return nil
}

// metaColumns selects a session row as metaRow. The pending counts are
// computed from the mail and deferred_calls tables rather than kept as
// columns, so they can never drift from the rows they count; partial
// indexes on the pending rows keep each count an index probe. The
// pending calls are those a client answers: rows the server answers
// itself (ReasonAttached, ReasonApproved) are left out.
const metaColumns = `s.id, s.agent, s.owner, s.title, s.status, s.status_reason,
	s.parent_id, s.forked_from, s.turn_count, s.usage_prompt,
	s.usage_completion, s.usage_cached, s.usage_reasoning, s.depth,
	s.created, s.updated, s.allowed_tools, s.agent_version, s.agent_generation, s.agent_pin, s.root_id, s.usage_cost,
	COALESCE((SELECT 1 + b.auto_resume FROM tree_budgets b WHERE b.root_id = s.root_id), 0) AS budget_set,
	(SELECT b.tokens FROM tree_budgets b WHERE b.root_id = s.root_id) AS budget_tokens,
	(SELECT b.cost FROM tree_budgets b WHERE b.root_id = s.root_id) AS budget_cost,
	COALESCE((SELECT t.tokens FROM spend t WHERE t.scope = 'tree' AND t.name = s.root_id AND t.period = 'total'), 0) AS tree_tokens,
	COALESCE((SELECT t.cost FROM spend t WHERE t.scope = 'tree' AND t.name = s.root_id AND t.period = 'total'), 0) AS tree_cost,
	(SELECT COUNT(*) FROM mail m
		WHERE m.session_id = s.id AND m.delivered IS NULL) AS pending_mail,
	(SELECT COUNT(*) FROM deferred_calls d
		WHERE d.session_id = s.id AND d.completed IS NULL
		AND d.reason NOT IN ('` + ReasonAttached + `', '` + ReasonApproved + `')) AS pending_calls`

type metaRow struct {
	ID              string        `db:"id"`
	Agent           string        `db:"agent"`
	Owner           string        `db:"owner"`
	Title           string        `db:"title"`
	Status          string        `db:"status"`
	StatusReason    string        `db:"status_reason"`
	ParentID        string        `db:"parent_id"`
	ForkedFrom      string        `db:"forked_from"`
	TurnCount       int           `db:"turn_count"`
	UsagePrompt     int64         `db:"usage_prompt"`
	UsageCompletion int64         `db:"usage_completion"`
	UsageCached     int64         `db:"usage_cached"`
	UsageReasoning  int64         `db:"usage_reasoning"`
	Depth           int           `db:"depth"`
	Created         int64         `db:"created"`
	Updated         int64         `db:"updated"`
	AllowedTools    string        `db:"allowed_tools"`
	AgentVersion    int64         `db:"agent_version"`
	AgentGeneration int64         `db:"agent_generation"`
	AgentPin        int64         `db:"agent_pin"`
	PendingMail     int           `db:"pending_mail"`
	PendingCalls    int           `db:"pending_calls"`
	RootID          string        `db:"root_id"`
	UsageCost       sql.NullInt64 `db:"usage_cost"`
	BudgetSet       int           `db:"budget_set"`
	BudgetTokens    sql.NullInt64 `db:"budget_tokens"`
	BudgetCost      sql.NullInt64 `db:"budget_cost"`
	TreeTokens      int64         `db:"tree_tokens"`
	TreeCost        int64         `db:"tree_cost"`
}

func (r metaRow) meta() session.Meta {
	return session.Meta{
		ID:           r.ID,
		Agent:        r.Agent,
		Owner:        r.Owner,
		Title:        r.Title,
		Status:       session.Status(r.Status),
		StatusReason: r.StatusReason,
		ParentID:     r.ParentID,
		ForkedFrom:   r.ForkedFrom,
		TurnCount:    r.TurnCount,
		Usage: session.Usage{
			Prompt:     r.UsagePrompt,
			Completion: r.UsageCompletion,
			Cached:     r.UsageCached,
			Reasoning:  r.UsageReasoning,
			Cost:       costOf(r.UsageCost),
		},
		RootID:       rootOf(r.ID, r.RootID),
		Budget:       budgetOf(r.BudgetSet, r.BudgetTokens, r.BudgetCost),
		TreeSpend:    session.Spend{Tokens: r.TreeTokens, Cost: session.Nanos(r.TreeCost)},
		PendingMail:  r.PendingMail,
		PendingCalls: r.PendingCalls,
		Depth:        r.Depth,
		Created:      fromNanos(r.Created),
		Updated:      fromNanos(r.Updated),
		AllowedTools: splitLines(r.AllowedTools),
		AgentVersion: r.AgentVersion,
		AgentPin:     r.AgentPin,
		AgentGen:     r.AgentGeneration,
	}
}

// rootOf is a session's RootID: empty for a root session.
func rootOf(id, root string) string {
	if root == id {
		return ""
	}
	return root
}

func costOf(n sql.NullInt64) *session.Nanos {
	if !n.Valid {
		return nil
	}
	c := session.Nanos(n.Int64)
	return &c
}

// A budget's row, as a read that looks it up gives it in one column
// (COALESCE(1 + auto_resume, 0)): none, one, or one that resumes what it
// paused by itself. One column tells both, so reads of a budget cost no
// more for auto_resume.
const (
	budgetNone       = 0
	budgetSet        = 1
	budgetAutoResume = 2
)

// budgetOf reads a budget's columns; nil when there is no row.
func budgetOf(row int, tokens, cost sql.NullInt64) *session.Budget {
	if row == budgetNone {
		return nil
	}
	b := &session.Budget{Cost: costOf(cost), AutoResume: row == budgetAutoResume}
	if tokens.Valid {
		b.Tokens = &tokens.Int64
	}
	return b
}

// splitLines reads a column of one name per line; "" is none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func metas(rows []metaRow) []session.Meta {
	out := make([]session.Meta, len(rows))
	for i, r := range rows {
		out[i] = r.meta()
	}
	return out
}

// turnPayload is what the payload column holds: the index and creation time
// have columns of their own.
type turnPayload struct {
	User       *session.UserTurn   `json:"user,omitempty"`
	LLM        *session.LLMTurn    `json:"llm,omitempty"`
	Compaction *session.Compaction `json:"compaction,omitempty"`
}

type turnRow struct {
	Idx     int    `db:"idx"`
	Created int64  `db:"created"`
	Payload string `db:"payload"`
}

func (r turnRow) turn() (session.Turn, error) {
	var p turnPayload
	if err := decode(r.Payload, &p); err != nil {
		return session.Turn{}, fmt.Errorf("turn %d: %w", r.Idx, err)
	}
	return session.Turn{Index: r.Idx, Created: fromNanos(r.Created), User: p.User, LLM: p.LLM, Compaction: p.Compaction}, nil
}

const mailColumns = `id, session_id, sender_kind, sender_name, priority, body, created, delivered`

type mailRow struct {
	ID         string        `db:"id"`
	SessionID  string        `db:"session_id"`
	SenderKind string        `db:"sender_kind"`
	SenderName string        `db:"sender_name"`
	Priority   string        `db:"priority"`
	Body       string        `db:"body"`
	Created    int64         `db:"created"`
	Delivered  sql.NullInt64 `db:"delivered"`
}

func (r mailRow) mail() (session.Mail, error) {
	m := session.Mail{
		ID:        r.ID,
		SessionID: r.SessionID,
		Sender:    session.Sender{Kind: session.SenderKind(r.SenderKind), Name: r.SenderName},
		Priority:  session.Priority(r.Priority),
		Created:   fromNanos(r.Created),
		Delivered: fromNullNanos(r.Delivered),
	}
	if err := decode(r.Body, &m.Body); err != nil {
		return session.Mail{}, fmt.Errorf("mail %s: %w", r.ID, err)
	}
	return m, nil
}

func mails(rows []mailRow) ([]session.Mail, error) {
	out := make([]session.Mail, len(rows))
	for i, r := range rows {
		m, err := r.mail()
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

const deferredColumns = `token, session_id, round, tool_call, reason, created, result, resume`

type deferredRow struct {
	Token     string         `db:"token"`
	SessionID string         `db:"session_id"`
	Round     int            `db:"round"`
	ToolCall  string         `db:"tool_call"`
	Reason    string         `db:"reason"`
	Created   int64          `db:"created"`
	Result    sql.NullString `db:"result"`
	Resume    bool           `db:"resume"`
}

func (r deferredRow) call() (session.DeferredCall, error) {
	c := session.DeferredCall{
		Token:     r.Token,
		SessionID: r.SessionID,
		Round:     r.Round,
		Reason:    r.Reason,
		Created:   fromNanos(r.Created),
		Resume:    r.Resume,
	}
	if err := decode(r.ToolCall, &c.Call); err != nil {
		return session.DeferredCall{}, fmt.Errorf("deferred call %s: %w", r.Token, err)
	}
	if r.Result.Valid {
		c.Result = new(session.ToolResult)
		if err := decode(r.Result.String, c.Result); err != nil {
			return session.DeferredCall{}, fmt.Errorf("deferred call %s result: %w", r.Token, err)
		}
	}
	return c, nil
}

func calls(rows []deferredRow) ([]session.DeferredCall, error) {
	out := make([]session.DeferredCall, len(rows))
	for i, r := range rows {
		c, err := r.call()
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}
