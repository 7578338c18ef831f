package keys

import (
	"os"
	"strings"
	"testing"
)

// The keys in docs/tui.md are the defaults: every binding has its row.
func TestDocsListEveryDefaultKey(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/tui.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range Default().Bindings() {
		row := "| `" + b.Help().Key + "` | " + b.Help().Desc + " |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/tui.md has no row %s for %s", row, b.Action)
		}
	}
}
