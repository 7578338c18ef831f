package units

import "testing"

func TestGrouped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {38204, "38,204"}, {128000, "128,000"},
		{1234567, "1,234,567"}, {-2310, "-2,310"},
	} {
		if got := Grouped(c.n); got != c.want {
			t.Errorf("Grouped(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
