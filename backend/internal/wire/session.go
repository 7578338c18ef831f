package wire

import (
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/session"
)

var statusToWire = map[session.Status]agentsv1.SessionStatus{
	session.StatusReady:   agentsv1.SessionStatus_SESSION_STATUS_READY,
	session.StatusRunning: agentsv1.SessionStatus_SESSION_STATUS_RUNNING,
	session.StatusWaiting: agentsv1.SessionStatus_SESSION_STATUS_WAITING,
	session.StatusPaused:  agentsv1.SessionStatus_SESSION_STATUS_PAUSED,
	session.StatusFailed:  agentsv1.SessionStatus_SESSION_STATUS_FAILED,
}

// Status converts a session status.
func Status(s session.Status) agentsv1.SessionStatus { return statusToWire[s] }

// StatusFromWire converts a wire status; unspecified becomes "".
func StatusFromWire(s agentsv1.SessionStatus) session.Status {
	for k, v := range statusToWire {
		if v == s {
			return k
		}
	}
	return ""
}

// Meta converts session metadata.
func Meta(m session.Meta) *agentsv1.SessionMeta {
	return &agentsv1.SessionMeta{
		Id:                 m.ID,
		Agent:              m.Agent,
		Owner:              m.Owner,
		Title:              m.Title,
		Status:             Status(m.Status),
		StatusReason:       m.StatusReason,
		ParentId:           m.ParentID,
		ForkedFrom:         m.ForkedFrom,
		TurnCount:          int32(m.TurnCount),
		Usage:              Usage(m.Usage),
		PendingMail:        int32(m.PendingMail),
		PendingCalls:       int32(m.PendingCalls),
		Depth:              int32(m.Depth),
		CreateTime:         Timestamp(m.Created),
		UpdateTime:         Timestamp(m.Updated),
		AllowedTools:       m.AllowedTools,
		AgentVersion:       m.AgentVersion,
		PinnedAgentVersion: m.AgentPin,
		AgentGeneration:    m.AgentGen,
		RootId:             m.Root(),
		Budget:             BudgetState(m.Budget, m.TreeSpend),
	}
}

// MetaFrom reads back metadata that Meta converted, as a session.updated
// event carries it: the same session.Meta but for a budget that sets no
// limit, which reads back as none.
func MetaFrom(m *agentsv1.SessionMeta) session.Meta {
	out := session.Meta{
		ID:           m.GetId(),
		Agent:        m.GetAgent(),
		Owner:        m.GetOwner(),
		Title:        m.GetTitle(),
		Status:       StatusFromWire(m.GetStatus()),
		StatusReason: m.GetStatusReason(),
		ParentID:     m.GetParentId(),
		ForkedFrom:   m.GetForkedFrom(),
		TurnCount:    int(m.GetTurnCount()),
		Usage:        usageFrom(m.GetUsage()),
		PendingMail:  int(m.GetPendingMail()),
		PendingCalls: int(m.GetPendingCalls()),
		Depth:        int(m.GetDepth()),
		Created:      m.GetCreateTime().AsTime(),
		Updated:      m.GetUpdateTime().AsTime(),
		AllowedTools: m.GetAllowedTools(),
		AgentVersion: m.GetAgentVersion(),
		AgentPin:     m.GetPinnedAgentVersion(),
		AgentGen:     m.GetAgentGeneration(),
		Budget:       BudgetFrom(m.GetBudget().GetBudget()),
	}
	if root := m.GetRootId(); root != m.GetId() {
		out.RootID = root
	}
	if spent := m.GetBudget().GetSpent(); spent != nil {
		out.TreeSpend = session.Spend{Tokens: spent.GetTokens(), Cost: session.DollarsToNanos(spent.GetCostUsd())}
	}
	return out
}

func usageFrom(u *agentsv1.Usage) session.Usage {
	out := session.Usage{Prompt: u.GetPromptTokens(), Completion: u.GetCompletionTokens(), Cached: u.GetCachedTokens(), Reasoning: u.GetReasoningTokens()}
	if u.CostUsd != nil {
		c := session.DollarsToNanos(u.GetCostUsd())
		out.Cost = &c
	}
	return out
}

// Budget converts a budget's limits; nil for nil.
func Budget(b *session.Budget) *agentsv1.Budget {
	if b == nil {
		return nil
	}
	out := &agentsv1.Budget{Tokens: b.Tokens, AutoResume: b.AutoResume}
	if b.Cost != nil {
		d := b.Cost.Dollars()
		out.CostUsd = &d
	}
	return out
}

// BudgetFrom reads a budget's limits; nil for nil. The caller checked
// they are not negative.
func BudgetFrom(b *agentsv1.Budget) *session.Budget {
	if b == nil {
		return nil
	}
	out := &session.Budget{Tokens: b.Tokens, AutoResume: b.GetAutoResume()}
	if b.CostUsd != nil {
		c := session.DollarsToNanos(b.GetCostUsd())
		out.Cost = &c
	}
	return out
}

// Spend converts a spend.
func Spend(s session.Spend) *agentsv1.Spend {
	return &agentsv1.Spend{Tokens: s.Tokens, CostUsd: s.Cost.Dollars()}
}

// BudgetState converts a budget (nil for none) and what was spent
// against it.
func BudgetState(b *session.Budget, spent session.Spend) *agentsv1.BudgetState {
	if !b.Limited() {
		b = nil
	}
	return &agentsv1.BudgetState{Budget: Budget(b), Spent: Spend(spent), Left: Budget(b.Left(spent)), Exceeded: b.Exceeded(spent)}
}

