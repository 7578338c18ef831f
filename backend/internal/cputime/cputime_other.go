//go:build !unix

package cputime

import "time"

// Process is the CPU time the process has used; it is not read here.
func Process() (time.Duration, bool) { return 0, false }
