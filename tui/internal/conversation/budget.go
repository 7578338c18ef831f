package conversation

import (
	"strings"

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
		u := m.GetUsage()
		if spent.GetTokens() == u.GetPromptTokens()+u.GetCompletionTokens() {
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
