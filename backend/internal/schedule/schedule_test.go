package schedule

import (
	"testing"
	"time"

	"github.com/agents-os/agents/backend/internal/errs"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// The next firing times of cron schedules across daylight-saving
// changes, against the dates the zones' rules give: a daily time fires
// every day once, on the night the clocks jump forward as on the night
// they go back.
func TestCronAcrossDaylightSaving(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, cron, zone, from string
		want                   []string
	}{
		{"Paris, clocks forward: 02:30 does not happen, fires at 03:30 CEST", "30 2 * * *", "Europe/Paris", "2026-03-27T12:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"Paris, clocks back: 02:30 happens twice, fires at the first", "30 2 * * *", "Europe/Paris", "2026-10-24T12:00:00Z",
			[]string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z", "2026-10-27T01:30:00Z"}},
		{"Paris, weekdays at 7 move an hour in UTC", "0 7 * * 1-5", "Europe/Paris", "2026-03-26T12:00:00Z",
			[]string{"2026-03-27T06:00:00Z", "2026-03-30T05:00:00Z", "2026-03-31T05:00:00Z"}},
		{"New York, clocks forward", "30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T07:30:00Z", "2026-03-09T06:30:00Z"}},
		{"New York, clocks back: 01:30 once", "30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z",
			[]string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"UTC by default", "0 7 * * 1-5", "", "2026-12-04T12:00:00Z",
			[]string{"2026-12-07T07:00:00Z", "2026-12-08T07:00:00Z"}},
		{"a descriptor", "@daily", "Europe/Paris", "2026-06-01T12:00:00Z",
			[]string{"2026-06-01T22:00:00Z", "2026-06-02T22:00:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := Spec{Agent: "a", Text: "x", Cron: tc.cron, Timezone: tc.zone}
			tm, err := s.Check()
			if err != nil {
				t.Fatal(err)
			}
			got := Next(tm, utc(tc.from), len(tc.want))
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i, w := range tc.want {
				if !got[i].Equal(utc(w)) {
					t.Errorf("firing %d: got %s, want %s", i, got[i].Format(time.RFC3339), w)
				}
			}
		})
	}
}

func TestEveryCountsFromItsAnchor(t *testing.T) {
	t.Parallel()
	anchor := utc("2026-12-07T10:00:00Z")
	tm, err := (&Spec{Agent: "a", Text: "x", Every: "15m", Anchor: anchor}).Check()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ after, want string }{
		{"2026-12-07T09:00:00Z", "2026-12-07T10:15:00Z"},
		{"2026-12-07T10:00:00Z", "2026-12-07T10:15:00Z"},
		{"2026-12-07T10:15:00Z", "2026-12-07T10:30:00Z"},
		{"2026-12-07T12:07:00Z", "2026-12-07T12:15:00Z"},
	} {
		if got := tm.Next(utc(tc.after)); !got.Equal(utc(tc.want)) {
			t.Errorf("after %s: got %s, want %s", tc.after, got, tc.want)
		}
	}
}

func TestAtFiresOnce(t *testing.T) {
	t.Parallel()
	at := utc("2026-12-24T18:00:00Z")
	tm, err := (&Spec{SessionID: "s", Text: "x", At: at}).Check()
	if err != nil {
		t.Fatal(err)
	}
	if got := Next(tm, utc("2026-12-01T00:00:00Z"), 5); len(got) != 1 || !got[0].Equal(at) {
		t.Fatalf("got %v, want only %s", got, at)
	}
	if got := tm.Next(at); !got.IsZero() {
		t.Fatalf("after its time: got %s, want none", got)
	}
}

func TestCheckRefusesNamingTheField(t *testing.T) {
	t.Parallel()
	anchor := utc("2026-12-07T10:00:00Z")
	tests := []struct {
		name  string
		spec  Spec
		field string
	}{
		{"no target", Spec{Text: "x", Every: "1m", Anchor: anchor}, "agent"},
		{"two targets", Spec{Agent: "a", SessionID: "s", Text: "x", Every: "1m", Anchor: anchor}, "agent"},
		{"no text", Spec{Agent: "a", Every: "1m", Anchor: anchor}, "message.text"},
		{"no timing", Spec{Agent: "a", Text: "x"}, "cron"},
		{"two timings", Spec{Agent: "a", Text: "x", Cron: "* * * * *", Every: "1m", Anchor: anchor}, "cron"},
		{"six fields", Spec{Agent: "a", Text: "x", Cron: "0 0 7 * * 1-5"}, "cron"},
		{"a bad field", Spec{Agent: "a", Text: "x", Cron: "61 * * * *"}, "cron"},
		{"a zone inside cron", Spec{Agent: "a", Text: "x", Cron: "CRON_TZ=Europe/Paris 0 7 * * *"}, "cron"},
		{"@every", Spec{Agent: "a", Text: "x", Cron: "@every 1m"}, "cron"},
		{"a day no month has", Spec{Agent: "a", Text: "x", Cron: "0 0 30 2 *"}, "cron"},
		{"days none of the months has", Spec{Agent: "a", Text: "x", Cron: "0 0 31 4,6,9,11 *"}, "cron"},
		{"a bad interval", Spec{Agent: "a", Text: "x", Every: "often", Anchor: anchor}, "every"},
		{"too short an interval", Spec{Agent: "a", Text: "x", Every: "500ms", Anchor: anchor}, "every"},
		{"an unknown zone", Spec{Agent: "a", Text: "x", Cron: "* * * * *", Timezone: "Mars/Olympus"}, "timezone"},
		{"Local", Spec{Agent: "a", Text: "x", Cron: "* * * * *", Timezone: "Local"}, "timezone"},
		{"a bad overlap", Spec{Agent: "a", Text: "x", Every: "1m", Anchor: anchor, Overlap: "wait"}, "overlap"},
		{"a bad missed", Spec{Agent: "a", Text: "x", Every: "1m", Anchor: anchor, Missed: "all"}, "missed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.spec.Check()
			e, ok := errs.As(err)
			if !ok || e.Kind != errs.KindInvalid || e.Metadata["field"] != tc.field {
				t.Fatalf("got %v, want invalid naming %s", err, tc.field)
			}
		})
	}
}

// Days some month has are kept, however rare: the 29th of February, a
// 31st in one month of those named, a day of the month or of the week
// (either fires when both are given).
func TestCheckKeepsDaysThatHappen(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"0 0 29 2 *", "0 0 31 4,7 *", "0 0 30 2 1", "0 0 * 2 *", "@monthly"} {
		spec := Spec{Agent: "a", Text: "x", Cron: expr}
		tm, err := spec.Check()
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if tm.Next(utc("2026-12-07T10:00:00Z")).IsZero() {
			t.Errorf("%s never fires", expr)
		}
	}
}

func TestCheckFillsTheRules(t *testing.T) {
	t.Parallel()
	s := Spec{Agent: "a", Text: "x", Cron: "0 7 * * 1-5"}
	if _, err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if s.Overlap != OverlapSkip || s.Missed != MissedSkip {
		t.Fatalf("got overlap %q, missed %q; want skip, skip", s.Overlap, s.Missed)
	}
	text, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(text)
	if err != nil || back.Cron != s.Cron || back.Overlap != s.Overlap {
		t.Fatalf("decoded %+v, %v", back, err)
	}
}
