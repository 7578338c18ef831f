package runner

import "testing"

func TestTurnCacheKeepsWithinItsBudgetAndGivesItBackAtDrop(t *testing.T) {
	b := &turnBudget{max: 10}
	c, d := &TurnCache{budget: b}, &TurnCache{budget: b}
	c.Put(3, []byte("abcdef"))
	if got := string(c.Get(3)); got != "abcdef" || c.Get(2) != nil || c.Get(9) != nil {
		t.Fatalf("Get after Put = %q", got)
	}
	d.Put(0, []byte("ghijkl")) // 12 > 10: not kept
	if d.Get(0) != nil || b.used.Load() != 6 {
		t.Fatalf("over the budget: kept %q, %d bytes used", d.Get(0), b.used.Load())
	}
	c.Put(3, []byte("xy")) // the first encoding stays
	if string(c.Get(3)) != "abcdef" || b.used.Load() != 6 {
		t.Fatalf("second Put: %q, %d bytes used", c.Get(3), b.used.Load())
	}
	c.drop()
	c.Put(1, []byte("z"))
	if b.used.Load() != 0 || c.Get(3) != nil || c.Get(1) != nil {
		t.Fatalf("after drop: %d bytes used", b.used.Load())
	}
	d.Put(0, []byte("ghijkl"))
	if string(d.Get(0)) != "ghijkl" {
		t.Fatal("the budget freed by drop is not reused")
	}
	var none *TurnCache
	none.Put(0, []byte("a"))
	if none.Get(0) != nil {
		t.Fatal("a nil cache keeps")
	}
}
