package llm

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryPolicy bounds retries: attempts counts the first try.
type retryPolicy struct {
	maxAttempts int
	base        time.Duration
	maxDelay    time.Duration
}

// backoff is the wait before retry n (1 for the first): base·2^(n-1), capped
// at maxDelay, then drawn uniformly from its upper half so that clients
// throttled together do not come back together.
func (p retryPolicy) backoff(n int) time.Duration {
	d := p.maxDelay
	if shift := n - 1; shift < 32 && p.base<<shift > 0 && p.base<<shift < p.maxDelay {
		d = p.base << shift
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// wait decides whether to retry after attempt number attempt failed with
// err, and how long to wait first. A Retry-After from the provider is obeyed
// as given; one longer than maxDelay, or longer than the time left before
// the deadline, ends the retries so that the caller gets the error (with its
// RetryAfter) instead of a call that blocks past its budget.
func (p retryPolicy) wait(ctx context.Context, attempt int, err error) (time.Duration, bool) {
	if attempt >= p.maxAttempts || ctx.Err() != nil || !Retryable(err) {
		return 0, false
	}
	d := p.backoff(attempt)
	if apiErr := asAPIError(err); apiErr != nil && apiErr.RetryAfter > 0 {
		if apiErr.RetryAfter > p.maxDelay {
			return 0, false
		}
		d = apiErr.RetryAfter
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return 0, false
	}
	return d, true
}

// parseRetryAfter reads retry-after-ms (OpenAI's, in milliseconds) or
// Retry-After (seconds, or an HTTP date).
func parseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
