package layout

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"fits as it is", 20, "fits as it is"},
		{"cut at a word, never in one", 16, "cut at a word…"},
		{"cut at a word, never in one", 15, "cut at a word…"},
		{"hints · dropped · whole", 12, "hints…"},
		{"averyveryverylongword and more", 10, "averyvery…"},
		{"", 5, ""},
	} {
		got := Words(c.in, c.w)
		if got != c.want {
			t.Errorf("Words(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if ansi.StringWidth(got) > c.w {
			t.Errorf("Words(%q, %d) = %q is wider than %d", c.in, c.w, got, c.w)
		}
	}
}

func TestParts(t *testing.T) {
	t.Parallel()
	parts := []string{"Write a message", "enter sends", "shift+enter new line", "ctrl+t attach"}
	for _, c := range []struct {
		w    int
		want string
	}{
		{80, "Write a message · enter sends · shift+enter new line · ctrl+t attach"},
		{60, "Write a message · enter sends · shift+enter new line"},
		{31, "Write a message · enter sends"},
		{28, "Write a message"},
		{10, "Write a…"},
	} {
		if got := Parts(parts, " · ", c.w); got != c.want {
			t.Errorf("Parts(%d) = %q, want %q", c.w, got, c.want)
		}
	}
}

// A left part cut short keeps a space before the right one, so the two
// never read as one word ("…on day 1 at …f1 help").
func TestColumnsKeepAGapWhereTheyCut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		left, right string
		w           int
		want        string
	}{
		{"tabs", "f1 help", 20, "tabs         f1 help"},
		{"tabs › a long title", "f1 help", 20, "tabs › a lo… f1 help"},
		{"exactly", "right", 12, "exactlyright"},
		{"left", "right is wider", 10, "right is …"},
	} {
		if got := Columns(c.left, c.right, c.w); got != c.want {
			t.Errorf("Columns(%q, %q, %d) = %q, want %q", c.left, c.right, c.w, got, c.want)
		}
	}
}

// The columns that give way first go until the left part has its room;
// those that fit stay in their order.
func TestKeepColumns(t *testing.T) {
	t.Parallel()
	widths := []int{16, 6, 6} // agent, turns, when
	giveWay := []int{1, 2, 0} // turns first, then when, then agent
	for _, c := range []struct {
		w    int
		want []bool
	}{
		{120, []bool{true, true, true}},
		{50, []bool{true, true, true}},
		{40, []bool{true, false, true}},
		{34, []bool{true, false, false}},
		{20, []bool{false, false, false}},
	} {
		got := Keep(c.w, 16, widths, giveWay)
		if len(got) != len(c.want) {
			t.Fatalf("Keep(%d) = %v, want %v", c.w, got, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("Keep(%d) = %v, want %v", c.w, got, c.want)
				break
			}
		}
	}
}
