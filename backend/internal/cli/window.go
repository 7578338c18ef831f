package cli

import (
	"fmt"
	"strconv"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
	"github.com/agents-os/agents/backend/internal/catalog"
)

// windowLine says how much an agent's model holds and when its sessions
// are compacted, with where each figure comes from: check prints it for
// every agent, so that an unknown model's guessed window shows.
func windowLine(ag *catalog.Agent) string {
	l := ag.Model.Limits
	return fmt.Sprintf("%s: model %s: context window %s, max output %s (%s); compacts above %s tokens (%s)",
		ag.Slug, ag.Model.Name, thousands(l.ContextWindow), thousands(l.MaxOutputTokens), l.Source,
		thousands(ag.Compaction.Threshold), ag.ThresholdSource)
}

// windowText is the same for a descriptor, which does not say where the
// threshold comes from; "" when the server does not say (an older one).
func windowText(m *agentsv1.ModelDescriptor) string {
	if m.GetContextWindow() == 0 {
		return ""
	}
	return fmt.Sprintf("%s tokens, max output %s (%s); compacts above %s",
		thousands(m.GetContextWindow()), thousands(m.GetMaxOutputTokens()), m.GetLimitsSource(), thousands(m.GetCompactThreshold()))
}

// thousands writes n with a comma between groups of three digits, as
// token counts are read.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return sign + string(out)
}
