package keys

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t *testing.T, content string) (*Map, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keymap.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path)
}

// A key the whole screen uses (quit's ctrl+c) does that everywhere, so a
// keymap that gives it to another action too is refused: the other
// action would never run, though the Help tab would list it.
func TestKeymapRefusesAKeyOfTheWholeScreenGivenTwice(t *testing.T) {
	t.Parallel()
	_, err := load(t, `{"interrupt": ["ctrl+c"]}`)
	if err == nil || !strings.Contains(err.Error(), `"ctrl+c"`) || !strings.Contains(err.Error(), "quit") || !strings.Contains(err.Error(), "interrupt") {
		t.Fatalf("Load: %v, want ctrl+c named with both its actions", err)
	}
	// Moving quit off it first is the documented way.
	m, err := load(t, `{"quit": ["ctrl+q"], "interrupt": ["ctrl+c"]}`)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if ks := m.Get(Interrupt).Keys(); len(ks) != 1 || ks[0] != "ctrl+c" {
		t.Errorf("interrupt keys %v, want ctrl+c", ks)
	}
	// Keys shared by parts that never have the keyboard at once stay
	// allowed: [ is an older version in Agents and the previous turn.
	if _, err := load(t, `{"prev_turn": ["["]}`); err != nil {
		t.Errorf("Load: %v", err)
	}
}