// Metas converts a list of metadata.
func Metas(list []session.Meta) []*agentsv1.SessionMeta {
	out := make([]*agentsv1.SessionMeta, len(list))
	for i, m := range list {
		out[i] = Meta(m)
	}
	return out
}

// Usage converts token usage.
func Usage(u session.Usage) *agentsv1.Usage {
	out := &agentsv1.Usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion, CachedTokens: u.Cached, ReasoningTokens: u.Reasoning}
	if u.Cost != nil {
		d := u.Cost.Dollars()
		out.CostUsd = &d
	}
	return out
}

// Session converts a whole session.
func Session(m session.Meta, turns []session.Turn, pending []session.DeferredCall) *agentsv1.Session {
	s := &agentsv1.Session{Meta: Meta(m), Turns: make([]*agentsv1.Turn, len(turns))}
	for i, t := range turns {
		s.Turns[i] = Turn(t)
	}
	for _, d := range pending {
		s.PendingCalls = append(s.PendingCalls, DeferredCall(d))
	}
	return s
}

// Turn converts one turn, attachments and their bytes included.
func Turn(t session.Turn) *agentsv1.Turn { return turn(t, true) }

// TurnForEvent converts a turn for an event, such as the head turn of
// session.updated: it is Turn without the attachments' bytes, each
// attachment keeping its name and media type. Events are held in the event
// log and in every subscriber's queue, so a file must not ride along; the
// bytes stay in the session, where attachment i of this turn is
// attachments[i] of the turn with the same index (GetSession).
func TurnForEvent(t session.Turn) *agentsv1.Turn { return turn(t, false) }

func turn(t session.Turn, withData bool) *agentsv1.Turn {
	out := &agentsv1.Turn{Index: int32(t.Index), CreateTime: Timestamp(t.Created)}
	switch {
	case t.User != nil:
		u := &agentsv1.UserTurn{Text: t.User.Text}
		for _, a := range t.User.Attachments {
			wa := &agentsv1.Attachment{Name: a.Name, MediaType: a.MediaType, Size: int64(len(a.Data))}
			if withData {
				wa.Data = a.Data
			}
			u.Attachments = append(u.Attachments, wa)
		}
		for _, r := range t.User.ToolResults {
			u.ToolResults = append(u.ToolResults, ToolResult(r))
		}
		for _, m := range t.User.Mail {
			u.Mail = append(u.Mail, Mail(m))
		}
		out.Kind = &agentsv1.Turn_User{User: u}
	case t.LLM != nil:
		l := &agentsv1.LlmTurn{
			Text:         t.LLM.Text,
			Thinking:     t.LLM.Thinking,
			Usage:        Usage(t.LLM.Usage),
			Model:        t.LLM.Model,
			FinishReason: t.LLM.FinishReason,
			Interrupted:  t.LLM.Interrupted,
			AgentVersion: t.LLM.AgentVersion,
		}
		if t.LLM.Duration > 0 {
			l.Duration = durationpb.New(t.LLM.Duration)
		}
		for _, c := range t.LLM.ToolCalls {
			l.ToolCalls = append(l.ToolCalls, ToolCall(c))
		}
		out.Kind = &agentsv1.Turn_Llm{Llm: l}
	case t.Compaction != nil:
		out.Kind = &agentsv1.Turn_Compaction{Compaction: Compaction(*t.Compaction)}
	}
	return out
}

// Compaction converts a compaction turn's record.
func Compaction(c session.Compaction) *agentsv1.Compaction {
	return &agentsv1.Compaction{
		Reason:          c.Reason,
		SummaryEnd:      int32(c.SummaryEnd),
		Summary:         c.Summary,
		SummarizedTurns: int32(c.SummarizedTurns),
		PruneEnd:        int32(c.PruneEnd),
		PrunedResults:   int32(c.PrunedResults),
		TokensBefore:    c.TokensBefore,
		TokensAfter:     c.TokensAfter,
		Model:           c.Model,
		Usage:           Usage(c.Usage),
		Instruction:     c.Instruction,
	}
}

// ToolCall converts a tool call.
func ToolCall(c session.ToolCall) *agentsv1.ToolCall {
	mode := agentsv1.CallMode_CALL_MODE_ATTACHED
	if c.Mode == session.CallDeferred {
		mode = agentsv1.CallMode_CALL_MODE_DEFERRED
	}
	return &agentsv1.ToolCall{Id: c.ID, Name: c.Name, Arguments: c.Arguments, Kind: ToolKind(c.Kind), Mode: mode}
}

var resultStatusToWire = map[session.ResultStatus]agentsv1.ToolResultStatus{
	session.ResultOK:        agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_OK,
	session.ResultError:     agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ERROR,
	session.ResultCancelled: agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_CANCELLED,
	session.ResultAborted:   agentsv1.ToolResultStatus_TOOL_RESULT_STATUS_ABORTED,
}

// ToolResult converts a tool result.
func ToolResult(r session.ToolResult) *agentsv1.ToolResult {
	out := &agentsv1.ToolResult{
		CallId:         r.CallID,
		Name:           r.Name,
		Text:           r.Text,
		Status:         resultStatusToWire[r.Status],
		ChildSessionId: r.ChildSessionID,
	}
	if r.Duration > 0 {
		out.Duration = durationpb.New(r.Duration)
	}
	return out
}

// DeferredCall converts a deferred call.
func DeferredCall(d session.DeferredCall) *agentsv1.DeferredCall {
	return &agentsv1.DeferredCall{
		Token:      d.Token,
		SessionId:  d.SessionID,
		Call:       ToolCall(d.Call),
		Reason:     d.Reason,
		CreateTime: Timestamp(d.Created),
	}
}

// Timestamp converts a time; the zero time is unset.
func Timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}
