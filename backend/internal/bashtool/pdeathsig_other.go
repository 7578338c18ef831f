//go:build unix && !linux

package bashtool

import "syscall"

// Other systems have no parent-death signal: a script outlives a server
// that is killed.
func dieWithParent(*syscall.SysProcAttr) {}
