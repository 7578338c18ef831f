package loadgen

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// Usage is what the kernel accounts to a process at one moment.
type Usage struct {
	CPU time.Duration // user + system time since the process started
	RSS int64         // resident set size in bytes
}

// ReadUsage reads pid's CPU time from its threads' schedstat, in
// nanoseconds (threadsCPU), or where the kernel keeps none from
// /proc/<pid>/stat, in 10 ms ticks; and its RSS from /proc/<pid>/status.
// A row of 16 × 10 prompts is about 100 ms of a server's CPU: counted in
// ticks, its CPU per prompt could not tell 0.44 ms from 0.50. (A Go
// program's threads live as long as it does, so the sum over the live
// ones is its CPU time.)
func ReadUsage(pid int) (Usage, error) {
	cpu, err := threadsCPU(pid)
	if err != nil || cpu == 0 {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return Usage{}, err
		}
		if cpu, err = ParseStatCPU(string(stat)); err != nil {
			return Usage{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, err
	}
	rss, err := ParseStatusRSS(string(status))
	if err != nil {
		return Usage{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return Usage{CPU: cpu, RSS: rss}, nil
}

// ParseStatCPU returns utime + stime from the text of /proc/<pid>/stat.
// The command name (field 2) is in parentheses and may itself contain
// spaces and parentheses, so fields are counted from the last ')'.
func ParseStatCPU(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	// After ')' come field 3 (state), 4, …; utime is field 14, stime 15.
	fields := strings.Fields(stat[end+1:])
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("%d fields after the command name, want at least %d", len(fields), stime+1)
	}
	var ticks int64
	for _, i := range []int{utime, stime} {
		n, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("field %d = %q: not a tick count", i+3, fields[i])
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// ParseStatusRSS returns VmRSS, in bytes, from the text of
// /proc/<pid>/status ("VmRSS:	   12345 kB").
func ParseStatusRSS(status string) (int64, error) {
	return parseStatusKB(status, "VmRSS")
}

// ParseStatusAnon returns RssAnon, in bytes: the resident memory that is
// the process's own (heap, stacks), without the pages of its binary and
// other files, which the kernel can drop and read again.
func ParseStatusAnon(status string) (int64, error) {
	return parseStatusKB(status, "RssAnon")
}

func parseStatusKB(status, field string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("%s line %q: want a number of kB", field, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("%s line %q: want a number of kB", field, sc.Text())
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no %s line", field)
}

// LoadAverage is the first field of /proc/loadavg: the 1-minute load
// average, or -1 when it cannot be read.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	return parseLoadAverage(string(b))
}

func parseLoadAverage(s string) float64 {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return -1
	}
	return v
}
