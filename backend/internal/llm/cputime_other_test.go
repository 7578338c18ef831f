//go:build !unix

package llm

import "time"

// processCPU is unknown here: the benchmark leaves out cpu-µs/op.
func processCPU() (time.Duration, bool) { return 0, false }
