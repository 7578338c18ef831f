package cli

import "testing"

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, gcMaxPercent},
		{4 << 20, gcMaxPercent},
		{gcHeadroom / 4, gcMaxPercent},
		{gcHeadroom / 2, 200},
		{gcHeadroom, gcMinPercent},
		{4 * gcHeadroom, gcMinPercent},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
