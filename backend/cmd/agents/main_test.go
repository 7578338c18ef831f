//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// crashAgents are the agent files (testdata/agents/<name>.json) every
// `agents serve` of the tests loads.
var crashAgents = []string{"asker", "slow", "napper", "boss"}

// pidDirEnv names the directory where the test tools record their process
// ids; the napper agent passes it on to its tool (passEnv), which runs
// outside the tool sandbox: in the sandbox's PID namespace its ids would
// not be the ones the tests look up.
const pidDirEnv = "CRASH_PID_DIR"

// binDir holds the binary built for the package's tests; TestMain sets it
// before any test runs and removes it after the last.
var binDir string

// agentsBinary builds the real binary once for all the tests.
var agentsBinary = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(binDir, "agents")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/agents-os/agents/backend/cmd/agents")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agents-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
