package conversation

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	agentsv1 "github.com/agents-os/agents/api/gen/agents/v1"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares a rendering with testdata/name.golden. Colours go
// through a fixed 256-colour profile, so the files do not depend on the
// terminal the tests run in.
func golden(t *testing.T, name, got string) {
	t.Helper()
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.ANSI256}
	if _, err := w.WriteString(got); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is right)\n--- got\n%s\n--- want\n%s",
			name, ansi.Strip(b.String()), ansi.Strip(string(want)))
	}
}

const goldenWidth, goldenHeight = 80, 24

func TestRender(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) *rig
	}{
		{"idle", func(t *testing.T) *rig {
			return newRig(t, ready, fewTurns()...).open()
		}},
		{"running_draft_collapsed", func(t *testing.T) *rig {
			r := newRig(t, running, fewTurns()...)
			r.fake.live = &agentsv1.TurnInProgress{TurnIndex: 4, Text: "Reading the test file first"}
			r.open()
			r.typeText("Also keep the old helper")
			r.keys("enter")
			r.typeText("and rename it")
			r.keys("enter")
			return r
		}},
		{"draft_expanded", func(t *testing.T) *rig {
			r := newRig(t, running, fewTurns()...).open()
			r.typeText("Also keep the old helper")
			r.keys("enter")
			r.typeText("and rename it")
			r.keys("enter", "ctrl+r")
			return r
		}},
		{"pending_two_calls", func(t *testing.T) *rig {
			r := newRig(t, waiting, fewTurns()...)
			r.fake.meta.PendingCalls = 2
			r.fake.calls = []*agentsv1.DeferredCall{
				deferred("tok-1", "read_clipboard", `{}`),
				deferred("tok-2", "ask_user", `{"question": "Which branch should I push to?"}`),
			}
			r.open()
			r.keys("ctrl+l", "down")
			return r
		}},
		{"paused", func(t *testing.T) *rig {
			r := newRig(t, paused, fewTurns()...)
			r.fake.meta.PendingMail = 1
			return r.open()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.setup(t)
			out := r.s.Render(goldenWidth, goldenHeight)
			lines := strings.Split(out, "\n")
			if len(lines) != goldenHeight {
				t.Errorf("rendered %d lines, want %d", len(lines), goldenHeight)
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > goldenWidth {
					t.Errorf("line %d is %d cells wide, more than %d: %q", i, w, goldenWidth, ansi.Strip(l))
				}
			}
			golden(t, tc.name, out)
		})
	}
}
