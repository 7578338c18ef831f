package loadgen

import (
	"bufio"
	"strconv"
	"strings"
)

// ParseMetrics reads the Prometheus text format and returns every sample
// by its name with labels, as written (`go_goroutines`,
// `agents_sessions{status="ready"}`). Comments and lines it cannot read
// are skipped.
func ParseMetrics(text string) map[string]float64 {
	out := make(map[string]float64)
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		// name{labels} value [timestamp]; label values may hold spaces,
		// so the name ends at the closing brace when there is one.
		nameEnd := strings.IndexByte(line, ' ')
		if brace := strings.IndexByte(line, '{'); brace >= 0 && (nameEnd < 0 || brace < nameEnd) {
			end := strings.LastIndexByte(line, '}')
			if end < 0 {
				continue
			}
			nameEnd = end + 1
		}
		if nameEnd <= 0 || nameEnd >= len(line) {
			continue
		}
		fields := strings.Fields(line[nameEnd:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		out[line[:nameEnd]] = v
	}
	return out
}
