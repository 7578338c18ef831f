//go:build !unix

package runner_test

import "time"

// processCPU is unknown here: the benchmark leaves out cpu-µs/step.
func processCPU() (time.Duration, bool) { return 0, false }
