package loadgen

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one Run measured.
type Report struct {
	Machine   Machine          `json:"machine"`
	Started   time.Time        `json:"started"`
	Prompt    string           `json:"prompt"` // the requests of one prompt
	Scenarios []ScenarioReport `json:"scenarios"`
}

// Machine describes where the numbers come from.
type Machine struct {
	CPU        string  `json:"cpu"`
	CPUs       int     `json:"cpus"`
	MemoryMB   int64   `json:"memory_mb"`
	Kernel     string  `json:"kernel"`
	Go         string  `json:"go"`
	Agents     string  `json:"agents"` // `agents version`
	LoadBefore float64 `json:"load_before"`
	LoadAfter  float64 `json:"load_after"`
	// SpeedBefore and SpeedAfter are the machine's speed as the run began
	// and ended (see Speed).
	SpeedBefore Speed `json:"speed_before"`
	SpeedAfter  Speed `json:"speed_after"`
}

// ScenarioReport is one scenario's outcome: its result (possibly partial)
// and, when it failed, why.
type ScenarioReport struct {
	Name    string   `json:"name"`
	Error   string   `json:"error,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Seconds float64  `json:"seconds"`
	Result  Result   `json:"result,omitempty"`
}

// Failed says whether a scenario failed or any of its rows had errors.
func (r *Report) Failed() bool {
	for _, s := range r.Scenarios {
		if s.Error != "" {
			return true
		}
		if f, ok := s.Result.(interface{ failed() bool }); ok && f.failed() {
			return true
		}
	}
	return false
}

// WriteTable writes the report as text tables, one per scenario.
func (r *Report) WriteTable(w io.Writer) error {
	bw := bufio.NewWriter(w)
	m := r.Machine
	fmt.Fprintf(bw, "machine: %s, %d CPUs, %d MB, Linux %s, %s; %s\n", m.CPU, m.CPUs, m.MemoryMB, m.Kernel, m.Go, m.Agents)
	fmt.Fprintf(bw, "load average (1 min): %.2f before, %.2f after\n", m.LoadBefore, m.LoadAfter)
	fmt.Fprintf(bw, "speed (lower is faster): %s before; %s after\n", m.SpeedBefore, m.SpeedAfter)
	fmt.Fprintf(bw, "a prompt: %s\n", r.Prompt)
	for _, s := range r.Scenarios {
		fmt.Fprintf(bw, "\n## %s (%.1f s)\n", s.Name, s.Seconds)
		if s.Result != nil {
			header, rows := s.Result.Table()
			if len(rows) > 0 {
				tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
				fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
				for _, row := range rows {
					fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			}
		}
		for _, n := range s.Notes {
			fmt.Fprintf(bw, "note: %s\n", n)
		}
		if s.Error != "" {
			fmt.Fprintf(bw, "FAILED: %s\n", s.Error)
		}
	}
	return bw.Flush()
}

func describeMachine(bin string) Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), CPU: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if f := strings.Fields(rest); len(f) > 0 {
					kb, _ := strconv.ParseInt(f[0], 10, 64)
					m.MemoryMB = kb >> 10
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command(bin, "version").Output(); err == nil {
		m.Agents = strings.TrimSpace(string(out))
	}
	return m
}

// Formatting for the tables.

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ratio formats v/base as "1.23×", or "–" when base is zero.
func ratio(v, base float64) string {
	if base == 0 {
		return "–"
	}
	return strconv.FormatFloat(v/base, 'f', 2, 64) + "×"
}

// ms formats a duration in milliseconds, with three significant digits or
// more.
func ms(d Duration) string {
	v := d.Ms()
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// us formats a duration in microseconds.
func us(d Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64)
}

func mb(bytes int64) string {
	return strconv.FormatFloat(float64(bytes)/(1<<20), 'f', 1, 64)
}

func rate(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func itoa(n int) string { return strconv.Itoa(n) }
