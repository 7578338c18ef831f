package loadgen

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Percentile returns the p-th percentile (0 < p ≤ 100) of sorted by the
// nearest-rank method: the smallest sample with at least p % of the samples
// at or below it. It is 0 for no samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Latency summarises a set of durations.
type Latency struct {
	N   int      `json:"n"`
	P50 Duration `json:"p50"`
	P90 Duration `json:"p90"`
	P99 Duration `json:"p99"`
	Max Duration `json:"max"`
}

// Summarise sorts samples in place and returns their percentiles.
func Summarise(samples []time.Duration) Latency {
	slices.Sort(samples)
	l := Latency{N: len(samples)}
	if len(samples) > 0 {
		l.P50 = Duration(Percentile(samples, 50))
		l.P90 = Duration(Percentile(samples, 90))
		l.P99 = Duration(Percentile(samples, 99))
		l.Max = Duration(samples[len(samples)-1])
	}
	return l
}

// Duration is a time.Duration written in JSON as milliseconds, a float.
type Duration time.Duration

// MarshalJSON writes d in milliseconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(formatFloat(float64(d) / float64(time.Millisecond))), nil
}

// Ms is d in milliseconds.
func (d Duration) Ms() float64 { return float64(d) / float64(time.Millisecond) }

// samples collects durations from concurrent workers.
type samples struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *samples) add(d time.Duration) {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
}

func (s *samples) take() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d
}

// errorCount counts failed operations and keeps the first error.
type errorCount struct {
	mu    sync.Mutex
	n     int
	first error
}

func (e *errorCount) add(err error) {
	e.mu.Lock()
	e.n++
	if e.first == nil {
		e.first = err
	}
	e.mu.Unlock()
}

func (e *errorCount) get() (int, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.first == nil {
		return e.n, ""
	}
	return e.n, e.first.Error()
}
