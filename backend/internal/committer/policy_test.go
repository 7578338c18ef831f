package committer

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Class
	}{
		{nil, None},
		{ErrClosing, Closing},
		{fmt.Errorf("commit: %w", ErrClosing), Closing},
		{errs.Unavailable("store_unavailable", "locked"), Transient},
		{errors.New("driver: connection reset"), Transient},
		{errs.Conflict("turn_conflict", "moved"), Permanent},
		{errs.NotFound("unknown_session", "gone"), Permanent},
		{errs.FailedPrecondition("call_completed", "answered"), Permanent},
		{errs.Invalid("invalid_turns", "bad"), Permanent},
		{errs.FailedPrecondition(errs.CodeLeaseLost, "lost"), Lost},
		{fmt.Errorf("write: %w", errs.Conflict(errs.CodeLeaseHeld, "held")), Lost},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestBackoffDoublesUpToItsBound(t *testing.T) {
	want := []time.Duration{25, 50, 100, 200, 400, 800, 1600, 2000, 2000}
	for i, w := range want {
		if got := Backoff(i + 1); got != w*time.Millisecond {
			t.Errorf("Backoff(%d) = %s, want %s", i+1, got, w*time.Millisecond)
		}
	}
}
