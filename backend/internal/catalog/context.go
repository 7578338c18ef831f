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
