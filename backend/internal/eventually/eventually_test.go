package eventually

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestThatReturnsOnceTheConditionHolds(t *testing.T) {
	var looks atomic.Int32
	That(t, "the third look", func() bool { return looks.Add(1) == 3 })
	if n := looks.Load(); n != 3 {
		t.Errorf("looked %d times, want 3", n)
	}
}

func TestHoldsGivesUpAfterItsPatience(t *testing.T) {
	start := time.Now()
	if Holds(20*time.Millisecond, func() bool { return false }) {
		t.Fatal("a condition that never holds held")
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("gave up after %v, before its patience", waited)
	}
}

// recorder is a test that records its failure instead of stopping.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestWithinFailsNamingWhatItWaitedFor(t *testing.T) {
	r := &recorder{TB: t}
	Within(r, 10*time.Millisecond, "the moon", func() bool { return false })
	if !strings.Contains(r.failed, "the moon") {
		t.Fatalf("a wait that ran out failed with %q", r.failed)
	}
}
