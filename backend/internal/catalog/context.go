package catalog

// Limits are what one request to a model may hold.
type Limits struct {
	// ContextWindow is the most tokens one request may hold, input and
	// output together; MaxOutputTokens the most output one call may ask
	// for.
	ContextWindow   int64
	MaxOutputTokens int64
	// Source says where the limits come from: LimitsAgent, LimitsConfig,
	// LimitsLearned, LimitsBuiltin or LimitsDefault.
	Source string
}

// Where a model's limits come from.
const (
	LimitsAgent   = "agent"
	LimitsConfig  = "config"
	LimitsLearned = "learned"
	LimitsBuiltin = "builtin"
	LimitsDefault = "default"
)

// Compaction is how an agent's sessions are kept inside their model's
// window. Zero fields take the server's defaults.
type Compaction struct {
	// Threshold is the measured input above which a request is compacted
	// first; 0 means the window minus OutputReserve minus Margin.
	Threshold int64
	// OutputReserve is the room kept for the answer; Margin what is kept
	// for the measure's error.
	OutputReserve int64
	Margin        int64
	// PruneOver: tool results of older turns longer than this many
	// tokens are sent as a stub first.
	PruneOver int64
	// KeepRecent is how many tokens of the newest turns a summary keeps
	// whole.
	KeepRecent int64
	// Model writes the summaries; "" is the session's model.
	Model string
	// Prompt is the compaction prompt, one line per entry; nil is the
	// server's.
	Prompt []string
}

// The compaction settings taken where neither the agent nor the config
// sets them; the others depend on the model's limits (see Complete).
const (
	// MaxDefaultOutputReserve caps the default output reserve: most
	// answers are far shorter than a model's maximum, and room reserved
	// for output is room the conversation cannot use.
	MaxDefaultOutputReserve = 8_192
	// MinMargin is the least margin kept for the measure's error.
	MinMargin = 256
	// DefaultPruneOver: an older tool result longer than this many tokens
	// (some 4 KB of text) is the first thing a compaction drops.
	DefaultPruneOver = 1_000
	// MaxDefaultKeepRecent caps the newest turns a summary keeps whole,
	// so that on a very large window a compaction still frees most of it.
	MaxDefaultKeepRecent = 40_000
)

// ThresholdComputed is where a compaction threshold comes from when
// neither the agent nor the config sets one (or theirs does not fit the
// window): the window less the output reserve and the margin. The others
// are LimitsAgent and LimitsConfig.
const ThresholdComputed = "computed"

// Or returns c with each zero field taken from d: an agent's settings
// over the server's.
func (c Compaction) Or(d Compaction) Compaction {
	pick := func(a, b int64) int64 {
		if a != 0 {
			return a
		}
		return b
	}
	out := Compaction{
		Threshold:     pick(c.Threshold, d.Threshold),
		OutputReserve: pick(c.OutputReserve, d.OutputReserve),
		Margin:        pick(c.Margin, d.Margin),
		PruneOver:     pick(c.PruneOver, d.PruneOver),
		KeepRecent:    pick(c.KeepRecent, d.KeepRecent),
		Model:         c.Model,
		Prompt:        c.Prompt,
	}
	if out.Model == "" {
		out.Model = d.Model
	}
	if out.Prompt == nil {
		out.Prompt = d.Prompt
	}
	return out
}

// Complete returns c with every number set, for a model with limits l
// (Model and Prompt stay as they are: "" and nil are the session's model
// and the server's prompt):
//
//   - OutputReserve: the model's maximum output, at most
//     MaxDefaultOutputReserve and a quarter of the window;
//   - Margin: 5% of the window, at least MinMargin;
//   - Threshold: the window less OutputReserve and Margin, but never
//     below half the window, where a model whose output may fill its
//     window would otherwise compact at every step. A threshold set
//     higher than that is lowered to it: the room the output and the
//     margin need is not the operator's to give away;
//   - PruneOver: DefaultPruneOver;
//   - KeepRecent: a quarter of the window, at most MaxDefaultKeepRecent,
//     and never more than half the threshold, so that a summary always
//     brings a session well below it.
func (c Compaction) Complete(l Limits) Compaction {
	w := l.ContextWindow
	if c.OutputReserve == 0 {
		c.OutputReserve = min(l.MaxOutputTokens, MaxDefaultOutputReserve, w/4)
	}
	if c.Margin == 0 {
		c.Margin = max(w*5/100, MinMargin)
	}
	highest := max(w-c.OutputReserve-c.Margin, w/2)
	if c.Threshold == 0 || c.Threshold > highest {
		c.Threshold = highest
	}
	if c.PruneOver == 0 {
		c.PruneOver = DefaultPruneOver
	}
	if c.KeepRecent == 0 {
		c.KeepRecent = min(w/4, MaxDefaultKeepRecent)
	}
	c.KeepRecent = min(c.KeepRecent, c.Threshold/2)
	return c
}

// ModelLimits resolves the limits of the model name: each field from the
// first source that sets it, own (an agent's), configured (the config's),
// the server's table (BuiltinLimits), the default. Source names the
// strongest source that set either field. The maximum output is never
// more than the window: one source's output and another's window may
// not fit together, and the output is part of the window.
func ModelLimits(name string, configured, own Limits) Limits {
	l, _ := BuiltinLimits(name)
	l = l.over(configured, LimitsConfig).over(own, LimitsAgent)
	l.MaxOutputTokens = min(l.MaxOutputTokens, l.ContextWindow)
	return l
}

// over returns l with the fields o sets, from source.
func (l Limits) over(o Limits, source string) Limits {
	if o.ContextWindow == 0 && o.MaxOutputTokens == 0 {
		return l
	}
	if o.ContextWindow != 0 {
		l.ContextWindow = o.ContextWindow
	}
	if o.MaxOutputTokens != 0 {
		l.MaxOutputTokens = o.MaxOutputTokens
	}
	l.Source = source
	return l
}
