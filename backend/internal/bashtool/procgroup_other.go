//go:build !unix

package bashtool

import (
	"os"
	"os/exec"
)

// Without process groups only the script itself can be killed; children it
// started in the background may outlive it on these platforms.
func startInOwnProcessGroup(*exec.Cmd) {}

func killProcessGroup(p *os.Process) {
	_ = p.Kill()
}
