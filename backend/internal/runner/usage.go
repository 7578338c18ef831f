package runner

import (
	"context"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/store"
)

// The buckets of a usage series, and the ranges it takes: a series is
// read in one query and drawn whole, so its length is bounded.
const (
	Hour = time.Hour
	Day  = 24 * time.Hour

	defaultHours = 48
	defaultDays  = 30
	maxHours     = 31 * 24
	maxDays      = 366
)

// SeriesRange resolves the range of a usage series: since rounded down
// and until rounded up to whole buckets of bucket (Hour or Day) in UTC,
// until defaulting to the end of the bucket that holds now and since to
// 48 hours or 30 days before until. An unknown bucket, a range of no
// bucket and one of more than 744 hours or 366 days are invalid.
func SeriesRange(bucket time.Duration, since, until, now time.Time) (time.Time, time.Time, error) {
	var def, most int
	switch bucket {
	case Hour:
		def, most = defaultHours, maxHours
	case Day:
		def, most = defaultDays, maxDays
	default:
		return time.Time{}, time.Time{}, errs.Invalid(errs.CodeInvalidArgument, "a usage series is per hour or per day, not per %v", bucket)
	}
	// Truncate counts from the zero time, a UTC midnight, and Go's days
	// are all 24 hours long: whole buckets are UTC hours and days.
	up := func(t time.Time) time.Time {
		d := t.UTC().Truncate(bucket)
		if d.Before(t) {
			d = d.Add(bucket)
		}
		return d
	}
	if until.IsZero() {
		// The end of the bucket that holds now, which a bucket's start
		// begins.
		until = now.UTC().Truncate(bucket).Add(bucket)
	} else {
		until = up(until)
	}
	if since.IsZero() {
		since = until.Add(-time.Duration(def) * bucket)
	} else {
		since = since.UTC().Truncate(bucket)
	}
	if !since.Before(until) {
		return time.Time{}, time.Time{}, errs.Invalid(errs.CodeInvalidArgument, "the usage series' since (%s) must be before its until (%s)", since.Format(time.RFC3339), until.Format(time.RFC3339))
	}
	if n := until.Sub(since) / bucket; n > time.Duration(most) {
		return time.Time{}, time.Time{}, errs.Invalid(errs.CodeInvalidArgument, "a usage series has at most %d buckets of %v, not %d: narrow the range or take larger buckets", most, bucket, n)
	}
	return since, until, nil
}

// UsageSeries reads usage over time: the model calls of owner (every
// owner's when empty) in the range SeriesRange resolves, per bucket,
// owner, agent and model. It returns the range it read.
func (r *Runner) UsageSeries(ctx context.Context, owner string, bucket time.Duration, since, until time.Time) (store.UsageQuery, []store.UsagePoint, error) {
	since, until, err := SeriesRange(bucket, since, until, r.now())
	if err != nil {
		return store.UsageQuery{}, nil, err
	}
	q := store.UsageQuery{Owner: owner, Since: since, Until: until, Bucket: bucket}
	points, err := r.store.UsageSeries(ctx, q)
	return q, points, err
}
