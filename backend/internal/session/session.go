// Package session is the pure model of sessions: metadata, turns, tool calls,
// mail and deferred calls. It does no I/O; the runner drives it, the store
// persists it and the server converts it to the wire format.
package session

import (
	"fmt"
	"math"
	"time"
)

// Status is where a session stands in its life cycle.
type Status string

// The statuses. The string values are stored in the database.
const (
	StatusReady   Status = "ready"
	StatusRunning Status = "running"
	StatusWaiting Status = "waiting"
	StatusPaused  Status = "paused"
	StatusFailed  Status = "failed"
)

// AcceptsInput reports whether a message may start a run in this status.
func (s Status) AcceptsInput() bool { return s == StatusReady || s == StatusFailed }

// Meta is the summary of a session.
type Meta struct {
	ID           string    `json:"id"`
	Agent        string    `json:"agent"`
	Owner        string    `json:"owner"`
	Title        string    `json:"title"`
	Status       Status    `json:"status"`
	StatusReason string    `json:"status_reason,omitempty"`
	ParentID     string    `json:"parent_id,omitempty"`
	ForkedFrom   string    `json:"forked_from,omitempty"`
	TurnCount    int       `json:"turn_count"`
	Usage        Usage     `json:"usage"`
	PendingMail  int       `json:"pending_mail"`
	PendingCalls int       `json:"pending_calls"`
	Depth        int       `json:"depth"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	// AllowedTools are the tools a client allowed for the rest of the
	// session: their calls skip approval.
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// AgentVersion is the version of its stored agent the session's
	// current or latest run runs, stored when the run starts (a run
	// resumed, or recovered after a crash, goes on with it); 0 for a file
	// agent.
	AgentVersion int64 `json:"agent_version,omitempty"`
	// AgentPin is the version of its stored agent the session is pinned
	// to, which every step runs; 0: each step runs the current version.
	AgentPin int64 `json:"agent_pin,omitempty"`
	// AgentGen is the generation of the stored agent the session was
	// created with (the version that agent was created at): an agent
	// deleted and created again under the slug is another one, which the
	// session does not run. 0 for a file agent.
	AgentGen int64 `json:"agent_generation,omitempty"`
	// RootID is the root of the session's tree, empty for a root
	// session (see Root). The sessions of a tree spend one budget.
	RootID string `json:"root_id,omitempty"`
	// Budget is the tree's budget (its root's), nil when it has none.
	Budget *Budget `json:"budget,omitempty"`
	// TreeSpend is what the tree spent, as of the session's last model
	// call or read.
	TreeSpend Spend `json:"tree_spend"`
}

// Root returns the root of the session's tree.
func (m Meta) Root() string {
	if m.RootID != "" {
		return m.RootID
	}
	return m.ID
}

// Nanos are US dollars in billionths: sums of costs stay exact.
type Nanos int64

// NanosPerDollar is how many Nanos make a dollar.
const NanosPerDollar = 1e9

// Dollars converts to US dollars.
func (n Nanos) Dollars() float64 { return float64(n) / NanosPerDollar }

// MaxDollars is the most US dollars a budget limit or a price per
// million tokens may be. A billion dollars is beyond any real budget or
// price, and as Nanos (1e18) it is a ninth of what an int64 holds: a spend
// may run past its limit by a call and sums of such amounts add up before
// they could wrap around to a negative number.
const MaxDollars = 1e9

// MaxNanos is MaxDollars in Nanos.
const MaxNanos Nanos = MaxDollars * NanosPerDollar

// CheckDollars refuses what no budget limit or price may be: a negative
// or non-finite number, or more than MaxDollars.
func CheckDollars(d float64) error {
	if math.IsNaN(d) || d < 0 || d > MaxDollars {
		return fmt.Errorf("must be a number of US dollars from 0 to %.0f, got %v", float64(MaxDollars), d)
	}
	return nil
}

// DollarsToNanos converts US dollars, rounding to the nearest billionth.
// An amount beyond MaxDollars either way saturates there, and NaN is 0: a
// cost priced from a usage no one checked must not wrap around to a
// negative number that lets a budget spend more.
func DollarsToNanos(d float64) Nanos {
	switch {
	case math.IsNaN(d):
		return 0
	case d >= MaxDollars:
		return MaxNanos
	case d <= -MaxDollars:
		return -MaxNanos
	}
	return Nanos(math.Round(d * NanosPerDollar))
}

// Usage counts tokens and what they cost.
type Usage struct {
	Prompt     int64 `json:"prompt,omitempty"`
	Completion int64 `json:"completion,omitempty"`
	Cached     int64 `json:"cached,omitempty"`
	Reasoning  int64 `json:"reasoning,omitempty"`
	// Cost is nil when no price was known for any model the usage counts.
	Cost *Nanos `json:"cost,omitempty"`
}

// Add returns the sum of two usages. The sum has a cost when either has.
func (u Usage) Add(o Usage) Usage {
	sum := Usage{
		Prompt:     u.Prompt + o.Prompt,
		Completion: u.Completion + o.Completion,
		Cached:     u.Cached + o.Cached,
		Reasoning:  u.Reasoning + o.Reasoning,
	}
	if u.Cost != nil || o.Cost != nil {
		var c Nanos
		if u.Cost != nil {
			c += *u.Cost
		}
		if o.Cost != nil {
			c += *o.Cost
		}
		sum.Cost = &c
	}
	return sum
}

// Tokens is what a budget counts: input plus output tokens (cached and
// reasoning tokens are part of those).
func (u Usage) Tokens() int64 { return u.Prompt + u.Completion }

// Spend is the usage as a budget counts it.
func (u Usage) Spend() Spend {
	s := Spend{Tokens: u.Tokens()}
	if u.Cost != nil {
		s.Cost = *u.Cost
	}
	return s
}

// Price is what a model costs per million tokens, in US dollars.
type Price struct {
	InputPerMTok       float64 `json:"input_per_mtok"`
	OutputPerMTok      float64 `json:"output_per_mtok"`
	CachedInputPerMTok float64 `json:"cached_input_per_mtok"`
}

// Cost prices a usage: cached input tokens at the cached input price,
// the other input tokens at the input price, output tokens (reasoning
// ones included) at the output price.
func (p Price) Cost(u Usage) Nanos {
	cached := min(u.Cached, u.Prompt)
	dollars := (float64(u.Prompt-cached)*p.InputPerMTok +
		float64(cached)*p.CachedInputPerMTok +
		float64(u.Completion)*p.OutputPerMTok) / 1e6
	return DollarsToNanos(dollars)
}

// Budget limits what a session tree or an owner spends; a nil limit does
// not apply.
type Budget struct {
	Tokens *int64 `json:"tokens,omitempty"`
	Cost   *Nanos `json:"cost,omitempty"`
	// AutoResume asks that the sessions the budget paused resume by
	// themselves when it is raised and, an owner's, when its period rolls
	// over. It limits nothing.
	AutoResume bool `json:"auto_resume,omitempty"`
}

// Limited reports whether the budget sets a limit.
func (b *Budget) Limited() bool { return b != nil && (b.Tokens != nil || b.Cost != nil) }

// Exceeded reports whether s is at or over a limit of the budget.
func (b *Budget) Exceeded(s Spend) bool {
	return b != nil && ((b.Tokens != nil && s.Tokens >= *b.Tokens) || (b.Cost != nil && s.Cost >= *b.Cost))
}

// Left is what is left of each limit after s, never below 0; nil when
// the budget sets no limit.
func (b *Budget) Left(s Spend) *Budget {
	if !b.Limited() {
		return nil
	}
	var left Budget
	if b.Tokens != nil {
		n := max(*b.Tokens-s.Tokens, 0)
		left.Tokens = &n
	}
	if b.Cost != nil {
		n := max(*b.Cost-s.Cost, 0)
		left.Cost = &n
	}
	return &left
}

// Spend is what was spent: input plus output tokens, and their cost.
type Spend struct {
	Tokens int64 `json:"tokens,omitempty"`
	Cost   Nanos `json:"cost,omitempty"`
}

// Add returns the sum of two spends.
func (s Spend) Add(o Spend) Spend { return Spend{Tokens: s.Tokens + o.Tokens, Cost: s.Cost + o.Cost} }

// Period is the span an owner's budget covers.
type Period string

// The periods. The string values are stored in the database.
const (
	PeriodTotal Period = "total"
	PeriodDay   Period = "day"
	PeriodMonth Period = "month"
)

// Bounds returns the UTC period that holds t; zero times for the total.
func (p Period) Bounds(t time.Time) (start, end time.Time) {
	t = t.UTC()
	switch p {
	case PeriodDay:
		start = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 0, 1)
	case PeriodMonth:
		start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	}
	return time.Time{}, time.Time{}
}

// Key names the period that holds t in the spend table: "total",
// "day:2026-12-02", "month:2026-12".
func (p Period) Key(t time.Time) string {
	t = t.UTC()
	// Built in a buffer on the stack: every model call's spend names two.
	var buf [len("month:") + len("2006-01-02")]byte
	switch p {
	case PeriodDay:
		return string(t.AppendFormat(append(buf[:0], "day:"...), "2006-01-02"))
	case PeriodMonth:
		return string(t.AppendFormat(append(buf[:0], "month:"...), "2006-01"))
	}
	return string(PeriodTotal)
}

// OwnerBudget is the budget in force for an owner.
type OwnerBudget struct {
	Owner  string `json:"owner"`
	Budget Budget `json:"budget"`
	Period Period `json:"period"`
	// Source is "owner" (set for the owner), "default" (the server's) or
	// "none".
	Source string `json:"source"`
}

// Turn is one entry of the history: exactly one of User, LLM and
// Compaction is set.
type Turn struct {
	Index      int         `json:"index"`
	Created    time.Time   `json:"created"`
	User       *UserTurn   `json:"user,omitempty"`
	LLM        *LLMTurn    `json:"llm,omitempty"`
	Compaction *Compaction `json:"compaction,omitempty"`
}

// Sides counts how many of User, LLM and Compaction are set: a valid
// turn has exactly one.
func (t Turn) Sides() int {
	n := 0
	for _, set := range []bool{t.User != nil, t.LLM != nil, t.Compaction != nil} {
		if set {
			n++
		}
	}
	return n
}

// Usage is what producing the turn cost: a model answer's or a summary
// call's usage; zero for a user turn.
func (t Turn) Usage() Usage {
	switch {
	case t.LLM != nil:
		return t.LLM.Usage
	case t.Compaction != nil:
		return t.Compaction.Usage
	}
	return Usage{}
}

// Compaction reasons.
const (
	CompactThreshold = "threshold"
	CompactOverflow  = "overflow"
	CompactManual    = "manual"
)

// Compaction is a turn that changes what later requests send, never what
// the history holds: the system prompt, the summary of the turns before
// SummaryEnd (when there is one), and the turns from SummaryEnd on whole,
// with the long tool results of turns before PruneEnd sent as stubs. The
// turns it covers stay as they were.
type Compaction struct {
	Reason string `json:"reason"`
	// SummaryEnd and Summary: the turns before SummaryEnd are sent as
	// Summary (which folds in the previous summary). 0 and "" when the
	// compaction only pruned.
	SummaryEnd int    `json:"summary_end,omitempty"`
	Summary    string `json:"summary,omitempty"`
	// SummarizedTurns is how many turns this compaction folded in.
	SummarizedTurns int `json:"summarized_turns,omitempty"`
	// PruneEnd: the long tool results of turns before it are stubs;
	// PrunedResults counts them.
	PruneEnd      int `json:"prune_end,omitempty"`
	PrunedResults int `json:"pruned_results,omitempty"`
	// PruneOver is the size, in estimated tokens, above which a result
	// is pruned.
	PruneOver int64 `json:"prune_over,omitempty"`
	// TokensBefore and TokensAfter are the measured request before and
	// after.
	TokensBefore int64 `json:"tokens_before"`
	TokensAfter  int64 `json:"tokens_after"`
	// Model wrote the summary at this Usage.
	Model       string `json:"model,omitempty"`
	Usage       Usage  `json:"usage"`
	Instruction string `json:"instruction,omitempty"`
}

// UserTurn is the model's input at a step.
type UserTurn struct {
	Text        string       `json:"text,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	Mail        []Mail       `json:"mail,omitempty"`
	// Narrowing, on the first turn of a helper's child, is what the
	// parent's narrowed helper tool gave it besides the prompt. It is kept
	// with the turn so that the child keeps it across a restart.
	Narrowing *Narrowing `json:"narrowing,omitempty"`
}

