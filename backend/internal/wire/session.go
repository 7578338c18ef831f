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

// Meta converts session metadata. Every session.updated event carries
// it, so its messages are one allocation (metaParts).
func Meta(m session.Meta) *agentsv1.SessionMeta {
	p := &metaParts{}
	p.meta = agentsv1.SessionMeta{
		Id:                 m.ID,
		Agent:              m.Agent,
		Owner:              m.Owner,
		Title:              m.Title,
		Status:             Status(m.Status),
		StatusReason:       m.StatusReason,
		ParentId:           m.ParentID,
		ForkedFrom:         m.ForkedFrom,
		TurnCount:          int32(m.TurnCount),
		Usage:              p.usage.set(m.Usage),
		PendingMail:        int32(m.PendingMail),
		PendingCalls:       int32(m.PendingCalls),
		Depth:              int32(m.Depth),
		CreateTime:         p.created.set(m.Created),
		UpdateTime:         p.updated.set(m.Updated),
		AllowedTools:       m.AllowedTools,
		AgentVersion:       m.AgentVersion,
		PinnedAgentVersion: m.AgentPin,
		AgentGeneration:    m.AgentGen,
		RootId:             m.Root(),
		Budget:             p.budget.set(m.Budget, m.TreeSpend),
	}
	return &p.meta
}

// metaParts are the messages of one SessionMeta.
type metaParts struct {
	meta             agentsv1.SessionMeta
	usage            usageParts
	created, updated timestampPart
	budget           budgetStateParts
}

// usageParts are a Usage message and its cost.
type usageParts struct {
	usage agentsv1.Usage
	cost  float64
}

// set makes p the wire form of u and returns it.
func (p *usageParts) set(u session.Usage) *agentsv1.Usage {
	p.usage = agentsv1.Usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion, CachedTokens: u.Cached, ReasoningTokens: u.Reasoning}
	if u.Cost != nil {
		p.cost = u.Cost.Dollars()
		p.usage.CostUsd = &p.cost
	}
	return &p.usage
}

// timestampPart is a Timestamp message.
type timestampPart struct{ ts timestamppb.Timestamp }

// set makes p the wire form of t and returns it; nil for the zero time,
// as Timestamp.
func (p *timestampPart) set(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	p.ts = timestamppb.Timestamp{Seconds: t.Unix(), Nanos: int32(t.Nanosecond())}
	return &p.ts
}

// budgetStateParts are a BudgetState message and the messages in it.
type budgetStateParts struct {
	state         agentsv1.BudgetState
	spent         agentsv1.Spend
	budget, left  agentsv1.Budget
	limit, remain float64
}

// set makes p the wire form of BudgetState(b, spent) and returns it.
func (p *budgetStateParts) set(b *session.Budget, spent session.Spend) *agentsv1.BudgetState {
	if !b.Limited() {
		b = nil
	}
	p.spent = agentsv1.Spend{Tokens: spent.Tokens, CostUsd: spent.Cost.Dollars()}
	p.state = agentsv1.BudgetState{
		Budget:   setBudget(&p.budget, &p.limit, b),
		Spent:    &p.spent,
		Left:     setBudget(&p.left, &p.remain, b.Left(spent)),
		Exceeded: b.Exceeded(spent),
	}
	return &p.state
}

// setBudget makes out (with cost) the wire form of b, as Budget, and
// returns it; nil for nil.
func setBudget(out *agentsv1.Budget, cost *float64, b *session.Budget) *agentsv1.Budget {
	if b == nil {
		return nil
	}
	*out = agentsv1.Budget{Tokens: b.Tokens, AutoResume: b.AutoResume}
	if b.Cost != nil {
		*cost = b.Cost.Dollars()
		out.CostUsd = cost
	}
	return out
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
	var p struct {
		budget agentsv1.Budget
		cost   float64
	}
	return setBudget(&p.budget, &p.cost, b)
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
	return new(budgetStateParts).set(b, spent)
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
	return new(usageParts).set(u)
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
	switch {
	case t.User != nil:
		p := &userTurnParts{}
		out := p.turn.set(t)
		u := &p.user
		u.Text = t.User.Text
		if n := len(t.User.Attachments); n > 0 {
			atts := make([]agentsv1.Attachment, n)
			u.Attachments = make([]*agentsv1.Attachment, n)
			for i, a := range t.User.Attachments {
				atts[i] = agentsv1.Attachment{Name: a.Name, MediaType: a.MediaType, Size: int64(len(a.Data))}
				if withData {
					atts[i].Data = a.Data
				}
				u.Attachments[i] = &atts[i]
			}
		}
		for _, r := range t.User.ToolResults {
			u.ToolResults = append(u.ToolResults, ToolResult(r))
		}
		for _, m := range t.User.Mail {
			u.Mail = append(u.Mail, Mail(m))
		}
		p.kind.User = u
		out.Kind = &p.kind
		return out
	case t.LLM != nil:
		p := &llmTurnParts{}
		out := p.turn.set(t)
		p.llm = agentsv1.LlmTurn{
			Text:         t.LLM.Text,
			Thinking:     t.LLM.Thinking,
			Usage:        p.usage.set(t.LLM.Usage),
			Model:        t.LLM.Model,
			FinishReason: t.LLM.FinishReason,
			Interrupted:  t.LLM.Interrupted,
			AgentVersion: t.LLM.AgentVersion,
		}
		if t.LLM.Duration > 0 {
			p.duration = durationpb.Duration{Seconds: int64(t.LLM.Duration / time.Second), Nanos: int32(t.LLM.Duration % time.Second)}
			p.llm.Duration = &p.duration
		}
		for _, c := range t.LLM.ToolCalls {
			p.llm.ToolCalls = append(p.llm.ToolCalls, ToolCall(c))
		}
		p.kind.Llm = &p.llm
		out.Kind = &p.kind
		return out
	}
	p := &turnParts{}
	out := p.set(t)
	if t.Compaction != nil {
		out.Kind = &agentsv1.Turn_Compaction{Compaction: Compaction(*t.Compaction)}
	}
	return out
}

// turnParts are a Turn message and its time.
type turnParts struct {
	turn    agentsv1.Turn
	created timestampPart
}

// set makes p a turn's index and time and returns the Turn.
func (p *turnParts) set(t session.Turn) *agentsv1.Turn {
	p.turn = agentsv1.Turn{Index: int32(t.Index), CreateTime: p.created.set(t.Created)}
	return &p.turn
}

// userTurnParts are the messages of a user turn, in one allocation.
type userTurnParts struct {
	turn turnParts
	kind agentsv1.Turn_User
	user agentsv1.UserTurn
}

// llmTurnParts are the messages of a model's turn, in one allocation:
// every step stores one and announces it.
type llmTurnParts struct {
	turn     turnParts
	kind     agentsv1.Turn_Llm
	llm      agentsv1.LlmTurn
	usage    usageParts
	duration durationpb.Duration
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
