package conversation

import (
	"strings"

	"google.golang.org/protobuf/proto"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/tui/internal/theme"
	"github.com/agents-os/agents/tui/internal/units"
)

// reasonBudget is the status reason of a run the budget stopped.
const reasonBudget = "budget_exceeded"

// spendPart is what the header says of the session tree's spend: what
// it spent of each limit and what is left, or, without a budget, the
// tree's spend when it is more than this session's own (a helper's
// session, or a root whose helpers spent too). "" when there is
// nothing to add to the session's own usage.
func spendPart(st theme.ConversationStyles, m *agentsv1.SessionMeta) string {
	b := m.GetBudget()
	if b == nil {
		return "" // a server without budgets
	}
	spent, limit, left := b.GetSpent(), b.GetBudget(), b.GetLeft()
	if limit == nil || limit.Tokens == nil && limit.CostUsd == nil {
		// Less than its own is a fork's: the turns it copied count in its
		// usage, but its source's tree spent them.
		u := m.GetUsage()
		if spent.GetTokens() <= u.GetPromptTokens()+u.GetCompletionTokens() {
			return ""
		}
		text := "tree spent " + units.Tokens(spent.GetTokens()) + " tokens"
		if spent.GetCostUsd() > 0 {
			text += " · " + units.USD(spent.GetCostUsd())
		}
		return st.Muted.Render(text)
	}
	var parts []string
	if limit.Tokens != nil {
		parts = append(parts, units.Tokens(spent.GetTokens())+" of "+units.Tokens(limit.GetTokens())+" tokens ("+units.Tokens(left.GetTokens())+" left)")
	} else {
		parts = append(parts, units.Tokens(spent.GetTokens())+" tokens")
	}
	if limit.CostUsd != nil {
		parts = append(parts, units.USD(spent.GetCostUsd())+" of "+units.USD(limit.GetCostUsd())+" ("+units.USD(left.GetCostUsd())+" left)")
	} else if spent.GetCostUsd() > 0 {
		parts = append(parts, units.USD(spent.GetCostUsd()))
	}
	text := "budget " + strings.Join(parts, " · ")
	if b.GetExceeded() {
		return st.Error.Render(text + " · exceeded")
	}
	return st.Warn.Render(text)
}

// costPart is what the session's own turns cost, when a price was known
// for any of them.
func costPart(st theme.ConversationStyles, u *agentsv1.Usage) string {
	if u == nil || u.CostUsd == nil {
		return ""
	}
	return st.Muted.Render(units.USD(u.GetCostUsd()))
}

// budgetStop names the budget that stopped the last run: the one the
// run.stopped event named, else the tree's when it is the one spent,
// else just "budget".
func budgetStop(m *agentsv1.SessionMeta, named string) string {
	switch {
	case named == "owner":
		return "owner's budget"
	case named == "session", m.GetBudget().GetExceeded():
		return "session budget"
	}
	return "budget"
}

// treeSpend takes the tree's spend from the session.updated of another
// session of the tree (a helper's, spending the same budget), so the
// header follows what the helpers spend too. The limits stay the
// screen's own: a budget is changed on the root.
func (s *Screen) treeSpend(ev *agentsv1.Event) {
	other := ev.GetSessionUpdated().GetMeta()
	root := s.meta.GetRootId()
	if other == nil || root == "" || other.GetRootId() != root || s.meta.GetBudget() == nil {
		return
	}
	if b := spentAtLeast(s.meta.GetBudget(), other.GetBudget().GetSpent()); b != s.meta.GetBudget() {
		m := proto.CloneOf(s.meta)
		m.Budget = b
		s.meta = m
	}
}

// keepSpend is the session's own summary m, from an event, with the tree
// spend the screen knew when m's is less: each session of the tree
// reports the spend as it last saw it, so a root's event can lag behind
// what its helpers reported since. Spend never goes down.
func (s *Screen) keepSpend(m *agentsv1.SessionMeta) *agentsv1.SessionMeta {
	known := s.meta.GetBudget().GetSpent()
	if m.GetBudget() == nil || known == nil {
		return m
	}
	if b := spentAtLeast(m.GetBudget(), known); b != m.GetBudget() {
		m = proto.CloneOf(m)
		m.Budget = b
	}
	return m
}

// spentAtLeast is b with spent in place of its own when spent is more,
// what is left worked out again from b's limits; b itself when it is not.
func spentAtLeast(b *agentsv1.BudgetState, spent *agentsv1.Spend) *agentsv1.BudgetState {
	if spent.GetTokens() <= b.GetSpent().GetTokens() && spent.GetCostUsd() <= b.GetSpent().GetCostUsd() {
		return b
	}
	spent = &agentsv1.Spend{Tokens: max(spent.GetTokens(), b.GetSpent().GetTokens()), CostUsd: max(spent.GetCostUsd(), b.GetSpent().GetCostUsd())}
	n := proto.CloneOf(b)
	n.Spent = spent
	if limit := n.GetBudget(); limit != nil && (limit.Tokens != nil || limit.CostUsd != nil) {
		n.Left, n.Exceeded = &agentsv1.Budget{}, false
		if limit.Tokens != nil {
			n.Left.Tokens = proto.Int64(max(limit.GetTokens()-spent.GetTokens(), 0))
			n.Exceeded = spent.GetTokens() >= limit.GetTokens()
		}
		if limit.CostUsd != nil {
			n.Left.CostUsd = proto.Float64(max(limit.GetCostUsd()-spent.GetCostUsd(), 0))
			n.Exceeded = n.Exceeded || spent.GetCostUsd() >= limit.GetCostUsd()
		}
	}
	return n
}
