package bashtool

import "syscall"

// dieWithParent has the kernel SIGKILL the child when its parent goes away.
// The "parent" is the thread that started the child, not the process:
// startAndWait keeps that thread alive until the child has exited.
func dieWithParent(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
