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
