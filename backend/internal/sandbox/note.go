package sandbox

import (
	"fmt"
	"strings"
)

// Note tells the model, after a confined tool failed, what the sandbox
// allowed it: a denied write or connection then explains itself. name is
// the tool's.
func Note(name string, p Policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s runs in a sandbox: it may write only in %s", name, strings.Join(p.Write, ", "))
	if p.Network {
		b.WriteString("; the network is allowed")
	} else {
		b.WriteString("; the network is off")
	}
	l := p.Limits.WithDefaults()
	fmt.Fprintf(&b, "; at most %d processes, %d MB of memory, files of %d MB", l.Processes, l.MemoryMB, l.FileSizeMB)
	if l.CPUSeconds > 0 {
		fmt.Fprintf(&b, ", %d s of CPU time", l.CPUSeconds)
	}
	b.WriteString("]")
	return b.String()
}
