package runner

import (
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
)

func TestSeriesRange(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 14, 30, 0, 0, time.UTC)
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	paris := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		name         string
		bucket       time.Duration
		since, until time.Time
		want         [2]time.Time
		invalid      bool
	}{
		{name: "days by default", bucket: Day, want: [2]time.Time{day(11, 0).AddDate(0, 0, -30), day(11, 0)}},
		{name: "hours by default", bucket: Hour, want: [2]time.Time{day(8, 15), day(10, 15)}},
		{name: "rounded out to UTC days", bucket: Day, since: day(2, 5), until: day(4, 1), want: [2]time.Time{day(2, 0), day(5, 0)}},
		{name: "an aligned until stays", bucket: Day, since: day(2, 0), until: day(4, 0), want: [2]time.Time{day(2, 0), day(4, 0)}},
		{name: "another zone's midnight is not UTC's", bucket: Day, since: time.Date(2026, 3, 2, 0, 0, 0, 0, paris), until: day(3, 0), want: [2]time.Time{day(1, 0), day(3, 0)}},
		{name: "since alone ends now", bucket: Hour, since: day(10, 2), want: [2]time.Time{day(10, 2), day(10, 15)}},
		{name: "until alone", bucket: Hour, until: day(2, 0), want: [2]time.Time{day(2, 0).Add(-48 * time.Hour), day(2, 0)}},
		{name: "a year of days", bucket: Day, since: day(1, 0).AddDate(0, 0, -366), until: day(1, 0), want: [2]time.Time{day(1, 0).AddDate(0, 0, -366), day(1, 0)}},
		{name: "more than a year of days", bucket: Day, since: day(1, 0).AddDate(0, 0, -367), until: day(1, 0), invalid: true},
		{name: "more than 31 days of hours", bucket: Hour, since: day(1, 0).AddDate(0, 0, -31).Add(-time.Hour), until: day(1, 0), invalid: true},
		{name: "since after until", bucket: Day, since: day(5, 0), until: day(2, 0), invalid: true},
		{name: "an empty range", bucket: Hour, since: day(5, 0), until: day(5, 0), invalid: true},
		{name: "minutes", bucket: time.Minute, invalid: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			since, until, err := SeriesRange(tc.bucket, tc.since, tc.until, now)
			if tc.invalid {
				if errs.KindOf(err) != errs.KindInvalid {
					t.Fatalf("range %v–%v: err %v, want invalid", since, until, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !since.Equal(tc.want[0]) || !until.Equal(tc.want[1]) {
				t.Fatalf("range %v – %v, want %v – %v", since, until, tc.want[0], tc.want[1])
			}
		})
	}
}
