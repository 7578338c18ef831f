package session

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestPriceCostsInputCachedInputAndOutputApart(t *testing.T) {
	t.Parallel()
	p := Price{InputPerMTok: 0.15, OutputPerMTok: 0.60, CachedInputPerMTok: 0.075}
	for _, tc := range []struct {
		name string
		u    Usage
		want Nanos
	}{
		{"input", Usage{Prompt: 1_000_000}, 150_000_000},
		{"cached input", Usage{Prompt: 1_000_000, Cached: 1_000_000}, 75_000_000},
		{"output, reasoning included", Usage{Completion: 1_000_000, Reasoning: 400_000}, 600_000_000},
		{"all of them", Usage{Prompt: 3000, Cached: 1000, Completion: 500}, 2000*150 + 1000*75 + 500*600},
		{"nothing", Usage{}, 0},
	} {
		if got := p.Cost(tc.u); got != tc.want {
			t.Errorf("%s: %d nanodollars, want %d", tc.name, got, tc.want)
		}
	}
}

func TestBudgetIsExceededAtItsLimit(t *testing.T) {
	t.Parallel()
	n, c := int64(100), Nanos(50)
	b := &Budget{Tokens: &n, Cost: &c}
	if b.Exceeded(Spend{Tokens: 99, Cost: 49}) {
		t.Error("exceeded under both limits")
	}
	if !b.Exceeded(Spend{Tokens: 100}) || !b.Exceeded(Spend{Cost: 50}) {
		t.Error("not exceeded at a limit")
	}
	if left := b.Left(Spend{Tokens: 120, Cost: 20}); *left.Tokens != 0 || *left.Cost != 30 {
		t.Errorf("left = %d tokens, %d nanodollars", *left.Tokens, *left.Cost)
	}
	var none *Budget
	if none.Exceeded(Spend{Tokens: 1 << 40}) || none.Left(Spend{}) != nil {
		t.Error("no budget limits something")
	}
}

func TestPeriodKeysAndBounds(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 31, 23, 30, 0, 0, time.FixedZone("X", -3600)) // 2027-01-01 00:30 UTC
	if k := PeriodDay.Key(at); k != "day:2027-01-01" {
		t.Errorf("day key %s", k)
	}
	if k := PeriodMonth.Key(at); k != "month:2027-01" {
		t.Errorf("month key %s", k)
	}
	start, end := PeriodMonth.Bounds(at)
	if !start.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) || !end.Equal(time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("month bounds %s, %s", start, end)
	}
}

// Dollar amounts a person sets are bounded well inside what Nanos hold,
// and a cost computed beyond that saturates rather than wrapping negative.
func TestDollarAmountsStayWithinWhatNanosHold(t *testing.T) {
	t.Parallel()
	for _, d := range []float64{0, 0.25, MaxDollars} {
		if err := CheckDollars(d); err != nil {
			t.Errorf("CheckDollars(%v) = %v, want nil", d, err)
		}
	}
	for _, d := range []float64{-0.5, MaxDollars * 1.0001, 1e10, math.NaN(), math.Inf(1)} {
		err := CheckDollars(d)
		if err == nil || !strings.Contains(err.Error(), "must be a number of US dollars from 0 to 1000000000") {
			t.Errorf("CheckDollars(%v) = %v, want the range", d, err)
		}
	}
	if got := DollarsToNanos(MaxDollars); got != MaxNanos {
		t.Errorf("DollarsToNanos(MaxDollars) = %d, want %d", got, MaxNanos)
	}
	for _, d := range []float64{1e10, 9223372037, math.Inf(1)} {
		if got := DollarsToNanos(d); got != MaxNanos {
			t.Errorf("DollarsToNanos(%v) = %d, want it saturated at %d", d, got, MaxNanos)
		}
	}
	if got := (Price{InputPerMTok: MaxDollars}).Cost(Usage{Prompt: 1_000_000_000}); got != MaxNanos {
		t.Errorf("a cost beyond the bound = %d, want %d", got, MaxNanos)
	}
}
