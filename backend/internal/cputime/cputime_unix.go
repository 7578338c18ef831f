//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user and system) the process has used so far,
// every thread included; false where it cannot be read.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
