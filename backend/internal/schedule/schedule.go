// Package schedule says what a schedule is and when it fires: a cron
// expression read in a time zone, an interval counted from an anchor, or
// a single time. It does no I/O; the runner stores schedules and fires
// them.
package schedule

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	// Time zones come from the binary, not from the host: a server in a
	// container without /usr/share/zoneinfo reads Europe/Paris too.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"

	"github.com/agents-os/agents/backend/internal/errs"
	"github.com/agents-os/agents/backend/internal/session"
)

// Overlap says what a firing does while its target session is busy.
type Overlap string

// The overlap rules.
const (
	// OverlapSkip records the firing as skipped and posts nothing.
	OverlapSkip Overlap = "skip"
	// OverlapQueue posts the message as mail.
	OverlapQueue Overlap = "queue"
)

// Missed says what becomes of the times that passed while no server ran.
type Missed string

// The rules for missed times.
const (
	// MissedSkip fires none of them.
	MissedSkip Missed = "skip"
	// MissedOnce fires once for them all.
	MissedOnce Missed = "once"
)

// MinEvery is the shortest interval: a schedule firing more often would
// be a loop, not a schedule.
const MinEvery = time.Second

// Upcoming is how many next firing times an answer shows.
const Upcoming = 5

// Spec is what a schedule says, as the store keeps it (JSON).
type Spec struct {
	Name string `json:"name,omitempty"`
	// Agent or SessionID is the target: a new session of the agent, or a
	// message posted to the session.
	Agent     string `json:"agent,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	// Exactly one of Cron, Every and At.
	Cron  string    `json:"cron,omitempty"`
	Every string    `json:"every,omitempty"`
	At    time.Time `json:"at,omitzero"`
	// Timezone is the IANA zone Cron is read in; "" is UTC.
	Timezone string `json:"timezone,omitempty"`
	// Anchor is when Every counts from: its first time is one interval
	// later.
	Anchor      time.Time            `json:"anchor,omitzero"`
	Text        string               `json:"text"`
	Attachments []session.Attachment `json:"attachments,omitempty"`
	Budget      *session.Budget      `json:"budget,omitempty"`
	Params      map[string]string    `json:"params,omitempty"`
	Overlap     Overlap              `json:"overlap"`
	Missed      Missed               `json:"missed"`
}

// Decode reads a stored spec.
func Decode(text string) (Spec, error) {
	var s Spec
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return Spec{}, fmt.Errorf("decode schedule: %w", err)
	}
	return s, nil
}

// Encode is the spec as the store keeps it.
func (s Spec) Encode() (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode schedule: %w", err)
	}
	return string(b), nil
}

// Check refuses a spec that cannot fire, naming the field at fault, and
// fills in the defaults (the rules). It returns the spec's timing.
func (s *Spec) Check() (Timing, error) {
	switch {
	case s.Agent == "" && s.SessionID == "":
		return nil, invalid("agent", "a schedule needs a target: agent or session_id")
	case s.Agent != "" && s.SessionID != "":
		return nil, invalid("agent", "give agent or session_id, not both")
	}
	if strings.TrimSpace(s.Text) == "" {
		return nil, invalid("message.text", "the message needs text")
	}
	if s.Overlap == "" {
		s.Overlap = OverlapSkip
	}
	if s.Missed == "" {
		s.Missed = MissedSkip
	}
	if s.Overlap != OverlapSkip && s.Overlap != OverlapQueue {
		return nil, invalid("overlap", "overlap is skip or queue, not %q", s.Overlap)
	}
	if s.Missed != MissedSkip && s.Missed != MissedOnce {
		return nil, invalid("missed", "missed is skip or once, not %q", s.Missed)
	}
	return s.Timing()
}

// Timing reads the spec's timing.
func (s Spec) Timing() (Timing, error) {
	n := 0
	for _, set := range []bool{s.Cron != "", s.Every != "", !s.At.IsZero()} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, invalid("cron", "a schedule needs exactly one of cron, every and at")
	}
	loc, err := Location(s.Timezone)
	if err != nil {
		return nil, err
	}
	switch {
	case s.Cron != "":
		return parseCron(s.Cron, loc)
	case s.Every != "":
		d, err := time.ParseDuration(s.Every)
		if err != nil {
			return nil, invalid("every", "every is a duration such as 15m or 1h30m: %v", err)
		}
		if d < MinEvery {
			return nil, invalid("every", "every is at least %s, not %s", MinEvery, s.Every)
		}
		if s.Anchor.IsZero() {
			return nil, fmt.Errorf("schedule every %s has no anchor", s.Every)
		}
		return interval{anchor: s.Anchor, every: d}, nil
	}
	return once{at: s.At}, nil
}

// Location is the time zone of a name; "" is UTC.
func Location(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if name == "Local" {
		// The server's zone is no user's: say which one.
		return nil, invalid("timezone", "name the time zone (such as Europe/Paris), not Local")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, invalid("timezone", "unknown time zone %q (an IANA name such as Europe/Paris or America/New_York)", name)
	}
	return loc, nil
}

// Timing says when a schedule fires.
type Timing interface {
	// Next is the first firing time strictly after t; zero when there is
	// none.
	Next(t time.Time) time.Time
}

// Next lists up to n firing times after t.
func Next(tm Timing, t time.Time, n int) []time.Time {
	var out []time.Time
	for len(out) < n {
		t = tm.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// cronParser reads the five standard fields and the descriptors
// (@daily, @hourly, …).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseCron reads a cron expression in loc. A zone named inside the
// expression (CRON_TZ=) and @every are refused: the zone is the
// schedule's timezone, and an interval is its every.
func parseCron(expr string, loc *time.Location) (Timing, error) {
	e := strings.TrimSpace(expr)
	switch {
	case strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ="):
		return nil, invalid("cron", "give the time zone as timezone, not inside cron")
	case strings.HasPrefix(e, "@every"):
		return nil, invalid("cron", "give an interval as every, not as cron @every")
	}
	sch, err := cronParser.Parse(e)
	if err != nil {
		return nil, invalid("cron", "cron %q: %v (five fields: minute hour day-of-month month day-of-week, such as \"0 7 * * 1-5\")", expr, err)
	}
	spec, ok := sch.(*cron.SpecSchedule)
	if !ok {
		return nil, invalid("cron", "cron %q is not a calendar expression", expr)
	}
	if !daysHappen(spec) {
		return nil, invalid("cron", "cron %q never fires: no month it names has the day of the month it names", expr)
	}
	// The expression is matched against the wall clock of loc, counted
	// as if it were UTC's (see cronTiming).
	spec.Location = time.UTC
	return cronTiming{spec: spec, loc: loc}, nil
}

// daysHappen says whether some month the spec names has a day of the
// month it names (the 29th of February counts). Only days of the month
// can rule every firing out: a day of the week always comes, and when
// both are restricted either one fires, as in cron. A spec with no such
// day (30 February) would be stored and never fire.
func daysHappen(s *cron.SpecSchedule) bool {
	const star = 1 << 63 // the parser's mark of a field given as *
	if s.Dom&star != 0 || s.Dow&star == 0 {
		return true
	}
	days := [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	for m := 1; m <= 12; m++ {
		if s.Month&(1<<m) == 0 {
			continue
		}
		for d := 1; d <= days[m]; d++ {
			if s.Dom&(1<<d) != 0 {
				return true
			}
		}
	}
	return false
}

// cronTiming matches a cron expression against the wall clock of its
// zone across daylight-saving changes: a wall time that happens twice
// (the clocks go back) fires once, at the first, and one that does not
// happen (the clocks go forward) fires as far past the jump as it is
// past its start, so a daily job runs every day, once. The expression is
// matched in a clock with no changes (UTC's), then the wall time it
// names is placed in the zone.
type cronTiming struct {
	spec *cron.SpecSchedule
	loc  *time.Location
}

func (c cronTiming) Next(t time.Time) time.Time {
	wall := asUTC(t.In(c.loc))
	// A few rounds at most: a wall time placed at or before t (one the
	// clocks went back over, already fired) is passed over.
	for range 8 {
		w := c.spec.Next(wall)
		if w.IsZero() {
			return time.Time{}
		}
		if at := place(w, c.loc); at.After(t) {
			return at.UTC()
		}
		wall = w
	}
	return time.Time{}
}

// place is the instant a wall time w (read as UTC's) names in loc: the
// first of the two instants that read w when the clocks went back over
// it, and for a w the clocks skipped, the instant as far past the jump
// as w is past its start (02:30 on a night the clocks jump from 02:00 to
// 03:00 is 03:30). time.Date leaves both cases to chance.
func place(w time.Time, loc *time.Location) time.Time {
	at := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, loc)
	// Changes are months apart and shift by hours at most: six hours
	// before at, the offset is the one in force before any change near w.
	_, before := at.Add(-6 * time.Hour).Zone()
	first := w.Add(-time.Duration(before) * time.Second)
	switch {
	case !asUTC(at.In(loc)).Equal(w):
		return first // w was skipped
	case first.Before(at) && asUTC(first.In(loc)).Equal(w):
		return first // w happened twice
	}
	return at
}

// asUTC is t's wall clock read as UTC's.
func asUTC(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// interval fires every `every` after anchor.
type interval struct {
	anchor time.Time
	every  time.Duration
}

func (iv interval) Next(t time.Time) time.Time {
	if t.Before(iv.anchor) {
		return iv.anchor.Add(iv.every).UTC()
	}
	k := t.Sub(iv.anchor)/iv.every + 1
	return iv.anchor.Add(k * iv.every).UTC()
}

// once fires at one time.
type once struct{ at time.Time }

func (o once) Next(t time.Time) time.Time {
	if o.at.After(t) {
		return o.at.UTC()
	}
	return time.Time{}
}

func invalid(field, format string, args ...any) *errs.Error {
	return errs.Invalid(errs.CodeInvalidArgument, field+": "+format, args...).With("field", field)
}
