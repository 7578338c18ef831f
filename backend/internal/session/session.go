// Package session is the pure model of sessions: metadata, turns, tool calls,
// mail and deferred calls. It does no I/O; the runner drives it, the store
// persists it and the server converts it to the wire format.
package session

import "time"

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
	// AgentVersion is the version of the agent the session's latest step
	// ran: a stored agent's, 0 for a file agent.
	AgentVersion int64 `json:"agent_version,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	Prompt     int64 `json:"prompt,omitempty"`
	Completion int64 `json:"completion,omitempty"`
	Cached     int64 `json:"cached,omitempty"`
	Reasoning  int64 `json:"reasoning,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Prompt:     u.Prompt + o.Prompt,
		Completion: u.Completion + o.Completion,
		Cached:     u.Cached + o.Cached,
		Reasoning:  u.Reasoning + o.Reasoning,
	}
}

// Turn is one entry of the history: exactly one of User and LLM is set.
type Turn struct {
	Index   int       `json:"index"`
	Created time.Time `json:"created"`
	User    *UserTurn `json:"user,omitempty"`
	LLM     *LLMTurn  `json:"llm,omitempty"`
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
