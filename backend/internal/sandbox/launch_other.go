//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
)

// Main returns: only Linux has the launcher.
func Main() {}

func landlockABI() int { return 0 }

type namespaces struct{}

// Wrap refuses: only Linux confines.
func (s *Sandbox) Wrap(cmd *exec.Cmd, p Policy) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, s.Status().Problem)
}

// Namespaces reports that there are none.
func (s *Sandbox) Namespaces() (bool, string) { return false, "not Linux" }
