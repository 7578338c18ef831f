package runner

import (
	"context"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Compacted is what Compact did.
type Compacted struct {
	Meta session.Meta `json:"meta"`
	// Turn is the compaction turn; nil while it is pending.
	Turn *session.Turn `json:"turn,omitempty"`
	// Pending says the session was running: the compaction happens
	// before its next model call.
	Pending bool `json:"pending,omitempty"`
}

// Compact folds the older turns of a session into a summary now.
func (r *Runner) Compact(ctx context.Context, owner, id, instruction string) (Compacted, error) {
	return Compacted{}, errs.FailedPrecondition("unavailable", "compaction is being built")
}
