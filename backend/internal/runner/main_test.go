package runner_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: every
// run, call and subscription a test starts must end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