// Narrowing is what a narrowed helper tool gives the child it starts.
type Narrowing struct {
	// Context are lines added to the child's system prompt.
	Context []string `json:"context,omitempty"`
	// Params are bound params of the child (never secrets), over those
	// of the caller.
	Params map[string]string `json:"params,omitempty"`
}

// NarrowingOf returns the narrowing a session was started with, nil
// when none: it is carried by the first turn.
func NarrowingOf(turns []Turn) *Narrowing {
	if len(turns) == 0 || turns[0].User == nil {
		return nil
	}
	return turns[0].User.Narrowing
}

// LLMTurn is one model answer.
type LLMTurn struct {
	Text         string     `json:"text,omitempty"`
	Thinking     string     `json:"thinking,omitempty"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	Usage        Usage      `json:"usage"`
	Model        string     `json:"model,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"`
	Interrupted  bool       `json:"interrupted,omitempty"`
	// AgentVersion is the version of the agent the step ran (a stored
	// agent's; 0 for a file agent).
	AgentVersion int64 `json:"agent_version,omitempty"`
	// Duration is how long the model call took, request to last byte.
	Duration time.Duration `json:"duration,omitempty"`
}

// Attachment is a file sent with a message.
type Attachment struct {
	Name      string `json:"name"`
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"`
}

