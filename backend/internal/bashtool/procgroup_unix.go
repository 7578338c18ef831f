//go:build unix

package bashtool

import (
	"os"
	"os/exec"
	"syscall"
)

// startInOwnProcessGroup makes the script the leader of a new process
// group, so that it and everything it starts can be killed with one signal,
// and, where the system can, makes it die with the server. What else
// cmd.SysProcAttr asks (a sandbox's namespaces) stays.
func startInOwnProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	dieWithParent(cmd.SysProcAttr)
}

// killProcessGroup sends SIGKILL to every process of the script's group.
// An empty group (ESRCH) is the normal case after a clean exit.
func killProcessGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
