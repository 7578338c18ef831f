package openapitool

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: a
// connection of a call or a description's fetch kept open.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