// ToolKind says who executes a tool.
type ToolKind string

// The tool kinds.
const (
	ToolBash   ToolKind = "bash"
	ToolHelper ToolKind = "helper"
	ToolClient ToolKind = "client"
	ToolMCP    ToolKind = "mcp"
	ToolSystem ToolKind = "system"
	// ToolHTTP is an operation of an HTTP API (openApiToolboxes,
	// postgrestToolboxes): the server sends the request.
	ToolHTTP ToolKind = "http"
)

// CallMode says where a tool call runs.
type CallMode string

// The call modes.
const (
	CallAttached CallMode = "attached"
	CallDeferred CallMode = "deferred"
)

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Arguments string   `json:"arguments"`
	Kind      ToolKind `json:"kind,omitempty"`
	Mode      CallMode `json:"mode,omitempty"`
}

// ResultStatus says how a tool call ended.
type ResultStatus string

// The result statuses.
const (
	ResultOK        ResultStatus = "ok"
	ResultError     ResultStatus = "error"
	ResultCancelled ResultStatus = "cancelled"
	// ResultAborted marks a call that was in flight when the server stopped.
	ResultAborted ResultStatus = "aborted"
)

// ToolResult is the outcome of one tool call as given back to the model.
type ToolResult struct {
	CallID         string        `json:"call_id"`
	Name           string        `json:"name"`
	Text           string        `json:"text"`
	Status         ResultStatus  `json:"status"`
	ChildSessionID string        `json:"child_session_id,omitempty"`
	Duration       time.Duration `json:"duration,omitempty"`
}

// DeferredCall is a tool call waiting for a client's answer.
type DeferredCall struct {
	Token     string      `json:"token"`
	SessionID string      `json:"session_id"`
	Call      ToolCall    `json:"call"`
	Reason    string      `json:"reason"`
	Created   time.Time   `json:"created"`
	Result    *ToolResult `json:"result,omitempty"`
	// Round is the index of the LLM turn whose calls this belongs to: a run
	// resumes once every call of its round is answered.
	Round int `json:"round"`
	// Resume says the call's answer asked the run to go on once every
	// call of the round is answered.
	Resume bool `json:"resume,omitempty"`
}

// Watch forwards the target's run outcomes to the watcher as mail.
type Watch struct {
	WatcherID string    `json:"watcher_id"`
	TargetID  string    `json:"target_id"`
	Expires   time.Time `json:"expires"`
}
