package catalog

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/agents-os/agents/backend/internal/sandbox"
)

// TestMain fails the package when a test leaves a goroutine behind. The
// test binary is the sandbox's launcher, as the server's is.
func TestMain(m *testing.M) {
	sandbox.Main()
	goleak.VerifyTestMain(m)
}
